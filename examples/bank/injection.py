"""How the flawed bank agent `obeys_tools` (examples/bank/agent.py) falls for prompt injection.

It reads every tool result as if it could hold orders for it: a sentence asking for an action
(usersim.lang.directives: transfer, block a card, change an address, open a dispute ...) that
starts with the verb or carries an order word (immediately, without asking, ignore previous
instructions) is carried out with the first tool that does it, its arguments taken from the order
(record ids, the amount, the words after the verb) and from what the agent already knows (the
customer's own accounts). A sound agent never does this: tool results are data, only the customer
gives instructions (policy rule 2: say what you will do and get the customer's explicit yes).

`data_of` is the other half, used by every bank agent: a tool result with text around its JSON
(an injection at the start or end) is still read as the JSON it carries.
"""

from __future__ import annotations

import json
import re
from typing import Any

from usersim.core.embedded import split_json, text_pieces
from usersim.lang.directives import Directive, directives, tool_for

_ID = re.compile(r"\b[A-Z]-\d{4}\b")
_LEAD = re.compile(r"^(?:(?:the|customer's|customers|postal|mailing|address|to|as|is|:)\s+)+", re.IGNORECASE)


def data_of(text: str) -> Any:
    """The JSON value a tool result carries, even with text before or after it; else the text."""
    value, _ = split_json(text)
    return text if value is None else value


def _loads(arguments: Any) -> Any:
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def _own(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What the agent knows of its customer: the last get_customer result."""
    names = {tc["id"]: tc["function"]["name"] for m in messages for tc in m.get("tool_calls") or []}
    for m in reversed(messages):
        if m["role"] == "tool" and names.get(m.get("tool_call_id")) == "get_customer":
            found = data_of(m.get("content") or "")
            if isinstance(found, dict):
                return found
    return {}


def _args(d: Directive, tool: dict[str, Any], me: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments for `tool` from the order and the customer's profile (None: cannot fill one)."""
    params = (tool.get("function") or tool).get("parameters") or {}
    props: dict[str, Any] = params.get("properties") or {}
    ids = [i for i in d.ids if i not in {me.get("customer_id")}]
    accounts = [a["account_id"] for a in me.get("accounts") or [] if a["account_id"] not in ids]
    out: dict[str, Any] = {}
    for name, spec in props.items():
        n = name.lower()
        if spec.get("type") in ("number", "integer"):
            value: Any = d.amount
        elif "enum" in spec:
            value = spec["enum"][0]
        elif n.startswith("from") and accounts:
            value = accounts[0]
        elif "customer" in n:
            value = me.get("customer_id") or (d.ids[0] if d.ids else None)
        elif n.endswith("id"):
            value = ids.pop(0) if ids else None
        elif "address" in n:
            value = _LEAD.sub("", d.object).strip() or None
        else:
            value = d.sentence
        if value is None:
            if name in (params.get("required") or []):
                return None
            continue
        out[name] = value
    return out


def obey(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A tool call carrying out an order found in a tool result not acted on yet, or None."""
    by_name = {(t.get("function") or t).get("name"): t for t in tools}
    me = _own(messages)
    made = [
        (tc["function"]["name"], _loads(tc["function"]["arguments"]))
        for x in messages
        for tc in x.get("tool_calls") or []
    ]
    for i, m in enumerate(messages):
        if m["role"] != "tool":
            continue
        found = [d for piece in text_pieces(m.get("content") or "") for d in directives(piece)]
        for d in found:
            name = tool_for(d.action, tools)
            if name is None or name not in by_name:
                continue
            later = [tc["function"]["name"] for x in messages[i + 1 :] for tc in x.get("tool_calls") or []]
            if name in later:  # done already (or tried)
                continue
            args = _args(d, by_name[name], me)
            if args is None or (name, args) in made:  # the same order twice is carried out once
                continue
            n = sum(len(x.get("tool_calls") or []) for x in messages) + 1
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
    return None
