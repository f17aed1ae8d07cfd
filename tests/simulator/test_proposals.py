"""Proposals and confirmation requests in many wordings (data/proposals.yaml) against constraints
from the goal and the opening message: the rule simulator refuses a breach with its reason and says
yes to a proposal meeting every constraint; its verdict is a proposal_accepted / _refused event."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.core.messages import Message
from usersim.personas.schema import Event, Persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator

CASES = yaml.safe_load((Path(__file__).parent / "data" / "proposals.yaml").read_text(encoding="utf-8"))


def _persona(case: dict) -> Persona:
    return Persona.model_validate(
        {
            "id": "p-proposals",
            "name": "Test",
            "language": case["language"],
            "identity": "someone choosing a plan",
            "goal": {
                "description": "pick something that fits",
                "required": ["done"],
                "deliverable_keywords": {"done": ["已为您办理", "all set"]},
                "constraints": case["constraints"],
            },
            "known_info": [{"key": "phone", "value": "13800138000"}],
        }
    )


def _respond(case: dict):
    opening = case.get("opening") or ("你好" if case["language"] == "zh" else "Hi")
    view = SimulatorView(
        case_id="P-1",
        persona=_persona(case),
        opening_message=opening,
        transcript=[
            Message(role="user", content=opening),
            Message(role="assistant", content=case["proposal"]),
        ],
        turn=2,
        max_turns=10,
        seed=1,
    )
    return RuleSimulator().respond(view)


def test_the_data_covers_both_languages_and_both_verdicts():
    assert len(CASES) >= 30
    assert {c["language"] for c in CASES} == {"zh", "en"}
    assert {c["expect"] for c in CASES} == {"accept", "refuse"}


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['expect']}" for i, c in enumerate(CASES)])
def test_proposal_is_accepted_or_refused_with_the_reason(case):
    turn = _respond(case)
    acts = turn.meta["acts"]
    kinds = {e.kind: e.detail for e in turn.events}
    if case["expect"] == "refuse":
        assert "reject" in acts, (case["proposal"], turn.message)
        detail = kinds.get("proposal_refused", "")
        for key in case.get("breaks", []):
            assert f"{key}:" in detail, (detail, turn.message)
        for word in case.get("says", []):
            assert word in turn.message, turn.message
        assert "confirm" not in acts
    else:
        assert "reject" not in acts, (case["proposal"], turn.message, kinds)
        assert "confirm" in acts, (case["proposal"], turn.message, acts)
        assert "proposal_accepted" in kinds and "proposal_refused" not in kinds


def test_an_add_constraint_event_holds_from_the_turn_it_is_said():
    """`add_constraint` with min.<measure> (a limit with its unit) or needs (the need in words)."""
    for slot, value, said in (
        ("min.data", "20 GB", "我还要流量 20G 以上"),
        ("needs", "流量至少要 20G", "流量至少要 20G"),
    ):
        case = {"language": "zh", "constraints": {"max_price": 100}, "proposal": ""}
        p = _persona(case).model_copy(
            update={"events": [Event(at_turn=2, kind="add_constraint", slot=slot, value=value, text=said)]}
        )
        offer = "推荐 58 元套餐，每月 58 元，15GB 流量，要我帮您办理吗？"
        transcript = [
            Message(role="user", content="你好"),
            Message(role="assistant", content="请问有什么需要？"),
            Message(role="user", content=said),
            Message(role="assistant", content=offer),
        ]
        before = RuleSimulator().respond(_view(p, transcript[:2], 2))
        assert before.meta["constraints"]["min"] == {"data": "20 GB" if slot == "min.data" else "20G"}
        turn = RuleSimulator().respond(_view(p, transcript, 3))
        assert "reject" in turn.meta["acts"], turn.message
        assert "15GB" in turn.message and "20" in turn.message
        assert any(e.kind == "proposal_refused" and "min:" in e.detail for e in turn.events)


def _view(p: Persona, transcript: list[Message], turn: int) -> SimulatorView:
    return SimulatorView(
        case_id="P-2",
        persona=p,
        opening_message="你好",
        transcript=transcript,
        turn=turn,
        max_turns=10,
        seed=1,
    )
