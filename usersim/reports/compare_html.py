"""compare.html: one self-contained page (inline CSS, SVG and JS; nothing fetched) for a comparison.

In the report's style (its CSS is read from page.html): the verdict, both sides, a forest plot of
per-case deltas with their intervals and the suite interval, the checks that moved, noise, the two
transcripts side by side at the first divergence of each changed case, the unpaired conversations
and the method. Every piece of text from records is HTML-escaped.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import get_args

from usersim.core.record import RunRecord, TranscriptMessage
from usersim.core.secrets import redact
from usersim.reports.compare_models import CaseResult, CaseVerdict, Comparison, Interval, Pair
from usersim.reports.html_parts import cell, pct, raw_cell, section, signed_pct, table

_TEMPLATE = Path(__file__).with_name("compare_page.html")
_REPORT_PAGE = Path(__file__).with_name("page.html")
CONTEXT_MESSAGES = 2  # messages shown before the first differing one


def _css() -> str:
    found = re.search(r"<style>(.*?)</style>", _REPORT_PAGE.read_text(encoding="utf-8"), re.S)
    return found.group(1) if found else ""


def _slug(case_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", case_id)


def _iv(iv: Interval | None) -> str:
    return "—" if iv is None else f"{iv.low * 100:+.1f} .. {iv.high * 100:+.1f}"


def _row_class(c: CaseResult) -> str:
    return {"significantly worse": "row-worse", "significantly better": "row-better"}.get(
        c.verdict, "row-noise"
    )


def forest_plot(comparison: Comparison) -> str:
    """Inline SVG: one row per case (delta and interval, in points), the suite as a diamond."""
    cases = [c for c in comparison.cases if c.delta is not None and c.interval is not None]
    cases.sort(key=lambda c: (c.delta or 0, c.case_id))
    label_w, plot_w, row_h, top = 200, 480, 22, 24
    height = top + row_h * (len(cases) + 2) + 20

    def x(v: float) -> float:
        return label_w + (v + 1) / 2 * plot_w

    ticks = "".join(
        f'<line class="grid" x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{height - 20}"/>'
        f'<text x="{x(t):.1f}" y="{top - 10}" text-anchor="middle">{t * 100:+.0f}</text>'
        for t in (-1, -0.5, 0, 0.5, 1)
    )
    rows = []
    for i, c in enumerate(cases):
        y = top + row_h * i + row_h / 2
        iv, delta = c.interval, c.delta or 0.0
        if iv is None:  # filtered out above; keeps the type checker sure
            continue
        rows.append(
            f'<g class="forest-row {_row_class(c)}" data-case="{escape(c.case_id)}" data-slug="{_slug(c.case_id)}" '
            f'data-verdict="{escape(c.verdict)}" data-delta="{delta * 100:+.1f}">'
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" text-anchor="end">{escape(c.case_id)}</text>'
            f'<line x1="{x(iv.low):.1f}" y1="{y:.1f}" x2="{x(iv.high):.1f}" y2="{y:.1f}" stroke-width="2"/>'
            f'<circle cx="{x(delta):.1f}" cy="{y:.1f}" r="4"/>'
            f"<title>{escape(c.case_id)}: {delta * 100:+.1f} points [{_iv(iv)}], {escape(c.verdict)}, "
            f"p={c.p_value:.3g}</title></g>"
        )
    s = comparison.suite
    suite = ""
    if s.delta is not None and s.interval is not None:
        y = top + row_h * (len(cases) + 0.5) + 8
        lo, hi, mid = x(s.interval.low), x(s.interval.high), x(s.delta)
        suite = (
            f'<g class="suite" data-delta="{s.delta * 100:+.1f}"><text x="{label_w - 8}" y="{y + 4:.1f}" '
            'text-anchor="end" font-weight="600">suite</text>'
            f'<polygon points="{lo:.1f},{y:.1f} {mid:.1f},{y - 6:.1f} {hi:.1f},{y:.1f} {mid:.1f},{y + 6:.1f}"/>'
            f"<title>suite: {s.delta * 100:+.1f} points [{_iv(s.interval)}], p={s.p_value:.3g}</title></g>"
        )
    zero = f'<line class="zero" x1="{x(0):.1f}" y1="{top - 6}" x2="{x(0):.1f}" y2="{height - 20}"/>'
    axis = (
        f'<text x="{x(0):.1f}" y="{height - 4}" text-anchor="middle">B − A, points of pass rate '
        f"(intervals {1 - comparison.method.alpha:.0%})</text>"
    )
    return (
        f'<figure class="chart"><figcaption>Per-case change with intervals</figcaption>'
        f'<svg class="forest" width="{label_w + plot_w + 20}" height="{height}" role="img" '
        f'aria-label="forest plot">{ticks}{zero}{"".join(rows)}{suite}{axis}</svg></figure>'
    )


def _cases_table(comparison: Comparison) -> str:
    verdicts = list(get_args(CaseVerdict))
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in verdicts)
    bar = (
        f'<p><select id="c-verdict" aria-label="verdict"><option value="">all verdicts</option>{options}</select> '
        '<span id="c-count" class="muted"></span></p>'
    )
    head = [
        "case",
        "A passed",
        "B passed",
        "pass→fail",
        "fail→pass",
        "delta",
        "interval",
        "p (raw)",
        "verdict",
        "diverges",
    ]
    rows = []
    for c in comparison.cases:
        cls = {"significantly worse": "fail", "significantly better": "pass", "inconclusive": "warn"}.get(
            c.verdict, "muted"
        )
        rows.append(
            f'<tr class="case-row" data-verdict="{escape(c.verdict)}" data-case="{escape(c.case_id)}">'
            + "".join(
                [
                    cell(c.case_id),
                    cell(f"{c.a_passed}/{c.decided}", "num"),
                    cell(f"{c.b_passed}/{c.decided}", "num"),
                    cell(c.worse),
                    cell(c.better),
                    raw_cell(signed_pct(c.delta), "num"),
                    raw_cell(_iv(c.interval), "num"),
                    raw_cell(f"{c.p_value:.3g}", "num"),
                    cell(c.verdict, cls),
                    cell(f"turn {c.first_divergence}" if c.first_divergence else "—"),
                ]
            )
            + "</tr>"
        )
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    return bar + f'<table class="cases"><tr>{header}</tr>{"".join(rows)}</table>'


def _sides(comparison: Comparison) -> str:
    a, b = comparison.a, comparison.b

    def k(side) -> str:
        p = side.pass_hat_k
        return (
            "—" if not p.variants else f"{p.all_passed}/{p.variants} = {pct(p.value)} [{_iv01(p.interval)}]"
        )

    rows = [
        ("run", a.run_dir, b.run_dir),
        ("agent", a.agent, b.agent),
        ("simulator", a.simulator, b.simulator),
        ("judge model", a.judge_model, b.judge_model),
        ("seed", a.seed, b.seed),
        ("pass rate (all)", a.rate.pass_rate_text, b.rate.pass_rate_text),
        ("pass rate (paired)", a.paired_rate.pass_rate_text, b.paired_rate.pass_rate_text),
        ("pass^k", k(a), k(b)),
        ("flip rate (agent noise)", pct(a.pass_hat_k.flip_rate), pct(b.pass_hat_k.flip_rate)),
        (
            "split judge verdicts",
            f"{a.judge_noise.split_verdicts}/{a.judge_noise.sampled_verdicts}",
            f"{b.judge_noise.split_verdicts}/{b.judge_noise.sampled_verdicts}",
        ),
    ]
    body = [[cell(n), cell(x), cell(y)] for n, x, y in rows]
    for name, d in comparison.costs.items():
        body.append([cell(name), cell(d.a), cell(f"{d.b} ({d.delta:+g})")])
    return table(["", "A (baseline)", "B"], body, "meta")


def _iv01(iv: Interval | None) -> str:
    return "—" if iv is None else f"{iv.low:.0%}, {iv.high:.0%}"


def _messages(transcript: list[TranscriptMessage], start: int, at: int | None) -> str:
    out = []
    for i in range(start, min(len(transcript), (at if at is not None else start) + 4)):
        m = transcript[i]
        calls = "".join(
            f'<div class="call"><pre>{escape(str(c.get("name")))}({escape(str(c.get("arguments")))})</pre></div>'
            for c in m.tool_calls or []
        )
        cls = f"msg {escape(m.role)}" + (" diverged" if i == at else "")
        turn = f" · turn {m.turn}" if m.turn is not None else ""
        out.append(
            f'<div class="{cls}"><div class="head">#{i} {escape(m.role)}{turn}</div>'
            f"<pre>{escape(m.content)}</pre>{calls}</div>"
        )
    return "".join(out) or '<p class="muted">(no message here: the conversation had ended)</p>'


def _divergence(c: CaseResult, pair: Pair, a: RunRecord | None, b: RunRecord | None) -> str:
    at = pair.divergence_message
    start = max(0, (at or 0) - CONTEXT_MESSAGES)
    where = (
        f"first differs at message #{at}, turn {pair.divergence_turn}"
        if at is not None
        else "identical transcripts"
    )
    cols = []
    for name, rec, link, status in (
        ("A", a, pair.a_link, pair.a_status),
        ("B", b, pair.b_link, pair.b_status),
    ):
        body = _messages(rec.transcript, start, at) if rec else '<p class="muted">record not found</p>'
        cols.append(
            f'<div><h3>{name}: <a href="{escape(link)}">{escape(pair.a_id if name == "A" else pair.b_id)}</a> '
            f'<span class="{escape(status)}">{escape(status)}</span></h3>{body}</div>'
        )
    moved = f'<p class="muted">moved: {escape("; ".join(pair.moved))}</p>' if pair.moved else ""
    return (
        f'<div class="divergence" id="div-{_slug(c.case_id)}"><h3>{escape(c.case_id)} — {escape(c.verdict)}; '
        f"{len(c.flips)} flip(s); {escape(where)}</h3>{moved}"
        f'<div class="side-by-side">{"".join(cols)}</div></div>'
    )


def render_compare(comparison: Comparison, a: list[RunRecord], b: list[RunRecord]) -> str:
    """The whole page as a string."""
    c = comparison
    by_a, by_b = {r.id: r for r in a}, {r.id: r for r in b}
    kind = "regression" if c.verdict.regression else ("improvement" if c.verdict.improvement else "")
    s = c.suite
    cards = [
        ("pairs", str(s.pairs)),
        ("pass→fail", str(s.worse)),
        ("fail→pass", str(s.better)),
        ("delta", signed_pct(s.delta)),
        ("suite p", f"{s.p_value:.3g}"),
    ]
    card_html = "".join(f'<div class="card"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in cards)
    warnings = "".join(f'<p class="banner">{escape(w)}</p>' for w in c.warnings)
    header = (
        f"<h1>usersim compare — {escape(c.a.run_id)} → {escape(c.b.run_id)}</h1>"
        f'<p class="verdict {kind}" id="verdict">{escape(c.verdict.line)}</p>'
        f'<div class="cards">{card_html}</div>{warnings}'
        f'<p class="muted">suite interval {escape(_iv(s.interval))} points ({escape(s.interval.method if s.interval else "")})</p>'
    )
    divergences = []
    for case in c.cases:
        if case.flips:
            pair = min(case.flips, key=lambda p: (p.divergence_message is None, p.divergence_message or 0))
            divergences.append(_divergence(case, pair, by_a.get(pair.a_id), by_b.get(pair.b_id)))
    moved = table(
        ["judge", "criterion", "pass→fail", "fail→pass", "on identical transcripts (judge noise)"],
        [
            [
                cell(m.judge),
                cell(m.criterion),
                cell(m.pass_to_fail),
                cell(m.fail_to_pass),
                cell(m.on_same_transcript),
            ]
            for m in c.criteria
        ],
    )
    unpaired = table(
        ["side", "record", "reason"],
        [[cell(u.side), cell(u.record_id), cell(u.reason)] for u in c.unpaired[:200]],
    )
    method = table(["", ""], [[cell(k), cell(v)] for k, v in c.method.model_dump().items()], "meta")
    body = "".join(
        [
            header,
            section("The two runs", _sides(c), "sides"),
            section("Cases", forest_plot(c) + _cases_table(c), "cases"),
            section("Changed cases", '<ul id="jump"></ul>', "changed"),
            section(
                "Checks that moved",
                moved if c.criteria else '<p class="muted">No check moved.</p>',
                "criteria",
            ),
            section(
                "Noise", "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in c.noise.notes) + "</ul>", "noise"
            ),
            section(
                "First divergence, side by side",
                "".join(divergences) or '<p class="muted">No flip.</p>',
                "divergence",
            ),
            section(
                f"Unpaired ({len(c.unpaired)})",
                unpaired if c.unpaired else '<p class="muted">Every conversation was paired.</p>',
                "unpaired",
            ),
            section("Method", method, "method"),
        ]
    )
    page = _TEMPLATE.read_text(encoding="utf-8")
    title = escape(f"usersim compare — {c.a.run_id} → {c.b.run_id}")
    page = page.replace("<!--REPORT_CSS-->", _css(), 1).replace("<!--TITLE-->", title, 1)
    return redact(page.replace("<!--BODY-->", body, 1))


def write_compare_html(path: Path, comparison: Comparison, a: list[RunRecord], b: list[RunRecord]) -> Path:
    """Write compare.html and return its path."""
    path.write_text(render_compare(comparison, a, b), encoding="utf-8")
    return path
