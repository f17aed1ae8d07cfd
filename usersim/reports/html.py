"""report.html: one self-contained page (inline CSS, JS and SVG; nothing fetched) for a run.

`write_report(path, records, summary)` is what the runner calls; `summary` is the dict from
`reports.summary.build_summary`. Every piece of text from records or meta is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from usersim.core.record import RunRecord
from usersim.core.secrets import redact, redact_value
from usersim.reports.charts import bar_chart
from usersim.reports.html_attacks import attacks_section
from usersim.reports.html_decay import decay_section
from usersim.reports.html_explore import explore_section
from usersim.reports.html_grades import complexity_section, grades_section
from usersim.reports.html_parts import (
    RATE_HEADERS,
    cell,
    num,
    pct,
    rate_cells,
    raw_cell,
    section,
    table,
    text,
)
from usersim.reports.html_sections import c1_section, long_context_section, skill_section, token_section
from usersim.reports.html_shrink import shrink_section
from usersim.reports.html_simulator import simulator_section
from usersim.reports.html_transcript import render_viewer
from usersim.reports.judging import judging_section
from usersim.reports.recheck import recheck_section
from usersim.reports.summary_models import Rate, Summary

_PAGE = Path(__file__).with_name("page.html")
_DIFFICULTIES = ["easy", "medium", "hard", "unspecified"]


def _header(s: Summary) -> str:
    meta = redact_value(s.meta)  # summaries written by older code may not be redacted yet
    run_id = meta.get("run_id") or "run"
    rows = [[cell(k), cell(v)] for k, v in meta.items()]
    t = s.totals
    cards = [
        ("conversations", str(t.records), ""),
        ("passed", str(t.passed), "passed"),
        ("failed", str(t.failed), "failed"),
        ("error", str(t.error), "error"),
        ("unjudged", str(t.unjudged), "unjudged"),
        ("pass rate", pct(t.pass_rate), ""),
        ("mean score", num(t.mean_score), ""),
    ]
    card_html = "".join(f'<div class="card {c}"><b>{escape(v)}</b>{escape(k)}</div>' for k, v, c in cards)
    banner = ""
    if s.skill_impact.red_line_dimensions or s.red_line_hits:
        what = s.skill_impact.red_line_dimensions + [h.record_id for h in s.red_line_hits]
        banner = f'<p class="banner">Red line hit: {escape(", ".join(what))}</p>'
    return (
        f"<h1>usersim report — {escape(str(run_id))}</h1>"
        f'<div class="cards">{card_html}</div>{banner}'
        f'<p class="muted">pass rate {escape(t.pass_rate_text)}: passed / (passed + failed + error); '
        "unjudged and inconclusive conversations are left out and counted, never as passes.</p>"
        f"<details><summary>Run meta</summary>{table(['', 'value'], rows, 'meta')}</details>"
    )


def _rate_brief(r: Rate | None) -> str:
    """'2/3 = 66.7% (left out: 1 unjudged)': the gate's rule, with what was left out."""
    if r is None:
        return "—"
    return escape(r.pass_rate_text)


def _pass_rates(s: Summary) -> str:
    parts = []
    if s.by_dimension:
        dims = list(s.by_dimension)
        parts.append(
            '<div class="charts">'
            + bar_chart(
                "Pass rate by dimension", dims, {"pass rate": [s.by_dimension[d].pass_rate for d in dims]}
            )
            + "</div>"
        )
        parts.append(
            table(
                ["dimension", *RATE_HEADERS], [[cell(d), *rate_cells(r)] for d, r in s.by_dimension.items()]
            )
        )
    if s.by_dimension_difficulty:
        used = [d for d in _DIFFICULTIES if any(d in row for row in s.by_dimension_difficulty.values())]
        rows = []
        for dim, row in s.by_dimension_difficulty.items():
            cells = [cell(dim)]
            rows.append(cells + [raw_cell(_rate_brief(row.get(d)), "num") for d in used])
        parts.append("<h3>Dimension × difficulty</h3>" + table(["dimension", *used], rows))
    if s.by_category:
        parts.append(
            "<h3>By sub-dimension</h3>"
            + table(
                ["sub-dimension", *RATE_HEADERS],
                [[cell(c), *rate_cells(r)] for c, r in s.by_category.items()],
            )
        )
    return section("Pass rates", "".join(parts), "pass-rates") if parts else ""


def _repeats(s: Summary) -> str:
    rep = s.repeats
    if not rep.groups and not rep.undecided:
        return ""
    curve = table(
        ["k", *[str(k) for k in rep.pass_hat_k_curve]],
        [[cell("pass^k"), *[raw_cell(pct(v), "num") for v in rep.pass_hat_k_curve.values()]]],
    )
    flips = "".join(
        f"<li>{escape(g.key)}: {g.passed} passed / {g.failed} failed of {g.k}</li>" for g in rep.flips
    )
    body = (
        f"<p>{rep.groups} case variants ran more than once with every repeat judged (passed, failed or "
        "error). "
        f"pass^k (all repeats passed): <b>{escape(rep.pass_hat_k_text)}</b>; "
        f"pass@k: {escape(rep.pass_at_k_text)}; flip rate (repeats disagree): "
        f"<b>{escape(rep.flip_rate_text)}</b></p>{curve}"
        + (f"<h3>Flipped variants</h3><ul>{flips}</ul>" if flips else "")
    )
    return section("Consistency across repeats", body, "repeats")


