"""report.html sections for the seed-specific metrics: A/B skill impact, long context, decay, tokens."""

from __future__ import annotations

from html import escape

from usersim.reports.charts import bar_chart, line_chart
from usersim.reports.html_parts import cell, num, pct, raw_cell, section, signed_pct, table, text
from usersim.reports.long_context import LENGTHS, POSITIONS
from usersim.reports.skill_impact import OVERRIDE_TAG
from usersim.reports.summary_models import Summary

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


def long_context_section(s: Summary) -> str:
    lc = s.long_context
    if not lc.by_length:
        return ""
    lengths = [k for k in LENGTHS if k in lc.by_length]
    series: dict[str, list[float | None]] = {"all cases": [lc.by_length.get(k) for k in lengths]}
    for c in lc.cases[:_MAX_CASE_LINES]:
        series[c.case_id] = [c.by_length.get(k) for k in lengths]
    charts = [line_chart("Mean score by context length", lengths, series, y_title="score")]
    if lc.by_length_position:
        grid_lengths = [k for k in LENGTHS if k in lc.by_length_position]
        positions = [p for p in POSITIONS if any(p in lc.by_length_position[k] for k in grid_lengths)]
        charts.append(
            bar_chart(
                "Lost in the middle: mean score by key-info position",
                grid_lengths,
                {p: [lc.by_length_position[k].get(p) for k in grid_lengths] for p in positions},
                y_title="score",
            )
        )
    body = [f'<div class="charts">{"".join(charts)}</div>']
    body.append(
        f"<p>degradation_rate (short - long) / short over all cases: <b>{num(lc.degradation_rate, 3)}</b> "
        '<span class="muted">(lower is better)</span>'
        + (f"; beginning - middle: <b>{signed_pct(lc.middle_drop)}</b>" if lc.middle_drop is not None else "")
        + {
            True: " — <b>lost in the middle</b>: the middle position scored below both beginning and end",
            False: " — no lost-in-the-middle pattern (middle not below both beginning and end)",
            None: "",
        }[lc.lost_in_the_middle]
        + "</p>"
    )
    rows = [
        [cell(c.case_id)]
        + [raw_cell(num(c.by_length.get(k)), "num") for k in LENGTHS]
        + [raw_cell(num(c.by_position.get(p)), "num") for p in POSITIONS]
        + [raw_cell(num(c.degradation_rate, 3), "num")]
        for c in lc.cases
    ]
    body.append(table(["case", *LENGTHS, *POSITIONS, "degradation_rate"], rows))
    return section("Long context (gradient and position)", "".join(body), "long-context")


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
