"""One line per conversation saying what decided it: used by the CLI table and by test failures."""

from __future__ import annotations

from usersim.core.record import RunRecord


def deciding_reason(r: RunRecord) -> str:
    """The verdict (or error) that decided a record's status, in words."""
    deciding = [v for v in r.verdicts if v.counts_toward_status]
    worst = next((v for v in deciding if v.verdict in ("fail", "error")), None) or next(
        (v for v in deciding if v.verdict in ("unjudged", "inconclusive")), None
    )
    if r.error:
        return r.error
    if r.status == "error" and r.stop_reason in ("agent_error", "simulator_error", "case_error"):
        # the crash or the invalid simulator output decided, not the verdicts on the cut-short transcript
        return f"{r.stop_reason}: {r.stop_detail}"
    if r.status == "inconclusive" and r.suspect_reason:
        return f"simulator-suspect in every attempt: {r.suspect_reason}"
    if worst:
        return f"{worst.judge}: {worst.reason}"
    if r.stop_reason in ("agent_error", "simulator_error", "case_error"):
        return f"{r.stop_reason}: {r.stop_detail}"
    return f"{len(deciding)}/{len(deciding)} deciding verdicts pass; stop: {r.stop_reason}"


def outcome_line(r: RunRecord) -> str:
    """`id  status  score  turns  reason` for one record."""
    score = "-" if r.score is None else f"{r.score:.2f}"
    return f"{r.id:<40} {r.status:<9} score={score:<5} turns={r.turns:<3} {deciding_reason(r)[:110]}"
