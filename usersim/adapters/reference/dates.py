"""Dates in user messages, resolved against the sandbox's current date.

Handles explicit dates (6 月 15 号, 5 月 10-15 号, 2026-06-15), parts of a month (6 月中旬 ->
the 15th, 7 月初 -> the 3rd), holidays (国庆, 五一, 端午, 春节, 暑假), relative days (明天, 后天,
下周五, 下周, 周末, 下个月) and a return day said after the departure ("下周五出发，周日回").
A fuzzy expression resolves to one representative day; `DateSpan.fuzzy` says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from usersim.adapters.reference.lexicon import NUM, cn_number

WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
MONTH_PART = {"初": 3, "上旬": 5, "中旬": 15, "下旬": 25, "底": 28, "末": 28}
# Fixed holiday dates by year (lunar ones looked up): (month, day, days long)
HOLIDAYS = {
    "国庆": (10, 1, 7),
    "十一": (10, 1, 7),
    "五一": (5, 1, 5),
    "劳动节": (5, 1, 5),
    "元旦": (1, 1, 3),
    "清明": (4, 5, 3),
    "暑假": (7, 15, 0),
    "寒假": (1, 20, 0),
}
LUNAR = {
    "端午": {2026: date(2026, 6, 19), 2027: date(2027, 6, 9)},
    "中秋": {2026: date(2026, 9, 25), 2027: date(2027, 9, 15)},
    "春节": {2026: date(2026, 2, 17), 2027: date(2027, 2, 6)},
}


@dataclass
class DateSpan:
    """A resolved date expression: start (and end when the text gives one)."""

    start: date
    end: date | None = None
    fuzzy: bool = False
    text: str = ""
    pos: int = 0


def _year_for(month: int, day: int, today: date) -> int:
    # A month/day already past this year means next year (nobody plans trips in the past).
    return today.year if (month, day) >= (today.month, today.day) else today.year + 1


def _md(month: int, day: int, today: date) -> date | None:
    try:
        return date(_year_for(month, day, today), month, day)
    except ValueError:
        return None


_RANGE = re.compile(
    rf"({NUM})\s*月\s*({NUM})\s*[号日]?\s*(?:到|至|-|—|~|～)\s*(?:({NUM})\s*月\s*)?({NUM})\s*[号日]"
)
_SINGLE = re.compile(rf"({NUM})\s*月\s*({NUM})\s*[号日]")
_ISO = re.compile(r"(20\d\d)-(\d{1,2})-(\d{1,2})")
_MONTH = re.compile(rf"({NUM})\s*月\s*(初|上旬|中旬|下旬|底|末)?(?!\s*{NUM}\s*[号日])")
_DAY_ONLY = re.compile(rf"(?<![月\d])({NUM})\s*[号日](?:\s*(?:出发|回|返))")
_WEEKDAY = re.compile(r"(下下|下个?|这个?|本)?(?:周|星期|礼拜)([一二三四五六日天末])")
_RELATIVE = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}


def find_dates(text: str, today: date) -> list[DateSpan]:
    """Every date expression in the text, in order of position."""
    spans: list[DateSpan] = []
    taken: list[range] = []

    def add(m: re.Match[str], span: DateSpan | None) -> None:
        r = range(m.start(), m.end())
        if span is None or any(set(r) & set(t) for t in taken):
            return
        taken.append(r)
        span.text, span.pos = m.group(0), m.start()
        spans.append(span)

    for m in _ISO.finditer(text):
        add(m, DateSpan(date(int(m.group(1)), int(m.group(2)), int(m.group(3)))))
    for m in _RANGE.finditer(text):
        mo, d1, mo2, d2 = (cn_number(g) if g else None for g in m.groups())
        start = _md(int(mo), int(d1), today) if mo and d1 else None
        end = None
        if start and d2:
            end_month = int(mo2) if mo2 else start.month
            try:
                end = date(start.year + (1 if end_month < start.month else 0), end_month, int(d2))
            except ValueError:
                end = None
        add(m, DateSpan(start, end) if start else None)
    for m in _SINGLE.finditer(text):
        mo, d = cn_number(m.group(1)), cn_number(m.group(2))
        start = _md(int(mo), int(d), today) if mo and d else None
        add(m, DateSpan(start) if start else None)
    for m in _MONTH.finditer(text):
        mo = cn_number(m.group(1))
        if not mo or not 1 <= mo <= 12:
            continue
        day = MONTH_PART.get(m.group(2) or "", 15)
        add(m, DateSpan(_md(int(mo), day, today) or today, fuzzy=True))
    for name, (mo, d, length) in HOLIDAYS.items():
        for m in re.finditer(name, text):
            if name == "十一" and re.search(r"十一\s*[月号日点]", text[m.start() : m.end() + 2]):
                continue
            start = _md(mo, d, today)
            if start:
                end = start + timedelta(days=length - 1) if length else None
                add(m, DateSpan(start, end, fuzzy=not length))
    for name, by_year in LUNAR.items():
        for m in re.finditer(name, text):
            day = next((d for y, d in sorted(by_year.items()) if d >= today), None)
            add(m, DateSpan(day, day + timedelta(days=2)) if day else None)
    for word, offset in sorted(_RELATIVE.items(), key=lambda kv: -len(kv[0])):
        for m in re.finditer(word, text):
            add(m, DateSpan(today + timedelta(days=offset)))
    for m in _WEEKDAY.finditer(text):
        add(m, DateSpan(_weekday(m.group(1) or "", WEEKDAYS[m.group(2)], today), fuzzy=m.group(2) == "末"))
    for m in re.finditer(r"下周|下星期|下个星期", text):
        add(m, DateSpan(today + timedelta(days=7 - today.weekday()), fuzzy=True))
    for m in re.finditer(r"下个月", text):
        month = today.month % 12 + 1
        add(m, DateSpan(date(today.year + (today.month == 12), month, 15), fuzzy=True))
    for m in re.finditer(r"周末", text):
        add(m, DateSpan(_weekday("", 5, today), fuzzy=True))
    return sorted(spans, key=lambda s: s.pos)


def _weekday(prefix: str, weekday: int, today: date) -> date:
    this_monday = today - timedelta(days=today.weekday())
    if prefix.startswith("下下"):
        return this_monday + timedelta(days=14 + weekday)
    if prefix.startswith("下"):
        return this_monday + timedelta(days=7 + weekday)
    candidate = this_monday + timedelta(days=weekday)
    return candidate if candidate >= today else candidate + timedelta(days=7)


def trip_dates(text: str, today: date) -> tuple[DateSpan | None, date | None]:
    """(departure span, return date) said in one message."""
    spans = find_dates(text, today)
    if not spans:
        return None, None
    first = spans[0]
    ret = first.end
    for later in spans[1:]:
        tail = text[later.pos + len(later.text) : later.pos + len(later.text) + 3]
        if re.match(r"\s*(回|返)", tail) or re.search(r"(回程|返程|回来)\s*$", text[: later.pos]):
            ret = later.start
            # "下周五出发，周日回": a bare weekday after the departure is the next such day after it
            if "周" in later.text and not later.text.startswith(("下", "这", "本")) and ret < first.start:
                ret = ret + timedelta(days=7)
            break
    for m in _DAY_ONLY.finditer(text):
        if m.start() > first.pos and re.search(r"回|返", m.group(0)):
            day = cn_number(m.group(1))
            if day:
                try:
                    ret = first.start.replace(day=int(day))
                except ValueError:
                    pass
    return first, ret


def parse_today(text: str) -> date | None:
    """The current date stated in a system prompt (当前日期 / 今天 / current date)."""
    for line in text.splitlines():
        if re.search(r"当前日期|今天|日期|current date|today", line, re.IGNORECASE):
            m = _ISO.search(line)
            if m:
                return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _ISO.search(text)
    return date(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
