"""Verdicts: what a judge decided about one criterion, and why."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

VerdictValue = Literal["pass", "fail", "inconclusive", "unjudged", "error"]
Status = Literal["passed", "failed", "error", "unjudged", "inconclusive"]


class Verdict(BaseModel):
    """One judge's decision on one criterion."""

    model_config = ConfigDict(extra="forbid")

    judge: str = Field(description="Judge / check name, e.g. tool_called, llm_rubric, drift.")
    verdict: VerdictValue = Field(description="pass | fail | inconclusive | unjudged | error.")
    reason: str = Field(description="Why, in words a user can check against the transcript.")
    criterion: str | None = Field(
        default=None, description="The criterion judged (rubric text or check spec)."
    )
    score: float | None = Field(
        default=None, ge=0, le=1, description="Partial credit 0..1 where the judge gives one."
    )
    evidence_turn: int | None = Field(default=None, description="Transcript index of the deciding message.")
    counts_toward_status: bool = Field(
        default=True,
        description="False for informational verdicts (drift curve, fidelity) that never decide status.",
    )
    details: dict[str, Any] | None = Field(
        default=None, description="Judge-specific data (drift curve, milestone map ...)."
    )


def combine_status(verdicts: list[Verdict]) -> Status:
    """A conversation's status: any fail -> failed; else any error -> error; else any unjudged or
    inconclusive -> unjudged; else passed. An empty list is unjudged (nothing decided it)."""
    deciding = [v for v in verdicts if v.counts_toward_status]
    if not deciding:
        return "unjudged"
    values = {v.verdict for v in deciding}
    if "fail" in values:
        return "failed"
    if "error" in values:
        return "error"
    if values & {"unjudged", "inconclusive"}:
        return "unjudged"
    return "passed"


def combine_score(verdicts: list[Verdict]) -> float | None:
    """Mean of the deciding verdicts' scores (pass=1, fail=0 when a judge gives no score);
    None when nothing was decided."""
    vals: list[float] = []
    for v in verdicts:
        if not v.counts_toward_status or v.verdict not in ("pass", "fail"):
            continue
        vals.append(v.score if v.score is not None else (1.0 if v.verdict == "pass" else 0.0))
    return round(sum(vals) / len(vals), 4) if vals else None
