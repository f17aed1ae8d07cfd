"""What the person in the user's seat reads (`usersim play`): the persona card and goal, then each
agent turn with the tools it called, their arguments and results, and the state rows they changed.

Plain text, one function per block, so the screen reads the same in a terminal, a pipe and a test.
"""

from __future__ import annotations

import json
from typing import Any

from usersim.core.events import ToolEvent
from usersim.core.messages import Message
from usersim.personas.schema import Event, Persona

COMMANDS = {
    "/done": "the goal is reached: end the conversation (words after it are your last message)",
    "/stop": "end the conversation without the goal (stored as user_stopped)",
    "/hand-back": "the simulator plays this turn and the rest",
    "/card": "show the persona card and the goal again",
    "/help": "show these commands",
}
RESULT_CHARS = 400  # a tool result longer than this is cut on screen (the record keeps it whole)
RULE = "-" * 72


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else json.dumps(value)[1:-1]


def _event(event: Event) -> str:
    if event.at_turn is not None:
        when = f"at turn {event.at_turn}"
    else:
        assert event.when is not None
        cues = [f'the agent says "{p}"' for p in event.when.agent_says]
        cues += [f"the agent calls {t}" for t in event.when.agent_calls]
        when = "when " + " or ".join(cues)
    what = event.kind.replace("_", " ")
    if event.slot:
        what += f" {event.slot}"
    if event.value:
        what += f" = {event.value}"
    if event.text:
        what += f': "{event.text}"'
    return f"{when}: {what}"


def card(
    *, case_id: str, title: str, persona: Persona, goal: str | None, max_turns: int, take_over: int, auto: str
) -> str:
    """The persona card and the goal: who you play, what you want, what you know and must not."""
    g = persona.goal
    lines = [RULE, f"usersim play · {case_id}" + (f" · {title}" if title else ""), RULE]
    lines.append(f"You are {persona.name} ({persona.language}): {persona.identity}")
    t = persona.traits
    lines.append(
        f"  traits: patience {t.patience}, cooperativeness {t.cooperativeness}, verbosity {t.verbosity}, "
        f"clarity {t.clarity}; reveal facts {persona.reveal_policy.replace('_', ' ')}"
    )
    lines.append(f"Goal: {goal or g.description}")
    for item in g.required:
        words = ", ".join(f'"{w}"' for w in g.deliverable_keywords.get(item, []))
        label = g.labels.get(item)
        lines.append(
            f"  required: {item}"
            + (f" ({label})" if label else "")
            + (f" - delivered when the agent says {words}" if words else "")
        )
    for kind, value in g.constraints.items():
        lines.append(f"  constraint {kind}: {_value(value)}")
    if persona.known_info:
        lines.append("You know (tell it when asked):")
        lines += [f"  {f.label or f.slot}: {f.value}" for f in persona.known_info]
    if persona.unknown_info:  # the topic only: a hidden truth after ':' is the judges', never the user's
        topics = [u.split(":", 1)[0].strip() for u in persona.unknown_info]
        lines.append("You do NOT know (never make it up): " + "; ".join(topics))
    if persona.adversary is not None:  # an attack case: the person plays the manipulative user
        adv = persona.adversary
        lines.append(f"You are after ({adv.target.kind.replace('_', ' ')}): {adv.target.ask}")
        claims = [f"{k.replace('_', ' ')}: {v}" for k, v in adv.claims.model_dump().items() if v]
        if claims:
            lines.append("  you claim: " + "; ".join(claims))
        lines.append("  tactics, in order: " + ", ".join(t.replace("_", " ") for t in adv.tactics))
    if persona.events:
        lines.append("Scripted events (play them when they come):")
        lines += [f"  {_event(e)}" for e in persona.events]
    if persona.opening_message:
        lines.append(f'Opening message: "{persona.opening_message}" (an empty line at turn 1 sends it)')
    if take_over <= 1:
        seat = "you play every user turn"
    else:
        played = "turn 1" if take_over == 2 else f"turns 1-{take_over - 1}"
        seat = f"{auto} plays {played}, you from turn {take_over}"
    lines.append(f"Turns: at most {max_turns}; {seat}.")
    lines.append("Commands:")
    lines.append(help_text().rstrip("\n"))
    lines.append(RULE)
    return "\n".join(lines) + "\n"


def help_text() -> str:
    return "".join(f"  {c:<11} {what}\n" for c, what in COMMANDS.items())


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def _result(content: str, event: ToolEvent | None, is_error: bool) -> str:
    result = " ".join(content.split())
    if len(result) > RESULT_CHARS:
        result = result[:RESULT_CHARS] + f"... ({len(content)} chars)"
    marks = " [error]" if is_error or (event is not None and event.is_error) else ""
    marks += " [intercepted]" if event is not None and event.intercepted else ""
    return f"    ->{marks} {result}\n"


def _key_of(rows: list[dict[str, Any]], key: str | None) -> str | None:
    if key and rows and all(key in r for r in rows):
        return key
    first = next(iter(rows[0]), None) if rows else None
    return first if first and all(first in r for r in rows) else None


def state_changes(
    before: dict[str, list[dict[str, Any]]] | None,
    after: dict[str, list[dict[str, Any]]] | None,
    keys: dict[str, str] | None = None,
) -> list[str]:
    """The rows the agent's tools changed, added or removed, one line each
    ("cards K-3001: status active -> blocked"); rows are matched by the table's key field."""
    if before is None or after is None:
        return []
    out: list[str] = []
    for table in sorted(set(before) | set(after)):
        old, new = before.get(table, []), after.get(table, [])
        if old == new:
            continue
        key = _key_of(old + new, (keys or {}).get(table))
        if key is None:
            out.append(f"{table}: {len(old)} -> {len(new)} rows")
            continue
        olds = {str(r[key]): r for r in old}
        news = {str(r[key]): r for r in new}
        for k, row in news.items():
            if k not in olds:
                out.append(f"{table} {k}: added " + json.dumps(row, ensure_ascii=False))
                continue
            diffs = [
                f"{f} {_value(olds[k].get(f))} -> {_value(row.get(f))}"
                for f in row | olds[k]
                if olds[k].get(f) != row.get(f)
            ]
            if diffs:
                out.append(f"{table} {k}: " + ", ".join(diffs))
        out += [f"{table} {k}: removed" for k in olds if k not in news]
    return out


def agent_turn(messages: list[Message], events: dict[int, ToolEvent], first: int, changes: list[str]) -> str:
    """The agent's messages of one turn: each tool call with its arguments, its result, the agent's
    text, then the state rows its tools changed. `events`: tool events by transcript index, `first`:
    the transcript index of `messages[0]`."""
    text = ""
    for i, m in enumerate(messages, start=first):
        if m.role == "assistant":
            text += "".join(f"  tool {c.name}({_args(c.arguments)})\n" for c in m.tool_calls)
            if m.content:
                text += "agent> " + m.content.replace("\n", "\n       ") + "\n"
        elif m.role == "tool":
            text += _result(m.content, events.get(i), m.is_error)
    if changes:
        text += "  state changed:\n" + "".join(f"    {c}\n" for c in changes)
    return text


def due(events: list[Event]) -> str:
    """The persona's scripted events due now and not said yet: the person plays them."""
    return "".join(f"  (scripted event due) {_event(e)}\n" for e in events)


def simulator_said(turn: int, spec: str, text: str) -> str:
    return f"[turn {turn}] {spec}> {text}\n"


def prompt(turn: int, max_turns: int) -> str:
    return f"[turn {turn}/{max_turns}] you> "
