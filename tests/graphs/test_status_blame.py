"""Status and blame of a finished conversation: `failed` is for the agent's behaviour only."""

from __future__ import annotations

import pytest

from usersim.core.events import Stop
from usersim.core.verdict import Verdict
from usersim.graphs.runner import decide_status


def v(judge: str, verdict: str, counts: bool = True, precision: str | None = None) -> Verdict:
    details = {"precision": precision, "turn": 2, "message_index": 2, "kind": "leak"} if precision else None
    return Verdict(judge=judge, verdict=verdict, reason="r", counts_toward_status=counts, details=details)


RULE_FAIL = v("keywords", "fail")
RULE_PASS = v("keywords", "pass")
FIDELITY_FAIL = v("fidelity.leak", "fail", counts=False, precision="high")
ADVISORY_FAIL = v("fidelity.events", "fail", counts=False, precision="advisory")
FIDELITY_ERROR = v("fidelity.reveal", "error", counts=False, precision="advisory")


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
        # an unfaithful simulated user (a high-precision violation): the failure is charged to the simulator
        ([RULE_FAIL, FIDELITY_FAIL], Stop(reason="goal_met"), ("failed", "simulator", True)),
        ([RULE_PASS, FIDELITY_FAIL], Stop(reason="goal_met"), ("passed", "none", True)),
        # a heuristic (advisory) finding, or an old verdict without details, never excuses the agent
        ([RULE_FAIL, ADVISORY_FAIL], Stop(reason="goal_met"), ("failed", "agent", False)),
        (
            [RULE_FAIL, v("fidelity.leak", "fail", counts=False)],
            Stop(reason="goal_met"),
            ("failed", "agent", False),
        ),
        # a fidelity check that crashed is an error on that check, not a suspect and not the run's error
        ([RULE_FAIL, FIDELITY_ERROR], Stop(reason="goal_met"), ("failed", "agent", False)),
        ([RULE_PASS, FIDELITY_ERROR], Stop(reason="goal_met"), ("passed", "none", False)),
        ([v("llm_rubric", "error")], Stop(reason="goal_met"), ("error", "infrastructure", False)),
        ([v("llm_rubric", "unjudged")], None, ("unjudged", "none", False)),
    ],
)
def test_decide_status(verdicts, stop, expected):
    assert decide_status(verdicts, stop) == expected
