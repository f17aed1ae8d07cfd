"""Recall by value type (data/recall_by_value.yaml, en and zh): a question about something the
user said only in its opening, sharing no word with it ("你们打算玩几天？" after "玩5天", "How
long is the trip?" after "for 5 days"), is answered with the user's own words."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator

CASES = yaml.safe_load((Path(__file__).parent / "data" / "recall_by_value.yaml").read_text(encoding="utf-8"))


def _persona(language: str) -> Persona:
    return Persona.model_validate(
        {
            "id": "recall",
            "name": "Test",
            "language": language,
            "identity": "someone planning something",
            "goal": {
                "description": "get a plan",
                "required": ["plan"],
                "deliverable_keywords": {"plan": ["Day 1"]},
            },
            "known_info": [{"key": "email", "value": "t@example.com"}],
        }
    )


def test_the_data_covers_both_languages():
    assert {c["language"] for c in CASES} == {"zh", "en"} and len(CASES) >= 12


@pytest.mark.parametrize("case", CASES, ids=[c["question"] for c in CASES])
def test_the_users_own_words_answer_a_question_by_value_type(case: dict):
    p = _persona(case["language"])
    view = SimulatorView(
        case_id="R-1",
        persona=p,
        opening_message=case["opening"],
        transcript=[
            Message(role="user", content=case["opening"]),
            Message(role="assistant", content=case["question"]),
        ],
        turn=2,
        max_turns=10,
        seed=5,
    )
    turn = RuleSimulator().respond(view)
    for words in case["says"]:
        assert words in turn.message, turn.message
    assert turn.meta["acts"][0] == "repeat_said", turn.meta
