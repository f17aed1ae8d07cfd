"""How near an explored conversation came to failing, read from its record, and what the persona
values of a case's conversations say about it (the estimates guided exploration follows).

A failure is 1. A passing conversation adds up what a tester would call a near miss: the score's
shortfall, failing checks that do not decide the status, a give-up or max_turns stop, the simulated
user having to retry, being refused or correcting the agent's proposal, a tool call the sandbox
refused (the agent fumbled, or tried something only the tool stopped; an intercept's planted error
does not count), a scripted event that never came up (the conversation left the path the persona
was written for), a fidelity suspicion or re-simulation, an undecided status. Always below 1.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from usersim.core.record import RunRecord

# sim_events kinds that show the simulated user had to be corrected or refused something
STRAIN = {"retry", "rejected", "stop_refused", "proposal_refused", "guard"}
PRIOR = 1.0  # pseudo-conversations at the case's mean nearness behind every value's estimate


def nearness(record: RunRecord) -> float:
    """1 for a failed or errored conversation; else the near-miss signals of the module doc (< 1)."""
    if record.status in ("failed", "error"):
        return 1.0
    near = 0.0
    if record.score is not None:
        near += 0.5 * (1.0 - record.score)
    near += 0.2 * min(2, sum(v.verdict == "fail" and not v.counts_toward_status for v in record.verdicts))
    if record.stop_reason in ("gave_up", "max_turns"):
        near += 0.2
    if any(e.kind in STRAIN for e in record.sim_events):
        near += 0.15
    near += 0.15 * min(2, sum(e.is_error and not e.intercepted for e in record.tool_trace))
    near += 0.1 * min(2, sum(e.kind == "event_missed" for e in record.sim_events))
    if record.simulator_suspect or len(record.attempts) > 1:
        near += 0.15
    if record.status in ("unjudged", "inconclusive"):
        near += 0.1
    return min(near, 0.99)


def value_estimates(scored: list[tuple[dict[str, Any], float]]) -> tuple[dict[tuple[str, Any], float], float]:
    """Per (axis, value): the mean nearness of the conversations that had it, shrunk towards the mean
    of all (PRIOR pseudo-conversations), so a value seen once near a failure is hot but not certain;
    and that mean (the estimate of a value never tried). `scored`: each conversation's axis levels
    and nearness."""
    if not scored:
        return {}, 0.0
    mean = sum(n for _, n in scored) / len(scored)
    sums: dict[tuple[str, Any], float] = defaultdict(float)
    counts: dict[tuple[str, Any], int] = defaultdict(int)
    for levels, near in scored:
        for item in levels.items():
            sums[item] += near
            counts[item] += 1
    return {item: (sums[item] + PRIOR * mean) / (counts[item] + PRIOR) for item in sums}, mean
