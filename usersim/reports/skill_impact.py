"""Group A/B skill_impact_delta (seed 002 双组评测标准).

Group A runs a case with skills off, Group B with its active skills on. Per sub-dimension
(B1-EI, B1-CL ...) the seed requires:
- Group A pass rate >= 70% (the agent's own intent understanding is the floor);
- delta = rate_B - rate_A >= 0, except B1 CL and IF, whose summary target is delta >= -10%;
- exemptions: CL may drop <= 10% when the failures are caused by a skill trigger, IF <= 5%;
  the cases behind an exempted drop are tagged [skill-trigger-override] for skill designers
  to review, and do not count toward skill_negative_rate;
- red line: any sub-dimension with delta < -15% means the skill must be fixed before release.
The exemptions follow the sub-dimension (B1 CL / IF), exactly the cases whose files set
`skills.exempt_from_delta`; so the report needs no extra tag on the record.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from usersim.core.record import RunRecord
from usersim.reports.long_context import mean
from usersim.reports.summary_models import SkillCase, SkillDimension, SkillImpact

OVERRIDE_TAG = "[skill-trigger-override]"
GROUP_A_BAR = 0.70
RED_LINE = -0.15
_EPS = 1e-9  # rates are rounded; keep a drop of exactly 10% inside a 10% allowance


@dataclass(frozen=True)
class DeltaRule:
    """The seed's thresholds for one sub-dimension."""

    target: float  # delta must be >= target (summary table)
    exemption_limit: float | None  # largest exempt drop (exemption table)
    needs_trigger: bool  # exemption holds only when failures come from a skill trigger


_STRICT = DeltaRule(target=0.0, exemption_limit=None, needs_trigger=False)
# B1 特有例外: only these two B1 sub-dimensions may drop.
_B1_RULES = {
    "CL": DeltaRule(target=-0.10, exemption_limit=0.10, needs_trigger=True),
    "IF": DeltaRule(target=-0.10, exemption_limit=0.05, needs_trigger=False),
}


def delta_rule(dimension: str, category: str | None) -> DeltaRule:
    """The thresholds that apply to a sub-dimension (strict `delta >= 0` unless B1 CL/IF)."""
    if dimension == "B1" and category in _B1_RULES:
        return _B1_RULES[category]
    return _STRICT


def _rate(records: list[RunRecord]) -> float | None:
    decided = [r for r in records if r.status in ("passed", "failed")]
    return round(sum(r.status == "passed" for r in decided) / len(decided), 4) if decided else None


def _triggered(record: RunRecord) -> bool:
    return any(e.kind == "triggered" for e in record.skill_events)


def _row_key(record: RunRecord) -> str:
    return f"{record.dimension}-{record.category}" if record.category else record.dimension


def _case(case_id: str, a: list[RunRecord], b: list[RunRecord]) -> SkillCase:
    first = (a or b)[0]
    rate_a, rate_b = _rate(a), _rate(b)
    b_failed = [r for r in b if r.status == "failed"]
    if rate_a is None or rate_b is None:
        diagnosis = "incomplete"
    elif rate_a < 0.5:  # a group "fails" a case when most of its decided repeats failed
        diagnosis = "agent"  # Group A 失败 (alone or with B): fix the model / prompt
    elif rate_b < 0.5:
        diagnosis = "skill"  # Group B 失败 且 Group A 通过: the skill broke intent understanding
    else:
        diagnosis = "ok"
    return SkillCase(
        case_id=case_id,
        dimension=_row_key(first),
        rate_a=rate_a,
        rate_b=rate_b,
        delta=None if rate_a is None or rate_b is None else round(rate_b - rate_a, 4),
        skill_triggered_b=any(_triggered(r) for r in b),
        b_failures_skill_triggered=bool(b_failed) and all(_triggered(r) for r in b_failed),
        diagnosis=diagnosis,
    )


def _pct(x: float) -> str:
    return f"{x * 100:+.0f}%"


