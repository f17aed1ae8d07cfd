"""Default factories for pydantic fields: `Field(default_factory=new_list)` instead of `list`.

Pydantic asks each default factory for its signature when it builds a model (does it take the
validated data?); for the built-in types `list` and `dict` that is `inspect.signature` parsing
their text signatures through the tokenizer, ~0.25 ms a field. A model of a case or persona has
dozens of such fields, so every command that validates a file paid ~10 ms for it. A Python
function answers at once, and makes the same empty value.
"""

from __future__ import annotations

from typing import Any


def new_list() -> list[Any]:
    """A fresh empty list."""
    return []


def new_dict() -> dict[Any, Any]:
    """A fresh empty dict."""
    return {}
