"""Personal data in text: emails, phone numbers and card-like numbers, masked (the patterns are
data: usersim/lang/data/pii.yaml)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from usersim.core.yamlfile import load_trusted
from usersim.lang.resources import DATA


@lru_cache(maxsize=1)
def _rules() -> tuple[tuple[str, str, tuple[re.Pattern[str], ...]], ...]:
    data = load_trusted((DATA / "pii.yaml").read_text(encoding="utf-8"))
    return tuple(
        (kind, str(data[kind]["mask"]), tuple(re.compile(p) for p in data[kind]["patterns"]))
        for kind in data["order"]
    )


def mask_pii(text: str) -> tuple[str, dict[str, int]]:
    """(`text` with emails, card-like numbers and phone numbers masked, how many of each)."""
    counts: dict[str, int] = {}
    for kind, mask, patterns in _rules():
        for pat in patterns:
            text, n = pat.subn(mask, text)
            if n:
                counts[kind] = counts.get(kind, 0) + n
    return text, counts


def mask_value(value: Any, counts: dict[str, int] | None = None) -> Any:
    """A copy of a JSON-like value with every string masked; `counts` (if given) is added to."""
    if isinstance(value, dict):
        return {k: mask_value(v, counts) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_value(v, counts) for v in value]
    if isinstance(value, str):
        out, found = mask_pii(value)
        if counts is not None:
            for k, n in found.items():
                counts[k] = counts.get(k, 0) + n
        return out
    return value
