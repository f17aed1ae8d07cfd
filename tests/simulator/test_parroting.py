"""The parroting guard: a confirmation that quotes the agent's proposal is the user's own turn; a copy
of the agent's reply, a re-asked question or the agent's voice is not (cases: data/parroting.yaml)."""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path

import pytest
import yaml

from usersim.simulator.guards import parroting

DATA = yaml.safe_load((Path(__file__).parent / "data" / "parroting.yaml").read_text(encoding="utf-8"))


def close(a: str, b: str) -> bool:
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.7


@pytest.mark.parametrize("pair", DATA["answers"], ids=lambda p: p["user"][:40])
def test_an_answer_quoting_the_proposal_is_not_parroting(pair):
    assert close(pair["user"], pair["agent"]), "not a hard case: the old similarity rule passes it too"
    assert parroting(pair["user"], pair["agent"]) is None


@pytest.mark.parametrize("pair", DATA["copies"], ids=lambda p: p["user"][:40])
def test_a_copy_of_the_agent_is_still_parroting(pair):
    ratio = parroting(pair["user"], pair["agent"])
    assert ratio is not None and ratio >= 0.7


def test_the_issue_example_was_rejected_at_087_and_is_now_accepted():
    agent, user = (
        "Do you confirm cancelling reservation 3RK2T9?",
        "Yes, I confirm cancelling reservation 3RK2T9.",
    )
    assert round(SequenceMatcher(None, user, agent, autojunk=False).ratio(), 2) == 0.87
    assert parroting(user, agent) is None
