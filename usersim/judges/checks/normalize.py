"""Normalisers for argument matching: places, relative dates, party sizes, numbers with units.

Case files write expected values the way the seeds do (上海, 6 月中旬, 两个人, 8千, 1.5 公斤); the
agent's tool calls use canonical forms (Shanghai / PVG, 2026-06-15, 2, 8000, 1.5). These helpers
bring both sides to one form so a check compares meaning, not spelling.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from typing import Any

from usersim.core.numerals import chinese_int
from usersim.lang.acts import agent_acts
from usersim.sandbox.places import normalize_place as sandbox_normalize_place


# --- places ---------------------------------------------------------------------------------
def _sandbox_place(text: str) -> str | None:
    try:
        return sandbox_normalize_place(text)
    except (KeyError, ValueError):
        return None


def normalize_place(text: Any) -> str | None:
    """Canonical place name for a city / airport / IATA code, or None if it is not a known place."""
    if not isinstance(text, str) or not text.strip():
        return None
    return _sandbox_place(text)


# --- numbers --------------------------------------------------------------------------------
_EN_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


# unit -> (multiplier, dimension); weights normalise to kg, money to yuan
_UNITS: dict[str, tuple[float, str]] = {
    "kg": (1, "weight"),
    "公斤": (1, "weight"),
    "千克": (1, "weight"),
    "斤": (0.5, "weight"),
    "g": (0.001, "weight"),
    "克": (0.001, "weight"),
    "元": (1, "money"),
    "块": (1, "money"),
    "rmb": (1, "money"),
    "¥": (1, "money"),
    "￥": (1, "money"),
    "usd": (1, "money"),
    "dollars": (1, "money"),
    "dollar": (1, "money"),
    "美元": (1, "money"),
    "人": (1, "count"),
    "位": (1, "count"),
    "个人": (1, "count"),
    "名": (1, "count"),
    "张": (1, "count"),
    "晚": (1, "count"),
    "天": (1, "count"),
}
_SCALE = {"k": 1000, "千": 1000, "w": 10000, "万": 10000, "百": 100}
_NUM_RE = re.compile(
    r"(?:usd\s*)?([¥￥$€£])?\s*(\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万]+)\s*(k(?![a-z])|w(?![a-z])|千|万|百)?\s*"
    # ASCII units must end the word: "16GB" is not 16 grams.
    r"(kg(?![a-z])|公斤|千克|斤|g(?![a-z])|克|元|块|rmb(?![a-z])|usd(?![a-z])|dollars?(?![a-z])|美元|个人|人|位|名|张|晚|天)?",
    re.IGNORECASE,
)


def parse_quantity(value: Any) -> tuple[float, str | None] | None:
    """A number with its unit dimension: '8千' -> (8000, None), '1.5 公斤' -> (1.5, 'weight'),
    '两个人' -> (2, 'count'), 'two' -> (2, None). None when the text holds no number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value), None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text in _EN_NUMBERS:
        return float(_EN_NUMBERS[text]), None
    m = _NUM_RE.search(text)
    if not m:
        return None
    currency, raw, scale, unit = m.groups()
    if raw[0].isdigit():
        number = float(raw.replace(",", ""))
    else:
        parsed = chinese_int(raw)
        if parsed is None:
            return None
        number = float(parsed)
    if scale:
        number *= _SCALE[scale.lower()]
    dimension = None
    if unit:
        mult, dimension = _UNITS[unit.lower()]
        number *= mult
    elif currency:
        dimension = "money"
    return round(number, 6), dimension


