"""report.html sections for the seed-specific metrics: A/B skill impact, long context, C1 0-5
rubric, tokens."""

from __future__ import annotations

from html import escape

from usersim.reports.charts import bar_chart, line_chart
from usersim.reports.html_parts import cell, num, pct, raw_cell, section, signed_pct, table, text
from usersim.reports.long_context import LENGTHS, POSITIONS
from usersim.reports.skill_impact import OVERRIDE_TAG
from usersim.reports.summary_models import Accuracy, Summary

_MAX_CASE_LINES = 8  # more lines than this make the gradient chart unreadable; the table has them all


def skill_section(s: Summary) -> str:
    si = s.skill_impact
    if not si.cases:
        return ""
    parts = []
    if si.red_line_dimensions:
        parts.append(
            '<p class="banner">Red line: skill_impact_delta &lt; -15% in '
            f"{escape(', '.join(si.red_line_dimensions))}. The skill design must be fixed before release.</p>"
        )
    rows = [
        [
            cell(d.dimension),
            cell(d.cases),
            raw_cell(pct(d.rate_a), "num"),
            raw_cell(pct(d.rate_b), "num"),
            raw_cell(signed_pct(d.delta), "num"),
            cell({True: "yes", False: "no", None: "—"}[d.group_a_bar_met]),
            raw_cell(f"&ge; {signed_pct(d.target)}"),
            raw_cell("—" if d.exemption_limit is None else f"&le; {pct(d.exemption_limit)} drop"),
            cell(d.verdict, d.verdict),
            cell(d.note),
        ]
        for d in si.dimensions
    ]
    parts.append(
        table(
            [
                "sub-dimension",
                "cases",
                "Group A",
                "Group B",
                "delta",
                "A ≥ 70%",
                "target",
                "exemption",
                "verdict",
                "why",
            ],
            rows,
        )
    )
    parts.append(
        f"<p>skill_negative_rate: <b>{pct(si.skill_negative_rate)}</b> "
        f'<span class="muted">(cases worse with skills, leaving out {escape(OVERRIDE_TAG)} cases)</span>; '
        f"mean delta per dimension: {text({k: signed_pct(v) for k, v in si.by_dimension.items()})}</p>"
    )
    if si.overrides:
        parts.append(
            f"<h3>{escape(OVERRIDE_TAG)} — for skill designers to review the trigger logic</h3>"
            f"<p>{escape(', '.join(si.overrides))}</p>"
        )
    case_rows = [
        [
            cell(c.case_id),
            cell(c.dimension),
            raw_cell(pct(c.rate_a), "num"),
            raw_cell(pct(c.rate_b), "num"),
            raw_cell(signed_pct(c.delta), "num"),
            cell("yes" if c.skill_triggered_b else "no"),
            cell(c.diagnosis, c.diagnosis),
            cell(OVERRIDE_TAG if c.override else ""),
        ]
        for c in si.cases
    ]
    parts.append(
        "<details><summary>Per case</summary>"
        + table(
            ["case", "sub-dimension", "A", "B", "delta", "skill loaded in B", "diagnosis", "flag"], case_rows
        )
        + '<p class="muted">diagnosis: agent = Group A failed (fix the model / prompt); skill = only Group B '
        "failed (fix the skill); ok = both passed.</p></details>"
    )
    return section("Skill impact (Group A skills off / Group B skills on)", "".join(parts), "skill-impact")


def _acc_cell(a: Accuracy | None) -> str:
    """'1/3 = 33.3% (left out: 1 unjudged)' (the gate's rule); '—' when the cell was not run."""
    if a is None:
        return raw_cell("—", "num")
    return raw_cell(escape(a.accuracy_text), "num")


