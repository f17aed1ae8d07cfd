"""Inline SVG charts for report.html: no JavaScript library, no CDN, works offline.

Both charts take category labels on the x axis and named series of values (None = no point).
Every label is HTML-escaped; the caller passes raw text.
"""

from __future__ import annotations

from html import escape

PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"]
_W, _H = 560, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 16, 44


def _nice_max(values: list[float]) -> float:
    top = max(values, default=0.0)
    if top <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(top))) - 1)
    for step in (1, 2, 4, 6, 8):  # quarters of these are round numbers for the 4 grid lines
        if step * magnitude >= top:
            return float(step * magnitude)
    return float(10 * magnitude)


def _fmt(value: float, percent: bool) -> str:
    return f"{value * 100:.0f}%" if percent else f"{value:,.0f}"


def _x_positions(n: int, pw: float, x_values: list[float] | None) -> list[float]:
    """Pixel x of each point: evenly spaced categories, or proportional to numeric `x_values`."""
    if x_values and len(x_values) == n and max(x_values) > min(x_values):
        lo, hi = min(x_values), max(x_values)
        return [_LEFT + pw * (0.05 + 0.9 * (v - lo) / (hi - lo)) for v in x_values]
    return [_LEFT + pw * (i + 0.5) / max(n, 1) for i in range(n)]


def _frame(
    x_labels: list[str], y_max: float, percent: bool, y_title: str, x_values: list[float] | None = None
) -> tuple[list[str], float, float]:
    """Axes, grid and x labels; returns the parts and the plot width/height."""
    pw, ph = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    parts = []
    for i in range(5):
        y = _TOP + ph - ph * i / 4
        parts.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{_W - _RIGHT}" y2="{y:.1f}" class="grid"/>')
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(y_max * i / 4, percent)}</text>'
        )
    for x, label in zip(_x_positions(len(x_labels), pw, x_values), x_labels):
        parts.append(f'<text x="{x:.1f}" y="{_H - _BOTTOM + 16}" text-anchor="middle">{escape(label)}</text>')
    parts.append(f'<line x1="{_LEFT}" y1="{_TOP + ph}" x2="{_W - _RIGHT}" y2="{_TOP + ph}" class="axis"/>')
    if y_title:
        parts.append(
            f'<text x="12" y="{_TOP + ph / 2:.1f}" transform="rotate(-90 12 {_TOP + ph / 2:.1f})" '
            f'text-anchor="middle">{escape(y_title)}</text>'
        )
    return parts, pw, ph


def _legend(names: list[str]) -> str:
    items = "".join(
        f'<span class="key"><i style="background:{PALETTE[i % len(PALETTE)]}"></i>{escape(n)}</span>'
        for i, n in enumerate(names)
    )
    return f'<div class="legend">{items}</div>'


def _wrap(title: str, body: list[str], names: list[str]) -> str:
    svg = (
        f'<svg viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )
    return f'<figure class="chart"><figcaption>{escape(title)}</figcaption>{svg}{_legend(names)}</figure>'


def line_chart(
    title: str,
    x_labels: list[str],
    series: dict[str, list[float | None]],
    *,
    percent: bool = True,
    y_title: str = "",
    x_values: list[float] | None = None,
) -> str:
    """A line chart (one polyline per series, gaps at None). `percent` fixes the y axis to 0..100%;
    `x_values` (numbers, one per label) space the points proportionally, e.g. turn counts."""
    values = [v for vs in series.values() for v in vs if v is not None]
    y_max = 1.0 if percent else _nice_max(values)
    parts, pw, ph = _frame(x_labels, y_max, percent, y_title, x_values)
    xs = _x_positions(len(x_labels), pw, x_values)
    for si, (name, vs) in enumerate(series.items()):
        color = PALETTE[si % len(PALETTE)]
        points = [
            (xs[i], _TOP + ph - ph * min(v, y_max) / y_max, v) for i, v in enumerate(vs) if v is not None
        ]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y, v in points:
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}">'
                f"<title>{escape(name)}: {_fmt(v, percent) if percent else f'{v:,.1f}'}</title></circle>"
            )
    return _wrap(title, parts, list(series))


def bar_chart(
    title: str,
    x_labels: list[str],
    series: dict[str, list[float | None]],
    *,
    percent: bool = True,
    y_title: str = "",
) -> str:
    """Grouped bars: one group per x label, one bar per series; the value is printed on each bar."""
    values = [v for vs in series.values() for v in vs if v is not None]
    y_max = 1.0 if percent else _nice_max(values)
    parts, pw, ph = _frame(x_labels, y_max, percent, y_title)
    n, k = max(len(x_labels), 1), max(len(series), 1)
    slot = pw / n
    bar = slot * 0.8 / k
    for si, (name, vs) in enumerate(series.items()):
        color = PALETTE[si % len(PALETTE)]
        for i, v in enumerate(vs):
            if v is None:
                continue
            h = ph * min(v, y_max) / y_max
            x = _LEFT + slot * i + slot * 0.1 + bar * si
            y = _TOP + ph - h
            label = _fmt(v, percent)
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}">'
                f"<title>{escape(name)} / {escape(x_labels[i])}: {label}</title></rect>"
                f'<text x="{x + bar / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" class="val">{label}</text>'
            )
    return _wrap(title, parts, list(series))
