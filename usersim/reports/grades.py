"""Seed 003's graded levels and seed 001's complexity curve, computed from a run's records.

`grade_distributions`: per dimension and grading scale, how many conversations reached each level
of the `graded` check (立即纠正 / 确认后纠正 / 部分纠正 / 不纠正, 隐性冲突识别 / 忽略, the reference and
topic-switch scenarios), the uncertain ones apart, and the mean points.
`complexity_curves`: per dimension, the success rate against the cases' task steps (`steps`, or a
`complexity-N` tag in records written before the field) — 随任务步骤数增加，成功率如何衰减.
"""

from __future__ import annotations

import re
from collections import defaultdict

from usersim.cases.grading import GRADING_SCALES
from usersim.core.record import RunRecord
from usersim.reports.summary_models import (
    ComplexityCurve,
    ComplexityPoint,
    GradeDistribution,
    GradeLevelCount,
)

_COMPLEXITY_TAG = re.compile(r"^complexity-(\d+)$")


def grade_distributions(records: list[RunRecord]) -> list[GradeDistribution]:
    """One distribution per (dimension, scale) that has a graded verdict in the run."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        for v in r.verdicts:
            details = v.details or {}
            if v.judge != "graded":
                continue
            if details.get("escalated"):  # uncertain, decided by the LLM judge: pass / fail, no level
                rule = details.get("rule_details") or {}
                details = {**rule, "level": "uncertain", "escalated": v.verdict}
            if details.get("scale") in GRADING_SCALES:
                groups[(r.dimension, details["scale"])].append({"case": r.case_id, **details})
    out = []
    for (dim, scale), items in sorted(groups.items()):
        counts = {lv.code: 0 for lv in GRADING_SCALES[scale]}
        decided = [d for d in items if d.get("level") in counts]
        for d in decided:
            counts[d["level"]] += 1
        points = [d["points"] for d in decided if isinstance(d.get("points"), int)]
        out.append(
            GradeDistribution(
                dimension=dim,
                scale=scale,
                conversations=len(items),
                uncertain=len(items) - len(decided),
                escalated={
                    k: sum(1 for d in items if d.get("escalated") == k)
                    for k in ("pass", "fail")
                    if any(d.get("escalated") == k for d in items)
                },
                passed=sum(1 for d in decided if d["points"] >= d.get("pass_at", 0)),
                mean_points=round(sum(points) / len(points), 2) if points else None,
                levels=[
                    GradeLevelCount(level=lv.code, name=lv.name, points=lv.points, count=counts[lv.code])
                    for lv in GRADING_SCALES[scale]
                ],
                cases=sorted({d["case"] for d in items}),
            )
        )
    return out


def steps_of(record: RunRecord) -> int | None:
    """The record's task steps: its `steps` field, else a `complexity-N` tag."""
    if record.steps is not None:
        return record.steps
    for t in record.tags:
        m = _COMPLEXITY_TAG.match(t)
        if m:
            return int(m.group(1))
    return None


def complexity_curves(records: list[RunRecord]) -> list[ComplexityCurve]:
    """Success rate against task steps, per dimension with at least two step counts."""
    from usersim.reports.summary import rate  # the gate's pass rate (passed / judged)

    by_dim: dict[str, dict[int, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        steps = steps_of(r)
        if steps is not None:
            by_dim[r.dimension][steps].append(r)
    curves = []
    for dim, by_steps in sorted(by_dim.items()):
        if len(by_steps) < 2:
            continue  # one step count is no curve
        points = []
        for steps, rs in sorted(by_steps.items()):
            rt = rate(rs)
            points.append(
                ComplexityPoint(
                    steps=steps,
                    cases=sorted({r.case_id for r in rs}),
                    conversations=len(rs),
                    passed=rt.passed,
                    judged=rt.judged,
                    success_rate=rt.pass_rate,
                    mean_score=rt.mean_score,
                )
            )
        curves.append(ComplexityCurve(dimension=dim, points=points))
    return curves