def long_context_section(s: Summary) -> str:
    lc = s.long_context
    if not lc.cases:
        return ""
    body = []
    lengths = [k for k in LENGTHS if k in lc.by_length]
    if lengths:
        series: dict[str, list[float | None]] = {"all cases": [lc.by_length.get(k) for k in lengths]}
        for c in lc.cases[:_MAX_CASE_LINES]:
            series[c.case_id] = [c.by_length.get(k) for k in lengths]
        charts = [
            line_chart("Accuracy (passed / decided) by context length", lengths, series, y_title="accuracy")
        ]
        checked = [c for c in lc.cases if c.lost_in_the_middle is not None][:_MAX_CASE_LINES]
        if checked:
            charts.append(
                bar_chart(
                    "Lost in the middle: accuracy by key-info position, per case",
                    [c.case_id for c in checked],
                    {p: [c.by_position.get(p) for c in checked] for p in POSITIONS},
                    y_title="accuracy",
                )
            )
        body.append(f'<div class="charts">{"".join(charts)}</div>')
        counts = "; ".join(f"{escape(k)} {escape(a.accuracy_text)}" for k, a in lc.length_counts.items())
        body.append(
            "<p>Accuracy is passed / decided, decided = passed + failed + error (unjudged and inconclusive "
            f"runs are left out and counted): {counts}. "
            f"degradation_rate (short - long) / short over all cases: <b>{num(lc.degradation_rate, 3)}</b> "
            '<span class="muted">(lower is better)</span></p>'
        )
    if lc.position_checked or lc.position_incomplete:
        lost = ", ".join(lc.lost_in_the_middle_cases) or "none"
        body.append(
            f"<p>Lost in the middle, per case (from the case's own runs at beginning / middle / end, never pooled "
            f"across cases): <b>{escape(lost)}</b> of {len(lc.position_checked)} case(s) with all three positions."
            + (
                f" No verdict for {len(lc.position_incomplete)} case(s) lacking a position: "
                f"{escape(', '.join(lc.position_incomplete))}."
                if lc.position_incomplete
                else ""
            )
            + "</p>"
        )
    rows = [
        [cell(c.case_id)]
        + [_acc_cell(c.length_counts.get(k)) for k in LENGTHS]
        + [raw_cell(num(c.degradation_rate, 3), "num")]
        + [_acc_cell(c.position_counts.get(p)) for p in POSITIONS]
        + [
            cell({True: "lost in the middle", False: "no", None: "no verdict"}[c.lost_in_the_middle]),
            cell(c.lost_in_the_middle_note),
        ]
        for c in lc.cases
    ]
    body.append(
        table(
            ["case", *LENGTHS, "degradation_rate", *POSITIONS, "lost in the middle", "why"],
            rows,
        )
    )
    return section("Long context (accuracy gradient and position)", "".join(body), "long-context")


def c1_section(s: Summary) -> str:
    """Seed 004's 0-5 C1 skill rubric: score distribution, per dimension and per case."""
    c1 = s.c1_rubric
    if c1 is None:
        return ""
    body = [
        f"<p>{c1.scored} run(s) scored, mean <b>{num(c1.mean_total)}</b> / 5"
        + (
            f"; {c1.unscored} C1 rubric verdict(s) without a score (no judge model or judge error)"
            if c1.unscored
            else ""
        )
        + '. <span class="muted">Informational: seed 004 sets no pass line; each case\'s own Pass/Fail '
        "criteria decide it.</span></p>"
    ]
    if c1.distribution:
        totals = [str(n) for n in range(6)]
        body.append(
            '<div class="charts">'
            + bar_chart(
                "C1 0-5 score distribution (runs per total)",
                totals,
                {"runs": [float(c1.distribution.get(n, 0)) for n in range(6)]},
                percent=False,
                y_title="runs",
            )
            + "</div>"
        )
        body.append(
            table(["total", *totals], [[cell("runs")] + [cell(c1.distribution.get(n, 0)) for n in range(6)]])
        )
    if c1.dimensions:
        body.append(
            "<p>Mean per dimension: "
            + escape(", ".join(f"{d} {num(v)}" for d, v in c1.dimensions.items()))
            + "</p>"
        )
    rows = [
        [cell(c.case_id), cell(len(c.totals)), raw_cell(num(c.mean_total), "num")]
        + [cell(c.distribution.get(n, 0)) for n in range(6)]
        for c in c1.cases
    ]
    body.append(table(["case", "runs", "mean", *[f"={n}" for n in range(6)]], rows))
    return section("C1 skill rubric (seed 004, 0-5)", "".join(body), "c1-rubric")


def token_section(s: Summary) -> str:
    if not s.token_growth:
        return ""
    turns = [str(t.turn) for t in s.token_growth]
    chart = line_chart(
        "Agent context tokens per user turn",
        turns,
        {
            "mean": [t.mean_tokens for t in s.token_growth],
            "max": [float(t.max_tokens) for t in s.token_growth],
        },
        percent=False,
        y_title="tokens",
    )
    rows = [
        [cell(t.turn), cell(t.conversations), cell(t.mean_tokens), cell(t.max_tokens)] for t in s.token_growth
    ]
    body = f'<div class="charts">{chart}</div><details><summary>Table</summary>'
    body += table(["turn", "conversations", "mean tokens", "max tokens"], rows) + "</details>"
    return section("Token growth", body, "tokens")
