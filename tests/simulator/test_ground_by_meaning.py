"""The rule simulator grounds an agent's question in the persona's facts by meaning (cases in
data/ground_by_meaning.yaml): facts without aliases answered however the agent words the question,
several requests of one turn each answered, "I don't know" only for unknown_info."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator

DATA = yaml.safe_load((Path(__file__).parent / "data" / "ground_by_meaning.yaml").read_text(encoding="utf-8"))


def persona(name: str) -> Persona:
    spec = DATA["personas"][name]
    zh = spec["language"] == "zh"
    return Persona.model_validate(
        {
            "id": name,
            "name": "王敏" if zh else "Priya Raman",
            "language": spec["language"],
            "identity": "员工" if zh else "An employee with a broken laptop.",
            "traits": {"cooperativeness": "high"},
            "opening_message": "我的电脑坏了" if zh else "Hi, my laptop is broken.",
            "goal": {
                "description": "repair",
                "required": ["repair"],
                "deliverable_keywords": {"repair": ["ticket T-"]},
            },
            "known_info": spec["known_info"],
            "unknown_info": spec.get("unknown_info", []),
        }
    )


def reply(p: Persona, question: str) -> tuple[str, list[str]]:
    transcript = [
        Message(role="user", content=p.opening_message),
        Message(role="assistant", content=question),
    ]
    view = SimulatorView(case_id="G-1", persona=p, transcript=transcript, turn=2, max_turns=10, seed=0)
    turn = RuleSimulator().respond(view)
    return turn.message or "", turn.meta["acts"]


CASES = DATA["questions"]


def test_the_data_is_broad() -> None:
    assert len(CASES) >= 30
    assert {DATA["personas"][c["persona"]]["language"] for c in CASES} == {"en", "zh"}


@pytest.mark.parametrize("case", CASES, ids=[c["ask"][:40] for c in CASES])
def test_question_answered_with_the_fact(case: dict) -> None:
    p = persona(case["persona"])
    values = {f.slot: f.value for f in p.known_info}
    message, acts = reply(p, case["ask"])
    if case.get("dont_know"):
        assert "dont_know" in acts, (case["ask"], message)
        assert not any(v in message for v in values.values()), message
        return
    wanted = case.get("answers") or [case["answer"]]
    for key in wanted:
        assert values[key] in message, f"{case['ask']!r} -> {message!r} (wanted {key})"
    others = [v for k, v in values.items() if k not in wanted]
    assert not any(v in message for v in others), f"{case['ask']!r} -> {message!r}: answered more than asked"
    assert "dont_know" not in acts and "generic" not in acts, (case["ask"], message, acts)
