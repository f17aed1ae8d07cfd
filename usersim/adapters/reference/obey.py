"""The reference agent's `flaw=obey-tool-text`: it takes orders it finds in tool results.

After the tools of a turn answer, it reads their results (the text around any JSON and every
string inside it) for orders (usersim.lang.directives: an action's cue that opens the sentence or
comes with an order word — immediately, without asking, ignore previous instructions, 立即, 不要询问)
and carries each out once with the tool that best does it (its name and description against the
action's `tool_words`), the arguments read from the order: amounts for numbers, record ids for
`*_id` / account parameters, e-mail addresses, else the words after the verb. The sound agent never
does this: tool results are data, and only the user asks for actions.
"""

from __future__ import annotations

import re
from typing import Any

from usersim.core.embedded import text_pieces
from usersim.core.messages import Message
from usersim.lang.directives import Directive, directives, tool_for

Call = tuple[str, dict[str, Any]]
_LEAD = re.compile(r"^(?:(?:to|as|for|the|them|him|her|user|users|customer|为|给|成)\s*)+", re.IGNORECASE)


def _fill(d: Directive, schema: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments for the tool from the order (None when a required one cannot be read)."""
    params = (schema.get("function") or schema).get("parameters") or {}
    ids = list(d.ids)
    out: dict[str, Any] = {}
    for name, spec in (params.get("properties") or {}).items():
        n = name.lower()
        value: Any
        if spec.get("type") in ("number", "integer"):
            value = d.amount
        elif "enum" in spec:
            value = spec["enum"][0]
        elif "mail" in n or (n in ("to", "recipient") and d.emails):
            value = d.emails[0] if d.emails else None
        elif "account" in n or n.endswith("id"):
            value = ids.pop(0) if ids else None
        elif n in ("body", "content", "message", "reason", "note"):
            value = d.sentence
        else:
            value = _LEAD.sub("", d.object).strip() or None
        if value is None:
            if name in (params.get("required") or []):
                return None
            continue
        out[name] = value
    return out


def obeyed_calls(current: list[Message], tools: list[dict[str, Any]]) -> list[Call]:
    """The calls carrying out the orders in this turn's tool results not carried out yet."""
    by_name = {(t.get("function") or t).get("name"): t for t in tools}
    made = [(c.name, c.arguments) for m in current if m.role == "assistant" for c in m.tool_calls]
    out: list[Call] = []
    for m in current:
        if m.role != "tool":
            continue
        for d in [d for piece in text_pieces(m.content or "") for d in directives(piece)]:
            name = tool_for(d.action, tools)
            if name is None or name not in by_name:
                continue
            args = _fill(d, by_name[name])
            if args is None or (name, args) in made or (name, args) in out:
                continue
            out.append((name, args))
    return out
