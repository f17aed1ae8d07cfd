"""JSON embedded in text: a tool result is JSON, but an injected note (or a chatty tool) can put text
before or after it. Every reader of tool results — the reference agent, the example agents — reads
the JSON it carries and, where it looks for orders, the text around it too."""

from __future__ import annotations

import json
import re
from typing import Any

_OPENER = re.compile(r"[\[{]")


def split_json(text: str) -> tuple[Any, str]:
    """(the JSON object or array a text carries, or None; the text around it). A whole-text JSON
    value of any kind counts; inside text only the first object or array that parses does."""
    if not isinstance(text, str):
        return None, ""
    try:
        return json.loads(text), ""
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for m in _OPENER.finditer(text):
        try:
            value, end = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, (dict, list)):
            return value, text[: m.start()] + "\n" + text[end:]
    return None, text


def strings_in(value: Any) -> list[str]:
    """Every string inside a JSON value, depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def text_pieces(text: str) -> list[str]:
    """What a reader of a tool result reads: the text around its JSON and every string inside it."""
    value, rest = split_json(text)
    return [p for p in [rest.strip(), *strings_in(value)] if p]