def is_quantity(value: Any) -> bool:
    """The whole text is one number with an optional unit (两个人, 8千, 1.5 kg, two), not prose."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    if not isinstance(value, str):
        return False
    text = value.strip().lower()
    return text in _EN_NUMBERS or bool(text) and _NUM_RE.fullmatch(text) is not None


_DIGITS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\d.,])\d+(?:\.\d+)?(?![\d])")


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
    return [float(m.group(0).replace(",", "")) for m in _DIGITS_RE.finditer(value)]


def find_number(word: str, text: str) -> str | None:
    """Where the number `word` (1628, $1,628.00, 两千) is written in `text` as a whole number:
    '1628' finds '$1,628.00', '4' does not find '14 bags'. None when `word` is not a number or absent."""
    if not is_quantity(word):
        return None
    want = parse_number(word)
    if want is None:
        return None
    for m in _DIGITS_RE.finditer(text):
        if abs(float(m.group(0).replace(",", "")) - want) < 1e-9:
            return m.group(0)
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
    return " ".join(a.text.strip() for a in agent_acts(text or "") if not a.asking and a.text.strip())


def parse_number(value: Any) -> float | None:
    """Just the number of parse_quantity (weights in kg, money in yuan)."""
    q = parse_quantity(value)
    return q[0] if q else None


# --- dates ----------------------------------------------------------------------------------
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_HOLIDAYS: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "国庆": ((10, 1), (10, 7)),
    "十一": ((10, 1), (10, 7)),
    "五一": ((5, 1), (5, 5)),
    "劳动节": ((5, 1), (5, 5)),
    "暑假": ((7, 1), (8, 31)),
    "元旦": ((1, 1), (1, 3)),
}
# Lunar holidays by year (official 2025/2026 holiday windows).
_LUNAR: dict[str, dict[int, tuple[str, str]]] = {
    "端午": {2025: ("2025-05-31", "2025-06-02"), 2026: ("2026-06-19", "2026-06-21")},
    "春节": {2025: ("2025-01-28", "2025-02-04"), 2026: ("2026-02-15", "2026-02-23")},
    "中秋": {2025: ("2025-10-06", "2025-10-08"), 2026: ("2026-09-25", "2026-09-27")},
}
_ISO_RE = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_MONTH_DAY_RE = re.compile(
    r"(\d{1,2}|[一二三四五六七八九十]+)\s*月\s*(\d{1,2}|[一二三四五六七八九十]+)\s*[日号]?"
)
_MONTH_PART_RE = re.compile(r"(\d{1,2}|[一二三四五六七八九十]+)\s*月\s*(上旬|中旬|下旬|初|底|末)?")
_WEEK_RE = re.compile(r"(下下|下|这|本|上)?\s*(?:周|星期|礼拜)([一二三四五六日天末])")

DateRange = tuple[date, date]


def _num(text: str) -> int:
    return int(text) if text.isdigit() else (chinese_int(text) or 0)


def _year_for(month: int, day: int, today: date | None) -> int:
    """The year in which month/day comes next on or after today (seed dates are future trips)."""
    if today is None:
        return date.today().year
    try:
        candidate = date(today.year, month, day)
    except ValueError:
        return today.year
    return today.year if candidate >= today - timedelta(days=1) else today.year + 1


def resolve_date(text: Any, today: date | None = None) -> DateRange | None:
    """Resolve a date expression to an inclusive range: '2026-06-15', '明天', '下周五',
    '6 月中旬' (06-10..06-20), '国庆' (10-01..10-07), '5 月 10 号'. `today` is the case's
    context.current_date. None when the text is not a date."""
    if isinstance(text, date):
        return text, text
    if not isinstance(text, str) or not text.strip():
        return None
    s = text.strip()
    m = _ISO_RE.match(s)
    if m:
        try:
            d = date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return None
        return d, d
    if today is not None:
        for word, delta in (("大后天", 3), ("后天", 2), ("明天", 1), ("明日", 1), ("今天", 0), ("今日", 0)):
            if word in s:
                d = today + timedelta(days=delta)
                return d, d
        m = _WEEK_RE.search(s)
        if m:
            return _weekday(today, m[1] or "", m[2])
    for name, years in _LUNAR.items():
        if name in s:
            year = today.year if today else date.today().year
            start, end = years.get(year) or years.get(year + 1) or next(iter(years.values()))
            d0, d1 = date.fromisoformat(start), date.fromisoformat(end)
            if today and d1 < today and (year + 1) in years:
                d0, d1 = (date.fromisoformat(x) for x in years[year + 1])
            return d0, d1
    for name, ((m0, d0), (m1, d1)) in _HOLIDAYS.items():
        if name in s:
            year = _year_for(m1, d1, today)
            return date(year, m0, d0), date(year, m1, d1)
    m = _MONTH_DAY_RE.search(s)
    if m:
        month, day = _num(m[1]), _num(m[2])
        try:
            d = date(_year_for(month, day, today), month, day)
        except ValueError:
            return None
        return d, d
    m = _MONTH_PART_RE.search(s)
    if m:
        month = _num(m[1])
        if not 1 <= month <= 12:
            return None
        year = _year_for(month, calendar.monthrange(2001, month)[1], today)
        last = calendar.monthrange(year, month)[1]
        part = m[2]
        lo, hi = {
            "上旬": (1, 10),
            "初": (1, 10),
            "中旬": (10, 20),
            "下旬": (21, last),
            "底": (21, last),
            "末": (21, last),
        }.get(part or "", (1, last))
        return date(year, month, lo), date(year, month, hi)
    return None


def _weekday(today: date, which: str, day_char: str) -> DateRange:
    """下周五 = Friday of next calendar week (weeks start Monday); 周五 alone = the next Friday."""
    target = _WEEKDAYS[day_char]
    monday = today - timedelta(days=today.weekday())
    if which in ("下",):
        d = monday + timedelta(days=7 + target)
    elif which == "下下":
        d = monday + timedelta(days=14 + target)
    elif which in ("这", "本"):
        d = monday + timedelta(days=target)
    elif which == "上":
        d = monday - timedelta(days=7 - target)
    else:
        d = today + timedelta(days=(target - today.weekday()) % 7)
    if day_char == "末":  # 周末 = Saturday..Sunday
        return d, d + timedelta(days=1)
    return d, d


def parse_today(current_date: str | None) -> date | None:
    """The case's context.current_date as a date (None when absent or malformed)."""
    if not current_date:
        return None
    try:
        return date.fromisoformat(current_date)
    except ValueError:
        return None
