"""report.html sections for the seed-specific metrics: A/B skill impact, long context, decay, tokens."""

from __future__ import annotations

from html import escape
from typing import Any

from reports.charts import bar_chart, line_chart
from reports.html_parts import cell, num, pct, raw_cell, section, signed_pct, table, text
from reports.long_context import LENGTHS, POSITIONS
from reports.skill_impact import OVERRIDE_TAG
from reports.summary_models import Summary

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
            cell(d.dimension), cell(d.cases), raw_cell(pct(d.rate_a), "num"), raw_cell(pct(d.rate_b), "num"),
            raw_cell(signed_pct(d.delta), "num"),
            cell({True: "yes", False: "no", None: "—"}[d.group_a_bar_met]),
            raw_cell(f"&ge; {signed_pct(d.target)}"),
            raw_cell("—" if d.exemption_limit is None else f"&le; {pct(d.exemption_limit)} drop"),
            cell(d.verdict, d.verdict), cell(d.note),
        ]
        for d in si.dimensions
    ]
    parts.append(
        table(["sub-dimension", "cases", "Group A", "Group B", "delta", "A ≥ 70%", "target", "exemption",
               "verdict", "why"], rows)
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
            cell(c.case_id), cell(c.dimension), raw_cell(pct(c.rate_a), "num"), raw_cell(pct(c.rate_b), "num"),
            raw_cell(signed_pct(c.delta), "num"), cell("yes" if c.skill_triggered_b else "no"),
            cell(c.diagnosis, c.diagnosis), cell(OVERRIDE_TAG if c.override else ""),
        ]
        for c in si.cases
    ]
    parts.append(
        "<details><summary>Per case</summary>"
        + table(["case", "sub-dimension", "A", "B", "delta", "skill loaded in B", "diagnosis", "flag"], case_rows)
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
        + (
            f"; beginning - middle: <b>{signed_pct(lc.middle_drop)}</b>"
            if lc.middle_drop is not None
            else ""
        )
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


def _point_lists(decay: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Curves in decay.json: top-level lists of point dicts, or a dict of such lists."""
    found: dict[str, list[dict[str, Any]]] = {}
    for key, value in decay.items():
        if isinstance(value, list) and value and all(isinstance(p, dict) for p in value):
            found[key] = value
        elif isinstance(value, dict):
            for sub, points in value.items():
                if isinstance(points, list) and points and all(isinstance(p, dict) for p in points):
                    found[f"{key}: {sub}"] = points
    return found


def _x_key(points: list[dict[str, Any]]) -> str | None:
    for key in ("turns", "turn", "n_turns", "turn_count"):
        if all(key in p for p in points):
            return key
    return None


def decay_section(decay: dict[str, Any] | None) -> str:
    """Decay curves from DIR/decay.json (any list of points with a `turns` key, one line per metric)."""
    if not decay:
        return ""
    charts, tables = [], []
    for name, points in _point_lists(decay).items():
        x_key = _x_key(points)
        metrics = sorted(
            {k for p in points for k, v in p.items() if k != x_key and isinstance(v, (int, float))
             and not isinstance(v, bool)}
        )
        if x_key is None or not metrics:
            continue
        ordered = sorted(points, key=lambda p: p[x_key])
        series = {m: [p.get(m) for p in ordered] for m in metrics}
        values = [v for vs in series.values() for v in vs if v is not None]
        percent = all(0 <= v <= 1 for v in values)
        charts.append(
            line_chart(f"Decay: {name}", [str(p[x_key]) for p in ordered], series, percent=percent, y_title=x_key)
        )
    for key, value in decay.items():
        if isinstance(value, dict) and not any(k.startswith(f"{key}: ") for k in _point_lists(decay)):
            tables.append(f"<h3>{escape(key)}</h3>" + table(["", "value"], [[cell(k), cell(v)] for k, v in value.items()]))
    scalars = [[cell(k), cell(v)] for k, v in decay.items() if not isinstance(v, (dict, list))]
    if scalars:
        tables.append(table(["", "value"], scalars))
    body = (f'<div class="charts">{"".join(charts)}</div>' if charts else "") + "".join(tables)
    return section("Decay curves (decay.json)", body or '<p class="muted">decay.json has no curves.</p>', "decay")


def token_section(s: Summary) -> str:
    if not s.token_growth:
        return ""
    turns = [str(t.turn) for t in s.token_growth]
    chart = line_chart(
        "Agent context tokens per user turn",
        turns,
        {"mean": [t.mean_tokens for t in s.token_growth], "max": [float(t.max_tokens) for t in s.token_growth]},
        percent=False,
        y_title="tokens",
    )
    rows = [[cell(t.turn), cell(t.conversations), cell(t.mean_tokens), cell(t.max_tokens)] for t in s.token_growth]
    body = f'<div class="charts">{chart}</div><details><summary>Table</summary>'
    body += table(["turn", "conversations", "mean tokens", "max tokens"], rows) + "</details>"
    return section("Token growth", body, "tokens")
