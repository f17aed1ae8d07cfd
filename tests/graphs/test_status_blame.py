"""Status and blame of a finished conversation: `failed` is for the agent's behaviour only."""

from __future__ import annotations

import pytest

from usersim.core.events import Stop
from usersim.core.verdict import Verdict
from usersim.graphs.runner import decide_status


def v(judge: str, verdict: str, counts: bool = True) -> Verdict:
    return Verdict(judge=judge, verdict=verdict, reason="r", counts_toward_status=counts)


RULE_FAIL = v("keywords", "fail")
RULE_PASS = v("keywords", "pass")
FIDELITY_FAIL = v("fidelity.leak", "fail", counts=False)


@pytest.mark.parametrize(
    ("verdicts", "stop", "expected"),
    [
        ([RULE_PASS], Stop(reason="goal_met"), ("passed", "none", False)),
        ([RULE_FAIL], Stop(reason="gave_up"), ("failed", "agent", False)),
        # the simulator produced no valid turn: the rule checks on the truncated conversation do not count
        ([RULE_FAIL], Stop(reason="simulator_error", blame="simulator"), ("error", "simulator", False)),
        (
            [RULE_FAIL],
            Stop(reason="simulator_error", blame="infrastructure"),
            ("error", "infrastructure", False),
        ),
        # the agent's endpoint stayed down: an outage, not a failure
        ([RULE_FAIL], Stop(reason="agent_error", blame="infrastructure"), ("error", "infrastructure", False)),
        # the agent itself broke (malformed tool call): its failure stands, otherwise an error charged to it
        ([RULE_FAIL], Stop(reason="agent_error", blame="agent"), ("failed", "agent", False)),
        ([RULE_PASS], Stop(reason="agent_error", blame="agent"), ("error", "agent", False)),
        # an unfaithful simulated user: the failure is charged to the simulator
        ([RULE_FAIL, FIDELITY_FAIL], Stop(reason="goal_met"), ("failed", "simulator", True)),
        ([RULE_PASS, FIDELITY_FAIL], Stop(reason="goal_met"), ("passed", "none", True)),
        ([v("llm_rubric", "error")], Stop(reason="goal_met"), ("error", "infrastructure", False)),
        ([v("llm_rubric", "unjudged")], None, ("unjudged", "none", False)),
    ],
)
def test_decide_status(verdicts, stop, expected):
    assert decide_status(verdicts, stop) == expected
