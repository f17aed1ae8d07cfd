"""Persona lint's constraint parts: which proposal breaks each constraint (a price a quarter over
the limit, half the minimum data, the required feature negated), written from the language
layer's `probes.proposals` templates."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from usersim.lang import quantity
from usersim.simulator.fact_check import measured

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# Legacy keys: the unit a breaking value is written with, (zh, en)
_LEGACY_UNITS = {
    "max_price": ("元", "$"),
    "max_total_price_wan": ("万", " 万"),
    "max_weight_kg": (" 公斤", " kg"),
}


def _scaled(written: str, factor: float) -> str | None:
    """`written` ("10 GB", "$40", "60 元") with its number multiplied by `factor`."""
    m = _NUMBER.search(written)
    if not m:
        return None
    number = float(m.group(0).replace(",", "")) * factor
    shown = f"{number:,.0f}" if number >= 10 else f"{number:g}"
    return written[: m.start()] + shown + written[m.end() :]


def _legacy_over(limit: object, key: str, language: str) -> str | None:
    """A value that breaks a legacy max_* constraint by a quarter, written as an agent would."""
    try:
        number = float(str(limit).replace(",", ""))
    except ValueError:
        return None
    value = f"{number * 1.25:,.0f}" if number >= 10 else f"{number * 1.25:g}"
    zh, en = _LEGACY_UNITS[key]
    if language == "zh":
        return f"{value}{zh}"
    return f"${value}" if key == "max_price" else value + en


def breaking_proposals(
    constraints: dict[str, Any], templates: dict[str, str], language: str
) -> Iterator[tuple[tuple, str, str]]:
    """(path of the constraint, how it reads, a proposal breaking it) for each constraint a
    `probes.proposals` template exists for: legacy keys, `min.<measure>` (half the minimum),
    `max.<measure>` (a quarter over), `require` (the feature negated), `exclude` (the word offered)."""
    for key, limit in constraints.items():
        if key in _LEGACY_UNITS and key in templates:
            value = _legacy_over(limit, key, language)
            if value:
                yield (key,), f"{key} = {limit}", templates[key].format(value=value)
        elif key in ("min", "max") and key in templates and isinstance(limit, dict):
            for measure, raw in limit.items():
                value = _scaled(str(raw), 0.5 if key == "min" else 1.25)
                if value and quantity.parse(str(raw)) is not None:
                    yield (key, measure), f"{key}.{measure} = {raw}", templates[key].format(value=value)
        elif key in ("require", "exclude") and key in templates:
            words = limit if isinstance(limit, list) else [limit]
            for i, word in enumerate(words):
                where = (key,) if key == "exclude" else (key, i)
                yield where, f"{key} {word}", templates[key].format(value=word)
                if key == "exclude":
                    break  # one excluded word shows whether exclusions are held


def other_digits(value: str) -> str | None:
    """The value with every digit moved on by one ("Building 4, Floor 2" -> "Building 5, Floor 3"),
    or None when it has no digit (a name cannot be changed without knowing its kind)."""
    if not any(ch.isdigit() for ch in value):
        return None
    return "".join(str((int(ch) + 1) % 10) if ch.isdigit() else ch for ch in value)


def contradicting_proposals(facts: list[tuple[str, str]], templates: list[str]) -> list[tuple[int, str]]:
    """(index of the fact, a proposal naming it with other digits) for each (label, value) with a
    digit, in every `templates` wording (probes.yaml `fact_proposals`). Dates and quantities are
    left out: the simulator holds them as constraints, not as facts to correct (fact_check)."""
    out = []
    for j, (label, value) in enumerate(facts):
        wrong = None if measured(value) else other_digits(value)
        if wrong is not None:
            out += [(j, str(t).format(label=label, value=wrong)) for t in templates]
    return out
