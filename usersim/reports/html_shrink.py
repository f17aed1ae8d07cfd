"""Shrunk cases in report.html, next to their originals.

`usersim shrink RUN RECORD --to DIR` (and `promote --shrink`) keeps one entry per shrunk record in
the run's meta under `shrinks` (the same entries as DIR/shrink.json): the original record, the check
it still fails, the good agent it still passes with, each dimension's size before and after, the
runs it took, and the shrunk conversation. This section shows them; the original conversation is
linked to its transcript further down the page.
"""

from __future__ import annotations

from html import escape
from typing import Any

from usersim.core.record import RunRecord
from usersim.reports.html_parts import cell, raw_cell, section, table

# how each dimension is named in the table (graphs.shrink_units.DIMENSIONS)
_NAMES = {
    "turns": "user turns",
    "events": "scripted events",
    "facts": "persona facts",
    "noise": "tool-result fields",
    "rows": "environment records",
    "sentences": "sentences",
}


def _sizes(entry: dict[str, Any]) -> str:
    rows = [
        [cell(_NAMES.get(dim, dim)), cell(pair[0]), cell(pair[1])]
        for dim, pair in (entry.get("sizes") or {}).items()
        if isinstance(pair, list) and len(pair) == 2
    ]
    return table(["dimension", "original", "shrunk"], rows, "shrink-sizes") if rows else ""


def _conversation(entry: dict[str, Any]) -> str:
    lines = []
    for m in entry.get("conversation") or []:
        role = str(m.get("role") or "")
        what = escape(str(m.get("content") or ""))
        tools = [str(t) for t in m.get("tools") or []]
        if tools:
            what += f' <span class="muted">→ {escape(", ".join(tools))}</span>'
        if role == "tool":
            what = f'<span class="muted">{what[:300]}</span>'
        where = ' <span class="muted">(history)</span>' if m.get("history") else ""
        lines.append(f"<li><b>{escape(role)}</b>{where}: {what}</li>")
    return f'<ol class="shrunk-conversation">{"".join(lines)}</ol>' if lines else ""


def _one(entry: dict[str, Any], anchors: dict[str, str]) -> str:
    rid = str(entry.get("record") or "")
    link = f'<a href="#{anchors[rid]}">{escape(rid)}</a>' if rid in anchors else escape(rid)
    against = entry.get("against")
    partial = (
        ""
        if entry.get("complete", True)
        else f' <span class="failed">partial: the budget of {escape(str(entry.get("budget")))} runs ran out</span>'
    )
    head = table(
        ["original record", "check still failing", "still passes with", "shrunk case", "runs"],
        [
            [
                raw_cell(link),
                cell(entry.get("check") or "—"),
                cell(against or "—"),
                cell(entry.get("case_file") or "—"),
                raw_cell(escape(str(entry.get("runs_used", "—"))) + partial),
            ]
        ],
        "shrink",
    )
    return (
        f"<h3>{escape(rid)}: {escape(str(entry.get('shrunk') or ''))}</h3>"
        + head
        + _sizes(entry)
        + "<p>The shrunk conversation (the failing agent on the shrunk case):</p>"
        + _conversation(entry)
    )


def shrink_section(records: list[RunRecord], meta: dict[str, Any]) -> str:
    """The shrunk cases of this run's records, or '' when none was shrunk."""
    entries = [e for e in meta.get("shrinks") or [] if isinstance(e, dict)]
    if not entries:
        return ""
    anchors = {r.id: f"r{n}" for n, r in enumerate(records)}  # the transcript viewer's anchors
    body = (
        "<p>Failing conversations shrunk by <code>usersim shrink</code>: each shrunk case still fails "
        "the same check with the seed pinned (and passes with the good agent when one was given); the "
        "sizes say what was dropped.</p>" + "".join(_one(e, anchors) for e in entries)
    )
    return section(f"Shrunk cases ({len(entries)})", body, "shrunk")