def _operations(s: Summary) -> str:
    parts = []
    if s.stop_reasons:
        parts.append(
            "<h3>Stop reasons</h3>"
            + table(["stop reason", "conversations"], [[cell(k), cell(v)] for k, v in s.stop_reasons.items()])
        )
    if s.usage:
        rows = [
            [
                cell(role),
                cell(u.calls),
                cell(u.prompt_tokens),
                cell(u.completion_tokens),
                cell(u.cached_calls),
                raw_cell(f"${u.cost_usd:.4f}", "num"),
            ]
            for role, u in s.usage.items()
        ]
        parts.append(
            "<h3>Usage</h3>"
            + table(["role", "calls", "prompt tokens", "completion tokens", "cached calls", "cost"], rows)
        )
    for title, items in (("Unjudged verdicts", s.unjudged), ("Errors", s.errors)):
        if items:
            rows = [
                [
                    cell(c.judge),
                    cell(c.reason),
                    cell(c.verdicts),
                    cell(
                        ", ".join(c.records[:10])
                        + (f" … (+{len(c.records) - 10})" if len(c.records) > 10 else "")
                    ),
                ]
                for c in items
            ]
            parts.append(
                f"<h3>{escape(title)}</h3>" + table(["judge", "reason", "verdicts", "records"], rows)
            )
    return section("Stops, usage, unjudged and errors", "".join(parts), "operations") if parts else ""


# Transcripts one page embeds. Beyond this many conversations the page shows the ones that need a
# look (inconclusive, simulator-suspect, then every other non-pass in plan order) and a spread of
# passed ones, and says what it left out: a 10,000-conversation run gives a page of a few MB, not
# hundreds. Every record stays in results.jsonl.
TRANSCRIPT_LIMIT = 200
_PASSED_SHARE = 10  # at least 1/10 of the shown transcripts are passed ones, when the run has them


def shown_ids(
    briefs: Sequence[tuple[str, str, str]], summary: dict, limit: int = TRANSCRIPT_LIMIT
) -> set[str] | None:
    """Which conversations (ids) the page embeds, from (id, case_id, status) in plan order; None: all
    of them (at most `limit`, or an exploration run, whose tree and clusters need every branch)."""
    meta = summary.get("meta") or {}
    if len(briefs) <= limit or (isinstance(meta, dict) and meta.get("explore")):
        return None
    passed = [rid for rid, _, status in briefs if status == "passed"]
    spread = min(len(passed), max(limit // _PASSED_SHARE, limit - (len(briefs) - len(passed))))
    flagged = [*summary.get("inconclusive", []), *summary.get("simulator_suspects", [])]
    needy = list(dict.fromkeys([*flagged, *(rid for rid, _, status in briefs if status != "passed")]))
    chosen = set(needy[: limit - spread])
    chosen.update(passed[int(i * len(passed) / spread)] for i in range(spread))  # evenly spaced
    return chosen


def _left_out_note(records: list[RunRecord], s: Summary, total: int) -> str:
    if total <= len(records):
        return ""
    shown_passed = sum(r.status == "passed" for r in records)
    left_passed = s.totals.passed - shown_passed
    left_other = total - len(records) - left_passed
    return (
        f'<p class="banner" id="transcripts-left-out">This run has {total} conversations; the page embeds '
        f"{len(records)} transcripts (at most {TRANSCRIPT_LIMIT}): inconclusive, simulator-suspect and other "
        f"non-passing conversations first, then passed ones spread over the run. Left out: {total - len(records)} "
        f"({left_other} not passed, {left_passed} passed). Every conversation is in results.jsonl.</p>"
    )


def render_report(
    records: list[RunRecord],
    summary: dict,
    *,
    total: int | None = None,
    sections: Mapping[str, str] | None = None,
) -> str:
    """The whole page as a string. `records`: the conversations to embed (all of a run of at most
    TRANSCRIPT_LIMIT; beyond, `shown_ids` picks them); `total`: how many the run has (default: all
    given); `sections`: record id -> its transcript section made while the run played
    (html_transcript.section), the same text rendered now would give. Summary sections always
    cover the whole run."""
    s = Summary.model_validate(summary)
    given = len(records)
    shown = shown_ids([(r.id, r.case_id, r.status) for r in records], summary)
    if shown is not None:
        records = [r for r in records if r.id in shown]
    total = given if total is None else total
    title_n = f"{len(records)} of {total}" if total > len(records) else str(len(records))
    body = "".join(
        [
            _header(s),
            simulator_section(records, s),
            _pass_rates(s),
            _repeats(s),
            judging_section(s.judging),
            recheck_section(s.recheck),
            grades_section(s),
            complexity_section(s),
            skill_section(s),
            c1_section(s),
            long_context_section(s),
            decay_section(s.decay),
            token_section(s),
            _operations(s),
            explore_section(records, s.meta),
            shrink_section(records, s.meta),
            attacks_section(records),
            section(
                f"Transcripts ({title_n})",
                _left_out_note(records, s, total) + render_viewer(records, sections),
                "transcripts",
            ),
        ]
    )
    title = f"usersim report — {text(s.meta.get('run_id') or 'run')}"
    page = _PAGE.read_text(encoding="utf-8")
    # escaped text can never contain a placeholder comment, so plain replace is safe
    page = page.replace("<!--TITLE-->", title, 1).replace("<!--BODY-->", body, 1)
    return redact(page)  # a key that reached a transcript (an agent echoing its config) is masked too


def write_report(
    path: Path,
    records: list[RunRecord],
    summary: dict,
    *,
    total: int | None = None,
    sections: Mapping[str, str] | None = None,
) -> Path:
    """Write report.html for a run and return its path (`records`, `total`, `sections`: see
    render_report)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(records, summary, total=total, sections=sections), encoding="utf-8")
    return path
