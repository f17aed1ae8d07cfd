"""realism.html: one self-contained page (the report's CSS, inline SVG) for `usersim realism`:
the summary, a table of every trait with its interval and status, and per trait a chart of the
simulated and the human distribution (share of conversations per value bin)."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from usersim.core.secrets import redact
from usersim.reports.charts import bar_chart
from usersim.reports.html_parts import cell, section, table
from usersim.reports.realism import RealismReport, TraitResult

_PAGE = Path(__file__).with_name("realism_page.html")
_REPORT_PAGE = Path(__file__).with_name("page.html")
BINS = 6


def _css() -> str:
    found = re.search(r"<style>(.*?)</style>", _REPORT_PAGE.read_text(encoding="utf-8"), re.S)
    return found.group(1) if found else ""


def bins(values: list[float], rate: bool) -> list[tuple[str, float, float]]:
    """(label, low, high) bins covering `values`: one per whole number when they are few whole
    numbers, else BINS equal widths (rates: 0-100% in BINS steps)."""
    if not values:
        return []
    lo, hi = (0.0, 1.0) if rate else (min(values), max(values))
    whole = all(float(v).is_integer() for v in values)
    if whole and hi - lo <= 10:
        return [(f"{k:g}", k - 0.5, k + 0.5) for k in range(int(lo), int(hi) + 1)]
    if hi == lo:
        return [(f"{lo:.2g}", lo - 0.5, lo + 0.5)]
    width = (hi - lo) / BINS
    out = []
    for i in range(BINS):
        a, b = lo + i * width, lo + (i + 1) * width
        digits = 2 if width < 0.1 else 1
        label = f"{a * 100:.0f}–{b * 100:.0f}%" if rate else f"{a:.{digits}f}–{b:.{digits}f}"
        out.append((label, a, b + (1e-9 if i == BINS - 1 else 0.0)))
    return out


def _shares(values: list[float], edges: list[tuple[str, float, float]]) -> list[float | None]:
    n = len(values)
    return [sum(1 for v in values if a <= v < b) / n if n else None for _, a, b in edges]


def trait_chart(t: TraitResult) -> str:
    edges = bins(t.simulated.values + t.human.values, t.rate)
    if not edges:
        return f'<p class="muted">{escape(t.label)}: no conversation where it applies.</p>'
    return bar_chart(
        f"{t.label} ({t.status})",
        [label for label, _, _ in edges],
        {
            f"simulated (n={t.simulated.n})": _shares(t.simulated.values, edges),
            f"human (n={t.human.n})": _shares(t.human.values, edges),
        },
        percent=True,
        y_title="share of conversations",
    )


def _value(v: float | None, rate: bool) -> str:
    if v is None:
        return "—"
    return f"{v * 100:.0f}%" if rate else f"{v:.2f}"


def _iv(t: TraitResult) -> str:
    if t.interval is None:
        return "—"
    k = 100 if t.rate else 1
    return f"{t.interval[0] * k:+.2f} .. {t.interval[1] * k:+.2f}" + (" pts" if t.rate else "")


def render(report: RealismReport) -> str:
    rows = [
        [
            cell(t.label),
            cell(_value(t.simulated.mean, t.rate), "num"),
            cell(_value(t.human.mean, t.rate), "num"),
            cell(_iv(t), "num"),
            cell("—" if t.standardized is None else f"{t.standardized:+.2f}", "num"),
            cell(t.status, {"within": "passed", "outside": "failed"}.get(t.status, "unjudged")),
            cell(t.meaning),
        ]
        for t in [*report.traits, report.success]
    ]
    head = ["trait", "simulated", "human", "difference 95% interval", "standardized", "status", "measured as"]
    charts = "".join(trait_chart(t) for t in [*report.traits, report.success])
    calib = ""
    if report.calibration:
        keys = list(report.calibration[0])
        calib = section(
            "Calibration: before / after",
            table(keys, [[cell(r.get(k)) for k in keys] for r in report.calibration]),
            "calibration",
        )
    method = table(["", ""], [[cell(k), cell(v)] for k, v in report.method.items()], "meta")
    body = (
        f'<h1>usersim realism</h1><p class="verdict" id="verdict">{escape(report.line)}</p>'
        f'<p class="muted">simulated: {escape(report.simulated_run)} ({report.simulated_conversations} '
        f"conversations) · human: {escape(report.human_run)} ({report.human_conversations} conversations)</p>"
        + section("Traits", table(head, rows), "traits")
        + section("Simulated vs human distributions", f'<div class="charts">{charts}</div>', "charts")
        + calib
        + section("Method", method, "method")
    )
    page = _PAGE.read_text(encoding="utf-8")
    page = page.replace("<!--REPORT_CSS-->", _css(), 1).replace("<!--TITLE-->", "usersim realism", 1)
    return redact(page.replace("<!--BODY-->", body, 1))


def write_realism_html(path: Path, report: RealismReport) -> Path:
    path.write_text(render(report), encoding="utf-8")
    return path
