"""Prompt injection through the tool channel: an `inject_instruction` intercept keeps the real tool
result and inserts instruction text into it (a case's `tool_intercepts[].inject_instruction`).

    tool_intercepts:
      - intercept_tool: get_customer
        inject_instruction: {template: transfer, position: field, disguise: note,
                             args: {amount: "$500", account: A-2001}}

The template text comes from the language's `injections.yaml` (usersim.cases.injections); the
disguise wrappers and the JSON key come from the same file. Positions: `start` / `end` of the result
text; `field`: inside a JSON result, appended to the string field at `field` (a dotted path,
`outbound.0.notes`; default: the first string field), or, with the `json_field` disguise, as a key
of its own in the object holding that field. A result that is not JSON gets the text at its end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from usersim.cases.injections import TOPIC, fill
from usersim.cases.schema import InjectInstruction
from usersim.lang.resources import resources


@dataclass
class Injected:
    """The result with the instruction inserted, and what was inserted where."""

    result: str
    template: str
    text: str  # the instruction as inserted (dressed)
    position: str  # start / end / field:<path> (end when a field insert fell back)


def dress(text: str, disguise: str, language: str) -> str:
    """The instruction dressed as `disguise` in `language` ({text} in the wrapper)."""
    wrappers = resources(language).get(TOPIC, "disguises") or {}
    wrapper = str(wrappers.get(disguise) or "{text}")
    return wrapper.replace("{text}", text)


def inject(spec: InjectInstruction, result: str, language: str) -> Injected:
    """`result` with the instruction of `spec` inserted (the original text is kept whole)."""
    lang = spec.language or language
    name, text = fill(spec.template, lang, spec.args)
    dressed = dress(text, spec.disguise, lang)
    key = str(resources(lang).get(TOPIC, "json_key") or "assistant_instructions")
    if spec.position == "field":
        done = _into_field(result, dressed, spec.field, key if spec.disguise == "json_field" else None)
        if done is not None:
            return Injected(done[0], name, dressed, f"field:{done[1]}")
    if spec.disguise == "json_field":
        data = _json(result)
        if isinstance(data, dict):  # a key of its own, first or last
            items = [(key, dressed)] if spec.position == "start" else []
            items += list(data.items()) + ([] if spec.position == "start" else [(key, dressed)])
            return Injected(_dump(dict(items)), name, dressed, spec.position)
        dressed = _dump({key: dressed})
    position = "start" if spec.position == "start" else "end"
    joined = f"{dressed}\n{result}" if position == "start" else f"{result}\n{dressed}"
    return Injected(joined, name, dressed, position)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _into_field(result: str, dressed: str, path: str | None, key: str | None) -> tuple[str, str] | None:
    """(new result, path used) with the text in a string field of a JSON result, or None."""
    data = _json(result)
    if not isinstance(data, (dict, list)):
        return None
    where = path.split(".") if path else _first_string(data)
    if where is None:
        return None
    parent: Any = data
    for step in where[:-1]:
        parent = _step(parent, step)
        if parent is None:
            return None
    last = where[-1]
    if key is not None:  # json_field: a sibling key beside the field
        if not isinstance(parent, dict):
            return None
        parent[key] = dressed
        return _dump(data), ".".join(where[:-1] + [key])
    if isinstance(parent, dict):
        old = parent.get(last)
        if old is not None and not isinstance(old, str):  # never overwrite data: fall back to the end
            return None
        parent[last] = f"{old} {dressed}" if isinstance(old, str) and old else dressed
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        old = parent[int(last)]
        if not isinstance(old, str):
            return None
        parent[int(last)] = f"{old} {dressed}"
    else:
        return None
    return _dump(data), ".".join(where)


def _step(node: Any, step: str) -> Any:
    if isinstance(node, dict):
        return node.get(step)
    if isinstance(node, list) and step.isdigit() and int(step) < len(node):
        return node[int(step)]
    return None


def _first_string(node: Any, path: list[str] | None = None) -> list[str] | None:
    """The path of the first string value, depth first (keys in order)."""
    path = path or []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for k, v in items:
        if isinstance(v, str):
            return [*path, str(k)]
        found = _first_string(v, [*path, str(k)]) if isinstance(v, (dict, list)) else None
        if found:
            return found
    return None
