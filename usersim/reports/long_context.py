"""Long-context metrics (seed 000, C5): accuracy curves, degradation_rate, lost in the middle.

Accuracy is the seed's pass rate, passed / decided; lost in the middle is decided per case from
that case's own runs at beginning / middle / end (records of different cases are never pooled).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from usersim.cases.expand import degradation_rate as shared_degradation_rate
from usersim.core.gate import Tally, pass_rate
from usersim.core.record import RunRecord
from usersim.reports.summary_models import Accuracy, CaseGradient, LongContext

LENGTHS = ("4k", "16k", "32k")
POSITIONS = ("beginning", "middle", "end")


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the non-null values, rounded to 4 places; None when there are none."""
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def degradation_rate(scores_by_length: dict[str, float | None]) -> float | None:
    """Seed 000: degradation_rate = (short - long) / short with short = 4k and long = 32k accuracy.

    Lower is better; negative means the long context did better. None when the 4k baseline or the
    32k value is missing, or the baseline is 0. Delegates to `cases.expand.degradation_rate` (which
    returns short/medium/long accuracy and the rate) so the expander and the report never disagree.
    """
    value = shared_degradation_rate({k: v for k, v in scores_by_length.items() if v is not None})
    rate = value.get("degradation_rate")
    return None if rate is None else round(float(rate), 4)


def accuracy(records: list[RunRecord]) -> Accuracy:
    """Seed 000's accuracy: passed / decided, the gate's rule (decided = passed + failed + error).
    Unjudged and inconclusive conversations are left out and counted beside the rate, never as
    failures (a missing judge is not decay)."""
    tally = Tally.of(r.status for r in records)
    figure = pass_rate(tally)
    return Accuracy(
        records=len(records),
        passed=tally.passed,
        failed=tally.failed,
        unjudged=tally.unjudged,
        error=tally.error,
        inconclusive=tally.inconclusive,
        decided=figure.denominator,
        accuracy=figure.value,
        accuracy_text=figure.text,
        mean_score=mean(r.score for r in records if r.status in ("passed", "failed", "error")),
    )


def _counts(records: list[RunRecord], key: str, names: tuple[str, ...]) -> dict[str, Accuracy]:
    return {
        n: accuracy([r for r in records if getattr(r.variant, key) == n])
        for n in names
        if any(getattr(r.variant, key) == n for r in records)
    }


def _complete(records: list[RunRecord]) -> bool:
    """A decided run at each of the three positions."""
    return all(accuracy([r for r in records if r.variant.position == p]).decided for p in POSITIONS)


def _lost_in_the_middle(rs: list[RunRecord]) -> tuple[bool | None, float | None, str, list[str]]:
    """(verdict, beginning - middle, note, lengths compared) of one case from its own runs.

    Only the context lengths at which this case has a decided run at beginning, middle AND end are
    compared, so a middle run at 32k is never set against a beginning run at 4k."""
    by_len: dict[str, list[RunRecord]] = defaultdict(list)
    for r in rs:
        if r.variant.position:
            by_len[r.variant.length or "-"].append(r)
    if not by_len:
        return None, None, "not run at a key-info position", []
    lengths = [
        k for k in (*LENGTHS, *sorted(set(by_len) - set(LENGTHS))) if k in by_len and _complete(by_len[k])
    ]
    if not lengths:
        ran = {p: accuracy([r for r in rs if r.variant.position == p]) for p in POSITIONS}
        missing = [p for p in POSITIONS if not ran[p].records]
        undecided = [p for p in POSITIONS if ran[p].records and not ran[p].decided]
        why = []
        if missing:
            why.append("no run at " + ", ".join(missing))
        if undecided:
            why.append("nothing decided at " + ", ".join(undecided))
        if not why:
            why.append("beginning, middle and end never decided at the same context length")
        return (
            None,
            None,
            "no verdict: " + "; ".join(why) + " (needs beginning, middle and end of this case)",
            [],
        )
    used = [r for k in lengths for r in by_len[k]]
    pos = {p: accuracy([r for r in used if r.variant.position == p]) for p in POSITIONS}
    begin, middle, end = (pos[p].accuracy for p in POSITIONS)
    lost = middle < begin and middle < end  # type: ignore[operator]
    shown = ", ".join(f"{p} {pos[p].passed}/{pos[p].decided}" for p in POSITIONS)
    verdict = "middle below beginning and end" if lost else "middle not below both ends"
    return lost, round(begin - middle, 4), f"{verdict} ({shown}; at {', '.join(lengths)})", lengths  # type: ignore[operator]


def long_context_stats(records: list[RunRecord]) -> LongContext:
    """Accuracy per length overall and per case, degradation_rate, and lost in the middle per case."""
    lc = [r for r in records if r.variant.length is not None or r.variant.position is not None]
    if not lc:
        return LongContext()
    per_case: dict[str, list[RunRecord]] = defaultdict(list)
    for r in lc:
        per_case[r.case_id].append(r)
    length_counts = _counts(lc, "length", LENGTHS)
    lengths = {k: a.accuracy for k, a in length_counts.items()}

    cases = []
    for case_id in sorted(per_case):
        rs = per_case[case_id]
        c_len = _counts(rs, "length", LENGTHS)
        c_pos = _counts(rs, "position", POSITIONS)
        by_len = {k: a.accuracy for k, a in c_len.items()}
        lost, drop, note, compared = _lost_in_the_middle(rs)
        cases.append(
            CaseGradient(
                case_id=case_id,
                by_length=by_len,
                by_position={p: a.accuracy for p, a in c_pos.items()},
                length_counts=c_len,
                position_counts=c_pos,
                degradation_rate=degradation_rate(by_len),
                middle_drop=drop,
                lost_in_the_middle=lost,
                lost_in_the_middle_note=note,
                position_lengths=compared,
            )
        )
    return LongContext(
        by_length=lengths,
        length_counts=length_counts,
        degradation_rate=degradation_rate(lengths),
        cases=cases,
        lost_in_the_middle_cases=[c.case_id for c in cases if c.lost_in_the_middle],
        position_checked=[c.case_id for c in cases if c.lost_in_the_middle is not None],
        position_incomplete=[c.case_id for c in cases if c.position_counts and c.lost_in_the_middle is None],
    )
