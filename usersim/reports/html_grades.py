"""report.html sections for seed 003's graded levels (the distribution per dimension and scale) and
seed 001's complexity curve (success rate against task steps), from summary.json's `grades` and
`complexity`."""

from __future__ import annotations

from html import escape

from usersim.reports.charts import line_chart
from usersim.reports.html_parts import cell, num, pct, section, table
from usersim.reports.summary_models import Summary

_SCALES = {
    "conflict": "conflict handling (冲突处理)",
    "implicit_conflict": "implicit conflict (隐性冲突)",
    "reference": "reference resolution (指代消解)",
    "topic_switch": "topic switch (话题切换)",
}


def grades_section(s: Summary) -> str:
    """ "Graded levels": one table per dimension and scale, a row per level with its points and count."""
    if not s.grades:
        return ""
    parts = [
        "<p>Seed 003's graded scores: each conversation's level as the <code>graded</code> check read the "
        "agent's reply (uncertain ones are unjudged, escalated to the LLM judge when one is configured).</p>"
    ]
    for g in s.grades:
        rows = [
            [cell(lv.name), cell(lv.level), cell(lv.points, "num"), cell(lv.count, "num")] for lv in g.levels
        ]
        if g.uncertain:
            llm = ", ".join(f"{n} {k}" for k, n in g.escalated.items())
            label = "uncertain" + (f" (LLM judge: {llm})" if llm else "")
            rows.append([cell(label), cell("—"), cell("—"), cell(g.uncertain, "unjudged")])
        parts.append(
            f"<h3>{escape(g.dimension)} · {escape(_SCALES.get(g.scale, g.scale))}</h3>"
            f"<p>{g.conversations} conversations, {g.passed} at or above their pass line, mean "
            f"{escape(num(g.mean_points, 1))} points.</p>"
            + table(["level", "code", "points", "conversations"], rows)
        )
    return section("Graded levels", "".join(parts), "grades")


def complexity_section(s: Summary) -> str:
    """ "Complexity curve": success rate by task steps (a line per dimension) and its table."""
    if not s.complexity:
        return ""
    steps = sorted({p.steps for c in s.complexity for p in c.points})
    series: dict[str, list[float | None]] = {}
    for c in s.complexity:
        by = {p.steps: p.success_rate for p in c.points}
        series[c.dimension] = [by.get(n) for n in steps]
    chart = line_chart(
        "Success rate by task steps",
        [str(n) for n in steps],
        series,
        y_title="success rate",
        x_values=[float(n) for n in steps],
    )
    rows = [
        [
            cell(c.dimension),
            cell(p.steps, "num"),
            cell(", ".join(p.cases)),
            cell(f"{p.passed}/{p.judged}", "num"),
            cell(pct(p.success_rate), "num"),
            cell(num(p.mean_score), "num"),
        ]
        for c in s.complexity
        for p in c.points
    ]
    body = (
        "<p>Seed 001 复杂度衰减曲线: how success falls as tasks need more steps (the cases' <code>steps</code>).</p>"
        + chart
        + table(["dimension", "steps", "cases", "passed/judged", "success rate", "mean score"], rows)
    )
    return section("Complexity curve", body, "complexity")
