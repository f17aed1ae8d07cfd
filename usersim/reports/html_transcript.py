"""The transcript viewer of report.html: one collapsible section per conversation.

Transcripts hold arbitrary text (user input, model output, tool JSON), so every value goes
through `html.escape` before it reaches the page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from typing import Any

from usersim.core.events import ToolEvent
from usersim.core.record import RunRecord, TranscriptMessage

_OPEN_HISTORY = 6  # replayed histories longer than this start folded


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _pretty(content: str) -> str:
    """Tool results are usually one-line JSON; indent them so a reader can scan the fields."""
    stripped = content.strip()
    if not stripped.startswith(("{", "[")):
        return content
    try:
        return json.dumps(json.loads(stripped), ensure_ascii=False, indent=1)
    except json.JSONDecodeError:
        return content


def _call_parts(call: dict[str, Any]) -> tuple[str, str]:
    """(name, pretty arguments) of a stored tool call, flat {name, arguments} or OpenAI {function: ..}."""
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return str(fn.get("name", "?")), args  # show what the agent sent, even if malformed
    return str(fn.get("name", "?")), json.dumps(args, ensure_ascii=False, indent=1)


def _events_by_message(record: RunRecord) -> dict[int, ToolEvent]:
    """Tool events keyed by the transcript index of their result message.

    Older records may lack `message_index`; then tool messages and events are paired in order.
    """
    by_index = {e.message_index: e for e in record.tool_trace if e.message_index >= 0}
    if by_index or not record.tool_trace:
        return by_index
    tool_msgs = [i for i, m in enumerate(record.transcript) if m.role == "tool"]
    return dict(zip(tool_msgs, record.tool_trace))


def _turns_text(turns: list[int]) -> str:
    """1, 3-5: runs of consecutive turns."""
    runs: list[list[int]] = []
    for t in turns:
        if runs and t == runs[-1][-1] + 1:
            runs[-1].append(t)
        else:
            runs.append([t])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def played_by(record: RunRecord) -> str | None:
    """Who played each user turn of a conversation a person took part in (`usersim play`), e.g.
    "person: turns 2; rule: turns 1, 3-5"; None when no person played."""
    marks = [(m.turn, m.by) for m in record.transcript if m.role == "user" and m.turn and m.by]
    if not any(by == "human" for _, by in marks):
        return None
    human = [t for t, by in marks if by == "human"]
    other = [t for t, by in marks if by == "simulator"]
    sim = (record.simulator or "").removeprefix("human+") or "simulator"
    text = f"person: turn{'s' if len(human) > 1 else ''} {_turns_text(human)}"
    if other:
        text += f"; {sim}: turn{'s' if len(other) > 1 else ''} {_turns_text(other)}"
    return text


def _message(
    anchor: str, i: int, m: TranscriptMessage, replayed: bool, event: ToolEvent | None, mark_by: bool = False
) -> str:
    tags = []
    if mark_by and m.by:  # a conversation a person took part in: who played this turn
        who = "played by the person" if m.by == "human" else "played by the simulator"
        tags.append(f'<span class="tag by-{escape(m.by)}">{who}</span>')
    if replayed:
        tags.append('<span class="tag">replayed history</span>')
    if event is not None and event.intercepted:
        tags.append('<span class="tag intercepted">intercepted</span>')
    if m.is_error or (event is not None and event.is_error):
        tags.append('<span class="tag is-error">error</span>')
    if event is not None:
        tags.append(f'<span class="tag">call #{event.call_number}</span>')
    turn = "" if m.turn is None else f" · turn {m.turn}"
    name = f" · {escape(m.name)}" if m.name else ""
    head = f'<div class="head">#{i}{turn} · <b>{escape(m.role)}</b>{name}{"".join(tags)}</div>'
    body = f"<pre>{escape(_pretty(m.content) if m.role == 'tool' else m.content)}</pre>" if m.content else ""
    calls = ""
    for call in m.tool_calls or []:
        cname, args = _call_parts(call)
        calls += f'<div class="call">→ <b>{escape(cname)}</b><pre>{escape(args)}</pre></div>'
    classes = f"msg {escape(m.role)}" + (" replayed" if replayed else "")
    return f'<div class="{classes}" id="{anchor}-m{i}">{head}{body}{calls}</div>'


def _verdicts(anchor: str, record: RunRecord) -> str:
    if not record.verdicts:
        return '<p class="muted">No verdicts.</p>'
    rows = []
    for v in record.verdicts:
        evidence = "—"
        if v.evidence_turn is not None:
            evidence = f'<a href="#{anchor}-m{v.evidence_turn}">#{v.evidence_turn}</a>'
        informational = "" if v.counts_toward_status else ' <span class="tag">info</span>'
        rows.append(
            f'<tr><td>{escape(v.judge)}{informational}</td><td class="{escape(v.verdict)}">{escape(v.verdict)}</td>'
            f"<td>{escape(v.reason)}</td><td>{escape(v.criterion or '')}</td>"
            f'<td class="num">{_num(v.score)}</td><td>{evidence}</td></tr>'
        )
    return (
        "<table><tr><th>judge</th><th>verdict</th><th>reason</th><th>criterion</th><th>score</th>"
        f"<th>evidence</th></tr>{''.join(rows)}</table>"
    )


def _sim_events(record: RunRecord) -> str:
    """The simulator trace: retries, rejected outputs, stops, scripted events, guard hits."""
    if record.mode != "organic":
        return ""
    if not record.sim_events:
        return '<h3>Simulator events</h3><p class="muted">None recorded.</p>'
    rows = "".join(
        f'<tr><td class="num">{e.turn}</td><td><span class="tag sim-{escape(e.kind)}">{escape(e.kind)}</span></td>'
        f"<td>{escape(e.detail)}</td></tr>"
        for e in record.sim_events
    )
    return (
        f"<h3>Simulator events ({len(record.sim_events)})</h3>"
        f'<table class="sim-events"><tr><th>turn</th><th>kind</th><th>detail</th></tr>{rows}</table>'
    )


# Stands for a section's anchor in a section rendered before its place on the page is known
# (`section`): every text of a record reaches the page escaped, so "<" never comes from one.
ANCHOR = "<#>"


def render_record(record: RunRecord, n: int) -> str:
    """One conversation as a <details> block; `n` makes its anchors unique in the page."""
    return _render(record, f"r{n}")


def section(record: RunRecord) -> str:
    """`render_record` with its anchor left open (ANCHOR): made while a run plays, numbered when the
    page is put together (`placed`)."""
    return _render(record, ANCHOR)


def placed(section: str, n: int) -> str:
    """A `section` as `render_record(record, n)` renders it."""
    return section.replace(ANCHOR, f"r{n}")


def _render(record: RunRecord, anchor: str) -> str:
    r = record
    suspect = ' <span class="tag suspect">simulator-suspect</span>' if r.simulator_suspect else ""
    blame = (
        f' <span class="tag blame-{escape(r.blame)}">blame {escape(r.blame)}</span>'
        if r.blame and r.blame != "none"
        else ""
    )
    head = (
        f'<b>{escape(r.id)}</b> <span class="{escape(r.status)}">{escape(r.status)}</span>{blame}{suspect}'
        f" · score {_num(r.score)} · {r.turns} turn{'' if r.turns == 1 else 's'} · stop {escape(r.stop_reason or '—')}"
        f' <span class="muted">{escape(r.dimension)}{"-" + escape(r.category) if r.category else ""}'
        f" · {escape(r.difficulty or '')} · {escape(r.mode)}</span>"
    )
    facts = [
        ("case", r.case_id),
        ("variant", r.variant.key()),
        ("agent", r.agent),
        ("simulator", r.simulator or "—"),
        ("judge model", r.judge_model or "—"),
        ("scoring", r.scoring),
        ("stop detail", r.stop_detail or "—"),
        ("blame", r.blame or "—"),
        ("tags", ", ".join(r.tags) or "—"),
        ("seed", r.seed),
        ("duration", f"{r.duration_s:.2f}s"),
    ]
    seat = played_by(r)
    if seat:
        facts.append(("played by", seat))
    if r.branch:
        facts.append(("branch", json.dumps(r.branch, ensure_ascii=False)))
    if r.system_config:
        facts.append(("system config", json.dumps(r.system_config, ensure_ascii=False)))
    if r.simulator_suspect:
        failed = [v.judge for v in r.verdicts if v.judge.startswith("fidelity") and v.verdict == "fail"]
        facts.append(
            ("simulator-suspect", "fidelity failed: " + ", ".join(failed) + " (not charged to the agent)")
        )
    if r.error:
        facts.append(("harness error", r.error))
    skills = [f"{e.skill} ({e.kind}, turn {e.turn})" for e in r.skill_events]
    if skills:
        facts.append(("skills", "; ".join(skills)))
    fact_rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in facts)
    events = _events_by_message(r)
    rendered = [
        _message(
            anchor, i, m, i < r.history_len, events.get(i) if m.role == "tool" else None, seat is not None
        )
        for i, m in enumerate(r.transcript)
    ]
    history = min(r.history_len, len(rendered))
    messages = "".join(rendered[history:])
    if history > _OPEN_HISTORY:
        # long replayed histories (C5 runs to 32k tokens) would bury the live turns; fold them
        messages = (
            f'<details class="history"><summary>{history} replayed history messages</summary>'
            f"{''.join(rendered[:history])}</details>{messages}"
        )
    else:
        messages = "".join(rendered[:history]) + messages
    return (
        f'<details class="rec" id="{anchor}" data-status="{escape(r.status)}" data-dimension="{escape(r.dimension)}"'
        f' data-blame="{escape(r.blame or "")}" data-suspect="{"1" if r.simulator_suspect else "0"}">'
        f"<summary>{head}</summary><div>"
        f'<table class="meta">{fact_rows}</table>'
        f"<h3>Verdicts</h3>{_verdicts(anchor, r)}"
        f"{_sim_events(r)}"
        f"<h3>Transcript ({len(r.transcript)} messages)</h3>{messages or '<p class=muted>Empty transcript.</p>'}"
        "</div></details>"
    )


def _options(values: list[str]) -> str:
    return "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)


def render_viewer(records: list[RunRecord], sections: Mapping[str, str] | None = None) -> str:
    """The filter bar (status / dimension / text) and every record's section (`sections`: record id
    -> its `section`, made beforehand; the others are rendered here)."""
    statuses = ["passed", "failed", "error", "unjudged"]
    dims = sorted({r.dimension for r in records})
    bar = (
        '<div id="filters">'
        f'<select id="f-status" aria-label="status"><option value="">all statuses</option>{_options(statuses)}</select>'
        f'<select id="f-dim" aria-label="dimension"><option value="">all dimensions</option>{_options(dims)}</select>'
        '<input id="f-text" type="search" placeholder="filter by text: case id, reason, transcript…">'
        '<span id="f-count" class="muted"></span></div>'
    )
    made = sections or {}
    return bar + "".join(
        placed(made[r.id], n) if r.id in made else render_record(r, n) for n, r in enumerate(records)
    )
