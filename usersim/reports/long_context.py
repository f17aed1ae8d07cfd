"""Long-context metrics (seed 000, C5): gradient curves, degradation_rate, lost-in-the-middle."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from usersim.core.record import RunRecord
from usersim.reports.summary_models import CaseGradient, LongContext

LENGTHS = ("4k", "16k", "32k")
POSITIONS = ("beginning", "middle", "end")


def record_value(record: RunRecord) -> float | None:
    """The number a record contributes to score curves: its score, else 1/0 for passed/failed.

    Unjudged and error conversations contribute nothing: counting them as 0 would turn a missing
    judge into a fake decay.
    """
    if record.score is not None:
        return record.score
    if record.status == "passed":
        return 1.0
    if record.status == "failed":
        return 0.0
    return None


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the non-null values, rounded to 4 places; None when there are none."""
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def _local_degradation_rate(scores_by_length: dict[str, float | None]) -> float | None:
    short, long = scores_by_length.get("4k"), scores_by_length.get("32k")
    if short is None or long is None or short == 0:
        return None  # no baseline, or a zero baseline (nothing left to degrade)
    return round((short - long) / short, 4)


def degradation_rate(scores_by_length: dict[str, float | None]) -> float | None:
    """Seed 000: degradation_rate = (short - long) / short with short = 4k and long = 32k accuracy.

    Lower is better; negative means the long context did better. None when the 4k baseline or the
    32k value is missing, or the baseline is 0. Delegates to `cases.expand.degradation_rate` (which
    returns short/medium/long accuracy and the rate) so the expander and the report never disagree.
    """
    try:
        from usersim.cases.expand import degradation_rate as shared
    except ImportError:  # the expander is optional in a partial build
        return _local_degradation_rate(scores_by_length)
    value = shared({k: v for k, v in scores_by_length.items() if v is not None})
    if isinstance(value, dict):
        value = value.get("degradation_rate")
    return None if value is None else round(float(value), 4)


def long_context_stats(records: list[RunRecord]) -> LongContext:
    """Mean score per length / position / length x position, overall and per case."""
    lc = [r for r in records if r.variant.length is not None]
    if not lc:
        return LongContext()
    by_len: dict[str, list[float | None]] = defaultdict(list)
    by_pos: dict[str, list[float | None]] = defaultdict(list)
    by_len_pos: dict[str, dict[str, list[float | None]]] = defaultdict(lambda: defaultdict(list))
    per_case: dict[str, list[RunRecord]] = defaultdict(list)
    for r in lc:
        v = record_value(r)
        by_len[r.variant.length or ""].append(v)
        if r.variant.position:
            by_pos[r.variant.position].append(v)
            by_len_pos[r.variant.length or ""][r.variant.position].append(v)
        per_case[r.case_id].append(r)

    lengths = {k: mean(by_len[k]) for k in LENGTHS if k in by_len}
    positions = {p: mean(by_pos[p]) for p in POSITIONS if p in by_pos}
    grid = {
        k: {p: mean(by_len_pos[k][p]) for p in POSITIONS if p in by_len_pos[k]}
        for k in LENGTHS
        if k in by_len_pos
    }
    begin, middle, end = (positions.get(p) for p in POSITIONS)
    middle_drop = None if begin is None or middle is None else round(begin - middle, 4)
    lost = None if None in (begin, middle, end) else middle < begin and middle < end  # type: ignore[operator]

    cases = []
    for case_id in sorted(per_case):
        rs = per_case[case_id]
        c_len = {k: mean(record_value(r) for r in rs if r.variant.length == k) for k in LENGTHS}
        c_len = {k: v for k, v in c_len.items() if any(r.variant.length == k for r in rs)}
        c_pos = {p: mean(record_value(r) for r in rs if r.variant.position == p) for p in POSITIONS}
        c_pos = {p: v for p, v in c_pos.items() if any(r.variant.position == p for r in rs)}
        cases.append(
            CaseGradient(
                case_id=case_id, by_length=c_len, by_position=c_pos, degradation_rate=degradation_rate(c_len)
            )
        )
    return LongContext(
        by_length=lengths,
        degradation_rate=degradation_rate(lengths),
        by_position=positions,
        by_length_position=grid,
        middle_drop=middle_drop,
        lost_in_the_middle=lost,
        cases=cases,
    )
