"""Status and blame of a finished attempt (graphs.finalize.decide): `failed` is for the agent's
behaviour only, and a failure is excused only by a high-precision fidelity violation that came at
or before the agent's first failing evidence and could have caused it."""

from __future__ import annotations

import pytest

from usersim.core.events import Stop
from usersim.core.verdict import Verdict
from usersim.graphs.finalize import decide, deciding_attempt


def v(judge: str, verdict: str, counts: bool = True, evidence: int | None = None, **details) -> Verdict:
    return Verdict(
        judge=judge,
        verdict=verdict,
        reason="r",
        counts_toward_status=counts,
        evidence_turn=evidence,
        details=details or None,
    )


def leak(turn: int, precision: str = "high", caused: str = "the agent used the leaked balance") -> Verdict:
    return v(
        "fidelity.leak",
        "fail",
        counts=False,
        precision=precision,
        turn=turn,
        message_index=2 * turn - 2,
        kind="leak",
        caused=caused,
    )


RULE_FAIL = v("keywords", "fail")
RULE_PASS = v("keywords", "pass")
# user turns start at transcript indexes 0, 2, 4, 6 (user, assistant, user, assistant, ...)
STARTS = [0, 2, 4, 6]


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
        # the agent itself broke (crash, malformed reply): error charged to it, whatever the checks say
        ([RULE_FAIL], Stop(reason="agent_error", blame="agent"), ("error", "agent", False)),
        ([RULE_PASS], Stop(reason="agent_error", blame="agent"), ("error", "agent", False)),
        # the test author's code raised
        ([RULE_FAIL], Stop(reason="case_error", blame="case"), ("error", "case", False)),
        # a high-precision violation with no evidence position on the failure: the failure may come later
        ([RULE_FAIL, leak(2)], Stop(reason="goal_met"), ("inconclusive", "simulator", True)),
        # a passing agent stays passed whatever the simulated user did
        ([RULE_PASS, leak(1)], Stop(reason="goal_met"), ("passed", "none", False)),
        ([v("llm_rubric", "error")], Stop(reason="goal_met"), ("error", "infrastructure", False)),
        ([v("llm_rubric", "unjudged")], None, ("unjudged", "none", False)),
    ],
)
def test_decide(verdicts, stop, expected):
    d = decide(verdicts, stop, turn_starts=STARTS, turns=4)
    assert (d.status, d.blame, d.simulator_suspect) == expected


def test_a_violation_before_the_first_failing_evidence_excuses_the_agent():
    d = decide(
        [v("final_state", "fail", evidence=5), leak(2)], Stop(reason="goal_met"), turn_starts=STARTS, turns=4
    )
    assert (d.status, d.blame) == ("inconclusive", "simulator")
    assert "fidelity.leak at user turn 2" in d.suspect_reason and "turn 3" in d.suspect_reason
    assert "the agent used the leaked balance" in d.suspect_reason


def test_a_violation_in_the_same_turn_as_the_failure_excuses_it():
    d = decide(
        [v("tool_called", "fail", evidence=3), leak(2)], Stop(reason="goal_met"), turn_starts=STARTS, turns=4
    )
    assert d.status == "inconclusive"


def test_a_violation_after_the_agent_already_failed_does_not_excuse_it():
    # the agent's wrong call at message 1 (turn 1) came before the user leaked anything (turn 3)
    d = decide(
        [v("tool_called", "fail", evidence=1), leak(3)], Stop(reason="goal_met"), turn_starts=STARTS, turns=4
    )
    assert (d.status, d.blame, d.simulator_suspect) == ("failed", "agent", False)


def test_the_earliest_failing_evidence_counts():
    verdicts = [v("final_state", "fail", evidence=7), v("tool_called", "fail", evidence=1), leak(2)]
    d = decide(verdicts, Stop(reason="goal_met"), turn_starts=STARTS, turns=4)
    assert (d.status, d.blame) == ("failed", "agent")


@pytest.mark.parametrize(
    "fidelity",
    [
        leak(1, precision="advisory"),  # a heuristic: shown, never excusing
        v("fidelity.events", "fail", counts=False),  # a record before fidelity declared precision
        leak(1, caused=""),  # no way it could have caused the failure
        v("fidelity.leak", "fail", counts=False, precision="high", kind="leak", caused="x"),  # no position
        v("fidelity.reveal", "error", counts=False, precision="advisory"),  # a fidelity check that crashed
    ],
)
def test_advisory_or_unplaced_violations_never_excuse_a_failing_agent(fidelity):
    d = decide(
        [v("final_state", "fail", evidence=7), fidelity], Stop(reason="goal_met"), turn_starts=STARTS, turns=4
    )
    assert (d.status, d.blame, d.simulator_suspect) == ("failed", "agent", False)


def test_the_first_clean_attempt_decides_and_all_suspect_is_the_last():
    suspect = decide([RULE_FAIL, leak(1)], None, turn_starts=STARTS, turns=4)
    clean = decide([RULE_FAIL], None, turn_starts=STARTS, turns=4)
    assert deciding_attempt([suspect, clean, suspect]) == 1
    assert deciding_attempt([suspect, suspect, suspect]) == 2
    assert deciding_attempt([clean]) == 0
