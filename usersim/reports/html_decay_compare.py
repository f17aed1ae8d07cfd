"""The strategy comparison of `usersim decay --strategies` (seed 003, 上下文窗口策略对比表): the
table — 保留轮数, 用户画像注入, 外部记忆, half-life and the other breakpoints, token cost, SLA — the
memory and token-cost curves of every strategy on one chart each, then each strategy's own curves.
DIR/report.html of a comparison is this page alone (each strategy's folder has its full report)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from usersim.core.secrets import redact
from usersim.reports.charts import line_chart
from usersim.reports.html_decay import curves_body
from usersim.reports.html_parts import cell, num, section, table

_PAGE = Path(__file__).with_name("page.html")
_COLUMNS = [
    ("strategy", "策略"),
    ("window_turns", "保留轮数"),
    ("profile_injection", "用户画像注入"),
    ("external_memory", "外部记忆"),
    ("memory_half_life", "记忆半衰期"),
    ("reference_fail_point", "指代消解失效点"),
    ("switch_stable_lower", "话题切换稳定区间下限"),
    ("conflict_stable_lower", "冲突处理稳定区间下限"),
    ("drift_stable_lower", "语义漂移稳定区间下限"),
    ("mean_agent_tokens", "Token 消耗"),
]


def _flag(value: Any) -> str:
    if isinstance(value, bool):
        return "✅" if value else "❌"
    return "—" if value is None else str(value)


def _row(r: dict[str, Any]) -> list[str]:
    cells = []
    for key, _ in _COLUMNS:
        v = r.get(key)
        if key in ("profile_injection", "external_memory"):
            cells.append(cell(_flag(v)))
        elif key == "window_turns":
            cells.append(cell("all" if v is None and r.get("context_strategy") in ("full", "profile") else v))
        elif key == "mean_agent_tokens":
            cells.append(cell(num(v, 0) if v is not None else None))
        elif key.endswith(("half_life", "fail_point", "stable_lower")):
            cells.append(cell(f"> {r.get('_longest')}" if v is None else v))
        else:
            cells.append(cell(v))
    bad = r.get("sla_violations") or []
    cells.append(cell("; ".join(bad) if bad else "met / none stated", "fail" if bad else ""))
    return cells


def comparison_section(decay: dict[str, Any]) -> str:
    """The comparison table, the per-strategy charts and each strategy's curves."""
    rows = [r for r in decay.get("strategies") or [] if isinstance(r, dict)]
    raw_runs = decay.get("runs")
    runs: dict[str, Any] = raw_runs if isinstance(raw_runs, dict) else {}
    turns = [t for t in decay.get("turns") or [] if isinstance(t, int)]
    longest = max(turns) if turns else "?"
    body = table([h for _, h in _COLUMNS] + ["SLA"], [_row({**r, "_longest": longest}) for r in rows])
    body += (
        '<p class="muted">Breakpoints are the first swept turn count whose mean score is below 50% '
        f"(“> {longest}” = never within the sweep). Token 消耗 is the mean prompt tokens per conversation "
        "the agent reported using; 用户画像注入 / 外部记忆 are the agent's own description of its "
        "configuration (seed 003: state them in every comparison).</p>"
    )
    labels, xs = [str(t) for t in turns], [float(t) for t in turns]

    def series(field: str, test: str = "memory") -> dict[str, list[float | None]]:
        out = {}
        for name, run in runs.items():
            pts = {
                p.get("turns"): p.get(field)
                for p in ((run.get("curves") or {}).get(test) or {}).get("points", [])
            }
            out[name] = [pts.get(t) for t in turns]
        return out

    charts = [
        line_chart(
            "Memory score by turns, per strategy", labels, series("score"), y_title="score", x_values=xs
        ),
        line_chart(
            "Drift score by turns, per strategy",
            labels,
            series("score", "drift"),
            y_title="score",
            x_values=xs,
        ),
        line_chart(
            "Token cost (memory test) by turns, per strategy",
            labels,
            series("mean_agent_tokens"),
            percent=False,
            y_title="tokens",
            x_values=xs,
        ),
    ]
    body += f'<div class="charts">{"".join(charts)}</div>'
    for name, run in runs.items():
        if isinstance(run, dict):
            body += f"<h3>{escape(str(name))} — {escape(str(run.get('agent') or ''))}</h3>" + curves_body(run)
    return section("Context strategies (seed 003 上下文窗口策略对比)", body, "decay")


def write_comparison_page(path: Path, decay: dict[str, Any]) -> Path:
    """DIR/report.html of a strategy comparison: the comparison section as a page of its own."""
    page = _PAGE.read_text(encoding="utf-8")
    title = f"usersim decay — {escape(str(decay.get('agent') or ''))} strategies"
    body = f"<h1>{title}</h1>" + comparison_section(decay)
    page = page.replace("<!--TITLE-->", title, 1).replace("<!--BODY-->", body, 1)
    path.write_text(redact(page), encoding="utf-8")
    return path
