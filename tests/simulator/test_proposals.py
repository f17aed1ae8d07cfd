"""Proposals and confirmation requests in many wordings (data/proposals.yaml) against constraints
from the goal and the opening message: the rule simulator refuses a breach with its reason and says
yes to a proposal meeting every constraint; its verdict is a proposal_accepted / _refused event."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.core.messages import Message
from usersim.personas.schema import Persona
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
