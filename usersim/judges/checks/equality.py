"""Typed equality of an expected value (from a case file) and an actual one (a tool argument, a
database field): what a plain matcher means.

Exact, never containment: text is compared after Unicode normalisation (NFKC: full-width letters
and digits are the ASCII ones), trimming, collapsing inner whitespace and case-folding; numbers and
money by value (1200 == "¥1,200" == "1,200.00", "2 人" != "2 kg"); dates by value, an expected
range (6 月中旬, 下周五 resolved against context.current_date) accepting any day inside it. Places
are not collapsed here: 上海 == PVG only through the explicit `place:` matcher (`same_place`).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from typing import Any

from usersim.judges.checks.normalize import is_quantity, normalize_place, parse_quantity, resolve_date
from usersim.sandbox.places import resolve_place

# The canonical forms a tool argument carries a date in: 2026-06-15, 2026/06/15, 2026-06-15T10:00.
_ISO_DATE = re.compile(r"\s*\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T\s].*)?")


def text_key(value: Any) -> str:
    """The text form compared: NFKC, whitespace runs as one space, trimmed, case-folded."""
    return " ".join(unicodedata.normalize("NFKC", str(value)).split()).casefold()


_ZERO_LED = re.compile(r"\s*0\d+\s*")


def _number(value: Any) -> tuple[float, str | None] | None:
    """(value, dimension) of a value that is wholly one quantity (1200, "¥1,200", "两个人"), else
    None. A digit string led by a zero ("0042") is an identifier, not a number."""
    if not is_quantity(value) or (isinstance(value, str) and _ZERO_LED.fullmatch(value)):
        return None
    return parse_quantity(value)


def _day_range(value: Any, today: date | None) -> tuple[date, date] | None:
    return resolve_date(value if isinstance(value, (str, date)) else str(value), today)


def _actual_date(value: Any) -> tuple[date, date] | None:
    """An actual value read as a date only in a canonical form (a date, or ISO text): prose that
    happens to name a weekday ("周一会议") is text, not a date."""
    if isinstance(value, date):
        return value, value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        return resolve_date(value)
    return None


def scalar_equal(expected: Any, actual: Any, today: date | None = None) -> bool:
    """Exact typed equality of two scalars (see the module docstring)."""
    if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
        return expected == actual
    e_num, a_num = _number(expected), _number(actual)
    if e_num is not None and a_num is not None:
        # a bare number is a price written without its currency (1200 == "¥1,200") or a count of
        # people, never a count of other things ("4" != "4 bags": exact, use contains: for prose)
        dims = {e_num[1], a_num[1]}
        same_dimension = len(dims) == 1 or (None in dims and dims <= {None, "money", "count"})
        return same_dimension and abs(e_num[0] - a_num[0]) < 1e-9
    e_day = _day_range(expected, today) if isinstance(expected, (str, date)) else None
    a_day = _actual_date(actual) if e_day is not None else None
    if e_day is not None and a_day is not None:
        return e_day[0] <= a_day[0] and a_day[1] <= e_day[1]
    return text_key(expected) == text_key(actual)


def values_equal(expected: Any, actual: Any, today: date | None = None) -> bool:
    """Exact equality after normalisation: lists element by element in order, objects key by key
    (same keys), scalars by `scalar_equal`. A scalar never equals a list or an object."""
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(map(str, expected)) == set(map(str, actual))
            and all(values_equal(v, actual.get(k, actual.get(str(k))), today) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(values_equal(e, a, today) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(actual, (dict, list)):
        return False
    return scalar_equal(expected, actual, today)


def known_place(text: Any) -> bool:
    """Whether `text` names a city, airport or sight the place data knows (for validating `place:`)."""
    return normalize_place(text) is not None


def same_place(expected: Any, actual: Any) -> bool:
    """The `place:` matcher: the same city (a city, its aliases, its airports' codes and names all
    count as the city), or the same sight. Two airports must be the same airport: {place: PVG}
    accepts PVG, 浦东 and 上海, not SHA."""
    if not isinstance(actual, str):
        return False
    e_place, a_place = normalize_place(expected), normalize_place(actual)
    if e_place is None or a_place is None or e_place != a_place:
        return False
    e_ref, a_ref = resolve_place(expected), resolve_place(actual)
    if e_ref is not None and a_ref is not None and e_ref.kind == a_ref.kind == "airport":
        return e_ref.name == a_ref.name
    return True
