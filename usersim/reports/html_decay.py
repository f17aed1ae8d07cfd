"""The decay section of report.html (seed 003): DIR/decay.json as `usersim decay` writes it.

decay.json holds one curve per test (memory / reference / switch / conflict / drift) with points
{turns, score, mean_context_tokens, mean_agent_tokens, expected_min ...}, the breakpoint of each
curve under the seed's own term (memory half-life, reference fail point, stable-interval lower
bound), the SLA marks (a dashed line on the chart; the points below it named in the table) and the
system configuration measured. `usersim decay --strategies` writes a comparison (kind
"strategies"): the seed's strategy table, then each strategy's curves (html_decay_compare).
A file of another shape still renders: every list of points with a `turns` key becomes a chart.
"""

from __future__ import annotations

from html import escape
from typing import Any

from usersim.reports.charts import line_chart
from usersim.reports.html_parts import cell, pct, section, table

_MEASURES = {
    "half_life": "memory half-life (半衰期)",
    "fail_point": "reference fail point (失效点)",
    "stable_lower": "stable interval lower bound (稳定区间下限)",
}
_X_KEYS = ("turns", "turn", "n_turns", "turn_count")
NAMES = {
    "memory": "信息记忆准确率",
    "reference": "指代消解准确率",
    "switch": "话题切换恢复率",
    "conflict": "冲突处理正确率",
    "drift": "语义漂移检测率（理解一致性保持）",
}


def sla_label(mark: dict[str, Any]) -> str:
    who = f"{mark['scenario']} " if mark.get("scenario") else ""
    return f"{who}≥ {mark.get('min_score', 0):.0%} @ {mark.get('at_turn')} 轮"


def _sla_text(curve: dict[str, Any]) -> tuple[str, str]:
    """(text, css class) of a curve's SLA marks for the table."""
    marks = [m for m in curve.get("sla") or [] if isinstance(m, dict)]
    if not marks:
        return "", ""
    parts, bad = [], False
    for m in marks:
        if m.get("met") is None:
            parts.append(f"{sla_label(m)}: not measured (no point at or beyond {m.get('at_turn')} turns)")
        elif m.get("met"):
            parts.append(f"{sla_label(m)}: met ({pct(m.get('score'))} at {m.get('checked_turn')} turns)")
        else:
            bad = True
            at = f"; {pct(m.get('score'))} at {m.get('checked_turn')} turns" if m.get("checked_turn") else ""
            parts.append(
                f"{sla_label(m)}: BELOW SLA at {', '.join(map(str, m.get('below_turns') or []))} turns{at}"
            )
    return "; ".join(parts), "fail" if bad else "pass"


def _is_points(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(p, dict) for p in value)


def _seed_curves(decay: dict[str, Any]) -> dict[str, dict[str, Any]]:
    curves = decay.get("curves")
    if not isinstance(curves, dict):
        return {}
    return {k: c for k, c in curves.items() if isinstance(c, dict) and _is_points(c.get("points"))}


