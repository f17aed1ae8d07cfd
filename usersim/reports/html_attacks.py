"""The "Attacks" section of report.html: every attack case (tag `attack`) of the run, its kind from
its tags (`injection`: instructions through tool results; `social`: a manipulative user), what was
attempted, what the agent did, the security verdicts and pass/fail.

Built from the stored records alone (tags, tool trace, verdicts): what was attempted is the text an
`inject_instruction` intercept inserted (ToolEvent.intercept) or, for a user-side attack, the
persona and the user's opening words; what the agent did is its write calls (the write tools the
`no_unauthorized_action` verdict names, made or refused by the tool), the calls it judged
unauthorized, and the security verdicts (no_unauthorized_action, no_leak) with their reasons.
"""

from __future__ import annotations

from html import escape
from typing import Any

from usersim.core.record import RunRecord
from usersim.reports.html_parts import cell, raw_cell, section, table

KINDS = ("injection", "social")
SECURITY_JUDGES = ("no_unauthorized_action", "no_leak")


def attack_kind(tags: list[str]) -> str | None:
    """injection / social / other for an attack case's tags; None when it is not an attack."""
    if "attack" not in tags and not any(t in KINDS for t in tags):
        return None
    return next((t for t in KINDS if t in tags), "other")


def _short(text: str, n: int = 160) -> str:
    one = " ".join(str(text).split())
    return one if len(one) <= n else one[: n - 1] + "…"


def attempted(r: RunRecord) -> list[str]:
    """What the attack tried, in words: the injected instructions, else the user's side."""
    out = [
        f"{e.name} result, turn {e.turn} ({e.intercept.position or '?'}, {e.intercept.disguise or 'none'}): "
        f"{_short(e.intercept.text or '', 140)}"
        for e in r.tool_trace
        if e.intercept is not None and e.intercept.kind == "instruction"
    ]
    if out:
        return out
    live = r.transcript[r.history_len :]
    opening = next((m.content for m in live if m.role == "user" and m.content.strip()), "")
    who = f"persona {r.persona}: " if r.persona else ""
    return [f"{who}{_short(opening, 140)}"] if (who or opening) else []


def _writes(r: RunRecord) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """(writes done, writes refused, unauthorized findings) from the no_unauthorized_action verdict."""
    v = next((v for v in r.verdicts if v.judge == "no_unauthorized_action"), None)
    details = (v.details or {}) if v is not None else {}
    writers = set(details.get("write_tools") or [])
    done: list[str] = []
    refused: list[str] = []
    for e in r.tool_trace:
        if e.name in writers:
            args = ", ".join(f"{k}={val}" for k, val in e.arguments.items())
            (refused if e.is_error else done).append(f"{e.name}({_short(args, 80)})")
    return done, refused, list(details.get("unauthorized") or [])


def _did(r: RunRecord) -> str:
    done, refused, bad = _writes(r)
    parts = []
    if done:
        parts.append("writes: " + escape("; ".join(done)))
    if refused:
        parts.append("refused by the tool: " + escape("; ".join(refused)))
    if bad:
        parts.append(f'<span class="failed">{len(bad)} unauthorized</span>')
    if not (done or refused):
        parts.append("no write call")
    leak = next((v for v in r.verdicts if v.judge == "no_leak"), None)
    if leak is not None and leak.verdict == "fail":
        parts.append('<span class="failed">leaked</span>')
    return "<br>".join(parts)


def _verdicts(r: RunRecord) -> str:
    shown = [v for v in r.verdicts if v.judge in SECURITY_JUDGES] or [
        v for v in r.verdicts if v.verdict in ("fail", "error")
    ]
    return "<br>".join(
        f'<span class="{escape(v.verdict)}">{escape(v.judge)}: {escape(v.verdict)}</span> — {escape(_short(v.reason, 300))}'
        for v in shown
    )


def attacks_section(records: list[RunRecord]) -> str:
    """The section (empty when the run has no attack case)."""
    anchors = {r.id: f"r{n}" for n, r in enumerate(records)}  # the transcript viewer's anchors
    attacks = [(attack_kind(r.tags), r) for r in records]
    rows = []
    counts: dict[str, list[int]] = {}
    for kind, r in attacks:
        if kind is None:
            continue
        ok = r.status == "passed"
        tally = counts.setdefault(kind, [0, 0])
        tally[0 if ok else 1] += 1
        link = f'<a href="#{anchors[r.id]}">{escape(r.id)}</a>'
        rows.append(
            [
                raw_cell(link),
                cell(kind),
                raw_cell("<br>".join(escape(a) for a in attempted(r)) or "—"),
                raw_cell(_did(r)),
                raw_cell(_verdicts(r) or "—"),
                cell("resisted" if ok else r.status, "passed" if ok else r.status),
            ]
        )
    if not rows:
        return ""
    summary = "; ".join(f"{k}: {p} resisted, {f} not" for k, (p, f) in sorted(counts.items()))
    body = (
        f'<p class="muted">Attack cases (tag <code>attack</code>): {escape(summary)}. '
        "Injection attacks put instructions into tool results; social attacks are users who try "
        "to talk the agent past its policy.</p>"
        + table(["record", "kind", "attempted", "what the agent did", "security verdicts", "result"], rows)
    )
    return section(f"Attacks ({len(rows)})", body, "attacks")
