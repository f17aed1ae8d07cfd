"""An open question ("Anything else?", "还有什么需要吗？") is answered with the goal items not yet
delivered, in the user's words; a question about a need the user stated only in its own opening is
answered with that clause, never "这个我没什么要求" (cases in data/open_questions.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator

DATA = yaml.safe_load((Path(__file__).parent / "data" / "open_questions.yaml").read_text(encoding="utf-8"))
SHRUGS = [
    "Not sure about",
    "没什么要求",
    "I don't mind",
    "don't know",
    "不知道",
    "看着办",
    "No strong preference",
]


def persona(name: str) -> Persona:
    spec = DATA["personas"][name]
    return Persona.model_validate(
        {
            "id": name,
            "name": "Sam",
            "language": spec["language"],
            "identity": "a customer",
            "traits": {"patience": "high"},
            "opening_message": spec["opening_message"],
            "goal": spec["goal"],
        }
    )


def reply(p: Persona, question: str, seed: int = 0) -> tuple[str, list[str]]:
    transcript = [
        Message(role="user", content=p.opening_message),
        Message(role="assistant", content=question),
    ]
    view = SimulatorView(case_id="O-1", persona=p, transcript=transcript, turn=2, max_turns=10, seed=seed)
    turn = RuleSimulator().respond(view)
    return turn.message or "", turn.meta["acts"]


@pytest.mark.parametrize("case", DATA["open"], ids=[c["ask"][:30] for c in DATA["open"]])
def test_open_question_restates_what_is_still_needed(case: dict) -> None:
    p = persona(case["persona"])
    for seed in (0, 1, 2):
        message, acts = reply(p, case["ask"], seed)
        for name in DATA["personas"][case["persona"]]["names"]:
            assert name in message, f"{case['ask']!r} -> {message!r} (missing {name!r})"
        for key in p.goal.required:
            assert key not in message or key in " ".join(DATA["personas"][case["persona"]]["names"]), message
        assert not any(s in message for s in SHRUGS), message
        assert not message.rstrip().endswith(("?", "？")), f"a restated need is a statement: {message!r}"


def test_open_question_names_only_what_is_not_delivered() -> None:
    p = persona("helpdesk_en")
    transcript = [
        Message(role="user", content=p.opening_message),
        Message(role="assistant", content="Your ticket T-104 is open. Anything else?"),
    ]
    view = SimulatorView(case_id="O-2", persona=p, transcript=transcript, turn=2, max_turns=10, seed=0)
    message = RuleSimulator().respond(view).message or ""
    assert "a loaner laptop" in message and "the repair ticket" not in message, message


@pytest.mark.parametrize("case", DATA["recall"], ids=[c["ask"][:30] for c in DATA["recall"]])
def test_question_about_the_opening_repeats_it(case: dict) -> None:
    message, acts = reply(persona(case["persona"]), case["ask"])
    assert case["said"] in message, f"{case['ask']!r} -> {message!r}"
    assert "repeat_said" in acts
    assert not any(s in message for s in SHRUGS), message


def test_same_seed_same_words() -> None:
    p = persona("plan_zh")
    assert reply(p, "还有什么需要吗？", 7) == reply(p, "还有什么需要吗？", 7)