def _dimension(key: str, rule: DeltaRule, cases: list[SkillCase], rate_a_floor: float) -> SkillDimension:
    counted = [c for c in cases if c.delta is not None]
    if not counted:
        return SkillDimension(
            dimension=key,
            cases=0,
            target=rule.target,
            exemption_limit=rule.exemption_limit,
            verdict="incomplete",
            note="no case was decided in both groups (not run, unjudged or error)",
        )
    rate_a = mean(c.rate_a for c in counted)
    rate_b = mean(c.rate_b for c in counted)
    delta = round((rate_b or 0.0) - (rate_a or 0.0), 4)
    worse = [c for c in counted if (c.delta or 0) < 0]
    trigger_ok = not rule.needs_trigger or all(c.b_failures_skill_triggered for c in worse)
    within = rule.exemption_limit is not None and -delta <= rule.exemption_limit + _EPS
    exempt = delta < 0 and within and trigger_ok
    red = delta < RED_LINE - _EPS
    notes = []
    if red:
        verdict = "red_line"
        notes.append(
            f"delta {_pct(delta)} < -15%: red line, the skill must be fixed before release (不得上线)"
        )
    elif delta >= 0:
        verdict = "pass"
        notes.append(f"delta {_pct(delta)} >= 0")
    elif exempt:
        verdict = "exempt"
        cause = " and the failures come from a skill trigger" if rule.needs_trigger else ""
        notes.append(
            f"B is {-delta * 100:.0f}% below A, within the {key} exemption (<= {rule.exemption_limit:.0%}){cause}; "
            f"cases tagged {OVERRIDE_TAG}"
        )
    else:
        verdict = "fail"
        if rule.exemption_limit is None:
            notes.append(f"delta {_pct(delta)} < 0: no exemption for this dimension, the skill made it worse")
        elif not within:
            target = "meets" if delta >= rule.target - _EPS else "misses"
            notes.append(
                f"B is {-delta * 100:.0f}% below A: beyond the {rule.exemption_limit:.0%} exemption "
                f"({target} the summary target >= {rule.target:.0%})"
            )
        else:
            notes.append(
                f"B is {-delta * 100:.0f}% below A but a worse case failed without a skill trigger "
                "(Skill 未触发但仍未澄清): not exempt"
            )
    bar_met = None if rate_a is None else rate_a >= rate_a_floor - _EPS
    if bar_met is False:
        notes.append(
            f"Group A {rate_a:.0%} < {rate_a_floor:.0%}: the agent's own intent understanding is below the floor"
        )
    return SkillDimension(
        dimension=key,
        cases=len(counted),
        rate_a=rate_a,
        rate_b=rate_b,
        delta=delta,
        group_a_bar_met=bar_met,
        target=rule.target,
        target_met=delta >= rule.target - _EPS,
        exemption_limit=rule.exemption_limit,
        exempt=exempt,
        red_line=red,
        verdict=verdict,
        note="; ".join(notes),
    )


def skill_impact(records: list[RunRecord]) -> SkillImpact:
    """Pair each case's Group A and Group B conversations and apply the seed's rules."""
    grouped: dict[str, dict[str, list[RunRecord]]] = defaultdict(lambda: {"A": [], "B": []})
    for r in records:
        if r.variant.group in ("A", "B"):
            grouped[r.case_id][r.variant.group].append(r)
    if not grouped:
        return SkillImpact()
    cases = [_case(cid, g["A"], g["B"]) for cid, g in sorted(grouped.items())]
    by_key: dict[str, list[SkillCase]] = defaultdict(list)
    key_info: dict[str, tuple[str, str | None]] = {}
    for g in grouped.values():
        first = (g["A"] or g["B"])[0]
        key_info[_row_key(first)] = (first.dimension, first.category)
    for c in cases:
        by_key[c.dimension].append(c)

    dimensions = []
    for key in sorted(by_key):
        rule = delta_rule(*key_info[key])
        row = _dimension(key, rule, by_key[key], GROUP_A_BAR)
        dimensions.append(row)
        if row.exempt:
            for c in by_key[key]:
                if (c.delta or 0) < 0:
                    c.override = True

    counted = [c for c in cases if c.delta is not None]
    negative = [c for c in counted if (c.delta or 0) < 0 and not c.override]
    tops: dict[str, list[SkillCase]] = defaultdict(list)
    for c in counted:
        tops[key_info[c.dimension][0]].append(c)
    return SkillImpact(
        cases=cases,
        dimensions=dimensions,
        by_dimension={d: mean(c.delta for c in cs) for d, cs in sorted(tops.items())},
        overrides=[c.case_id for c in cases if c.override],
        red_line_dimensions=[d.dimension for d in dimensions if d.red_line],
        skill_negative_rate=round(len(negative) / len(counted), 4) if counted else None,
    )