def _curves_section(decay: dict[str, Any], curves: dict[str, dict[str, Any]]) -> str:
    turns = sorted(
        {p["turns"] for c in curves.values() for p in c["points"] if isinstance(p.get("turns"), int)}
    )
    labels = [str(t) for t in turns]

    def line(curve: dict[str, Any], field: str) -> list[float | None]:
        by_turn = {p.get("turns"): p.get(field) for p in curve["points"]}
        return [by_turn.get(t) for t in turns]

    scores = {name: line(c, "score") for name, c in curves.items()}
    if "memory" in curves and any(v is not None for v in line(curves["memory"], "expected_min")):
        scores["memory: seed 003 expected minimum"] = line(curves["memory"], "expected_min")
    for name, c in curves.items():
        for m in c.get("sla") or []:
            if isinstance(m, dict) and isinstance(m.get("at_turn"), int):
                # the SLA line up to the length it is stated for
                scores[f"{name} SLA: {sla_label(m)}"] = [
                    m.get("min_score") if t <= max(m["at_turn"], m.get("checked_turn") or 0) else None
                    for t in turns
                ]
    xs = [float(t) for t in turns]
    charts = [
        line_chart(
            "Decay: score by conversation length (turns)", labels, scores, y_title="score", x_values=xs
        )
    ]
    tokens = {name: line(c, "mean_context_tokens") for name, c in curves.items()}
    own = {name: line(c, "mean_agent_tokens") for name, c in curves.items()}
    if any(v is not None for vs in own.values() for v in vs):
        charts.append(
            line_chart(
                "Decay: token cost (agent prompt tokens per conversation) by turns",
                labels,
                own,
                percent=False,
                y_title="tokens",
                x_values=xs,
            )
        )
    if any(v is not None for vs in tokens.values() for v in vs):
        charts.append(
            line_chart(
                "Decay: agent context tokens by turns",
                labels,
                tokens,
                percent=False,
                y_title="tokens",
                x_values=xs,
            )
        )
    rows = []
    for name, c in curves.items():
        points = "  ".join(f"{p.get('turns')}: {pct(p.get('score'))}" for p in c["points"])
        sla, sla_cls = _sla_text(c)
        rows.append(
            [
                cell(name),
                cell(NAMES.get(name, "")),
                cell(_MEASURES.get(str(c.get("measure")), c.get("measure"))),
                cell(c.get("breakpoint")),
                cell(points),
                cell(sla, sla_cls),
            ]
        )
    body = f'<div class="charts">{"".join(charts)}</div>'
    body += table(
        ["test", "dimension", "measure", "breakpoint (turns, first score < 50%)", "score by turns", "SLA"],
        rows,
    )
    body += (
        '<p class="muted">turns n is seed 003\'s turn count: the probe, min(n - 1, 12) small-talk turns '
        "(the seed's 12 filler topics), then the check question — past n = 13 the conversation stops "
        "growing, as in the seed's code.</p>"
    )
    system = decay.get("system")
    if isinstance(system, dict) and system:
        body += (
            '<h3>System configuration measured</h3><p class="muted">The curves describe this configuration, '
            "not the bare model (seed 003).</p>"
            + table(["", "value"], [[cell(k), cell(v)] for k, v in system.items()])
        )
    return body


def _generic_section(decay: dict[str, Any]) -> str:
    charts = []
    lists = {k: v for k, v in decay.items() if _is_points(v)}
    for name, points in lists.items():
        x_key = next((k for k in _X_KEYS if all(k in p for p in points)), None)
        metrics = sorted(
            {
                k
                for p in points
                for k, v in p.items()
                if k != x_key and isinstance(v, (int, float)) and not isinstance(v, bool)
            }
        )
        if x_key is None or not metrics:
            continue
        ordered = sorted(points, key=lambda p: p[x_key])
        series = {m: [p.get(m) for p in ordered] for m in metrics}
        percent = all(0 <= v <= 1 for vs in series.values() for v in vs if v is not None)
        charts.append(
            line_chart(
                f"Decay: {name}",
                [str(p[x_key]) for p in ordered],
                series,
                percent=percent,
                y_title="score" if percent else "",
            )
        )
    return f'<div class="charts">{"".join(charts)}</div>' if charts else ""


def curves_body(decay: dict[str, Any]) -> str:
    """Charts and tables of one sweep's decay.json."""
    curves = _seed_curves(decay)
    return _curves_section(decay, curves) if curves else ""


def decay_section(decay: dict[str, Any] | None) -> str:
    """The decay curves, breakpoints and system configuration; '' when the run has no decay.json."""
    if not decay:
        return ""
    if decay.get("kind") == "strategies":
        from usersim.reports.html_decay_compare import comparison_section

        return comparison_section(decay)
    curves = _seed_curves(decay)
    body = _curves_section(decay, curves) if curves else _generic_section(decay)
    violations = [v for v in decay.get("sla_violations") or [] if isinstance(v, str)]
    if violations:
        body = '<p class="banner">Below SLA: ' + "; ".join(escape(v) for v in violations) + "</p>" + body
    scalars = [[cell(k), cell(v)] for k, v in decay.items() if not isinstance(v, (dict, list))]
    if scalars:
        body += "<h3>Summary</h3>" + table(["", "value"], scalars)
    for key, value in decay.items():
        if isinstance(value, dict) and key not in ("curves", "system"):
            body += f"<h3>{escape(key)}</h3>" + table(
                ["", "value"], [[cell(k), cell(v)] for k, v in value.items()]
            )
    return section(
        "Decay curves (decay.json)", body or '<p class="muted">decay.json has no curves.</p>', "decay"
    )
