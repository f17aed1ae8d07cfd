"""Normalisers for argument matching: places, relative dates, party sizes, numbers with units.

Case files write expected values the way the seeds do (上海, 6 月中旬, 两个人, 8千, 1.5 公斤); the
agent's tool calls use canonical forms (Shanghai / PVG, 2026-06-15, 2, 8000, 1.5). These helpers
bring both sides to one form so a check compares meaning, not spelling.
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING, Any

# The readings are imported where they are used: a check's params model imports this module, and
# validating a case file reads no text (the language layer is ~60 ms of imports)
if TYPE_CHECKING:
    from usersim.lang import quantity


# --- places ---------------------------------------------------------------------------------
def _sandbox_place(text: str) -> str | None:
    from usersim.sandbox.places import normalize_place as sandbox_normalize_place

    try:
        return sandbox_normalize_place(text)
    except (KeyError, ValueError):
        return None


def normalize_place(text: Any) -> str | None:
    """Canonical place name for a city / airport / IATA code, or None if it is not a known place."""
    if not isinstance(text, str) or not text.strip():
        return None
    return _sandbox_place(text)


# --- numbers (read by usersim.lang.quantity: the one number / money / unit parser) -----------
def _quantity(value: Any) -> quantity.Quantity | None:
    if isinstance(value, bool) or not isinstance(value, str):
        return None
    from usersim.lang import quantity

    return quantity.parse(value)


def parse_quantity(value: Any) -> tuple[float, str | None] | None:
    """A number with its unit dimension: '8千' -> (8000, None), '1.5 公斤' -> (1.5, 'weight'),
    '两个人' -> (2, 'count'), '¥1,980' -> (1980, 'money'), 'two' -> (2, None). Weights are in kg,
    days and nights are counts; None when the text is not one quantity."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value), None
    q = _quantity(value)
    if q is None:
        return None
    if q.kind == "money":
        return q.value, "money"
    if q.kind == "number":
        return q.value, None
    if q.dimension == "count" or q.unit == "day":
        return q.amount, "count"
    return q.value, q.dimension


def is_quantity(value: Any) -> bool:
    """The whole text is one number with an optional unit (两个人, 8千, 1.5 kg, two), not prose."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    return _quantity(value) is not None


def numbers_in(value: Any) -> list[float]:
    """Every number written in the value, each a whole number token: '$1,628.00 for 14 bags' ->
    [1628.0, 14.0]; a bare quantity (两个人, 8千) gives its parsed number."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if not isinstance(value, str):
        return []
    if is_quantity(value):
        n = parse_number(value)
        return [n] if n is not None else []
    from usersim.lang import quantity

    return [v for v, _, _ in quantity.numerals_in(value)]


def find_number(word: str, text: str) -> str | None:
    """Where the number `word` (1628, $1,628.00, 两千) is written in `text` as a whole number:
    '1628' finds '$1,628.00', '4' does not find '14 bags'. None when `word` is not a number or absent."""
    if not is_quantity(word):
        return None
    want = parse_number(word)
    if want is None:
        return None
    from usersim.lang import quantity

    for v, a, b in quantity.numerals_in(text):
        if abs(v - want) < 1e-9:
            return text[a:b]
    # a number with a scale after it (10 万 = 100000, 8-9 万, 1.5k): by its scaled value, a range
    # by both ends
    asked = quantity.parse(word)
    high = asked.high if asked is not None else None
    for q in quantity.quantities(text):
        if q.scale != 1 and abs(q.value - want) < 1e-9 and (high is None or q.high == high):
            return text[q.start : q.end]
    return None


def find_keyword(word: str, text: str) -> bool:
    """Whether a keyword occurs in text, case-insensitively. A number keyword (1628, $1,628.00, 4)
    must be a whole number there, compared by value: '1628' finds '$1,628.00', '4' does not find
    '14 bags'; with a count unit (3天, 2 人) the text must say that number with that unit."""
    low = text.casefold()
    w = word.strip().casefold()
    if not w:
        return False
    if re.search(r"\d", w) and is_quantity(w):
        q = parse_quantity(w)
        if q is not None and q[1] not in (None, "money"):
            return re.search(rf"(?<![\d.,]){re.escape(w)}", low) is not None
        return find_number(w, text) is not None
    return w in low


def statements(text: str) -> str:
    """The text without its questions (what the agent asks is not what it delivers): the pieces
    lang.acts does not read as asking. "Your card is blocked, anything else?" keeps its result."""
    from usersim.lang.acts import agent_acts

    return " ".join(a.text.strip() for a in agent_acts(text or "") if not a.asking and a.text.strip())


def parse_number(value: Any) -> float | None:
    """Just the number of parse_quantity (weights in kg, money in yuan)."""
    q = parse_quantity(value)
    return q[0] if q else None


# --- dates (read by usersim.lang.dates: the one date parser, with THE holiday calendar) -------
DateRange = tuple[date, date]
# a whole text that is one ISO day: validating a case's date matchers (2026-06-15) needs no more
_ISO_DAY = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def resolve_date(text: Any, today: date | None = None) -> DateRange | None:
    """Resolve a date expression to an inclusive range: '2026-06-15', '明天', '下周五',
    '6 月中旬' (06-10..06-20), '国庆' (10-01..10-07), '5 月 10 号', 'mid-June'. `today` is the
    case's context.current_date; without it only absolute dates resolve. None when not a date."""
    if isinstance(text, date):
        return text, text
    if not isinstance(text, str) or not text.strip():
        return None
    iso = _ISO_DAY.fullmatch(text.strip())
    if iso is not None:  # what lang.dates reads a bare YYYY-MM-DD as, without building its lexicon
        try:
            day = date(int(iso[1]), int(iso[2]), int(iso[3]))
        except ValueError:
            pass  # not a calendar day: the date reader decides what it is
        else:
            return day, day
    from usersim.lang import dates

    found = dates.resolve(text.strip(), today or date.today())
    if found is None or (
        today is None and found.kind not in ("iso", "day", "range", "month", "month_part", "holiday")
    ):
        return None
    return found.range


def parse_today(current_date: str | None) -> date | None:
    """The case's context.current_date as a date (None when absent or malformed)."""
    if not current_date:
        return None
    try:
        return date.fromisoformat(current_date)
    except ValueError:
        return None
