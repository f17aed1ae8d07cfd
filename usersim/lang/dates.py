"""Dates in text, Chinese and English, resolved against a given current date: the one date parser.

Absolute (2026-06-15, 2026年6月15日, 6 月 15 号, June 15, 15th of June), ranges (5 月 10-15 号),
parts of a month (6 月中旬, 7月初, mid-June, early July), holidays from THE calendar (五一, 国庆,
春节, 暑假, National Day), relative days (明天, 后天, tomorrow), weekdays (下周三, 周五, next Friday,
this Saturday), weeks and months (下周, 下个月, next week) and weekends. A date without a year is
the next such day on or after today (trips are planned ahead). Each mention is an inclusive range
with one representative `day` and says whether it is `fuzzy` (a part of a month, a season, a week).
The words are data: usersim/lang/data/<code>/dates.yaml; holidays: usersim/lang/calendar.py.
"""

from __future__ import annotations

import calendar as _months
import re
from dataclasses import dataclass
from datetime import date, timedelta

from usersim.lang import calendar
from usersim.lang.dates_lex import DateLex, date_lexicon
from usersim.lang.quantity import chinese_int
from usersim.lang.resources import Cue

DateRange = tuple[date, date]


@dataclass(frozen=True)
class DateMention:
    """One date expression: the inclusive days it means, its representative day, and where."""

    first: date
    last: date
    day: date  # the one day it stands for (6 月中旬 -> the 15th, 暑假 -> 07-15, 国庆 -> 10-01)
    fuzzy: bool
    kind: str  # iso | day | range | month_part | month | holiday | relative | weekday | week | weekend
    start: int  # span in the text
    end: int
    text: str
    cue: Cue | None = None
    holiday: str | None = None
    end_given: bool = False  # the text itself names a last day (a range, a holiday's days off)

    @property
    def range(self) -> DateRange:
        return self.first, self.last


def _n(text: str | None) -> int | None:
    if not text:
        return None
    if text.isdigit():
        return int(text)
    return chinese_int(text)


def _ymd(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _next_md(month: int, day: int, today: date) -> date | None:
    """month/day in the year it next comes on or after today."""
    year = today.year if (month, day) >= (today.month, today.day) else today.year + 1
    return _ymd(year, month, day)


def find_dates(text: str, today: date) -> list[DateMention]:
    """Every date expression in `text`, in order; overlapping readings keep the longest."""
    text = text or ""
    lex = date_lexicon()
    found: list[DateMention] = []
    for reader in (_iso, _ranges, _days, _month_parts, _holidays, _relative, _weekdays, _weeks):
        found.extend(reader(text, today, lex))
    found.sort(key=lambda d: (d.start, -(d.end - d.start)))
    out: list[DateMention] = []
    for d in found:
        if not out or d.start >= out[-1].end:
            out.append(d)
        elif d.end - d.start > out[-1].end - out[-1].start and d.start == out[-1].start:
            out[-1] = d
    return out


def resolve(text: str, today: date) -> DateMention | None:
    """The first date expression in `text`, or None."""
    found = find_dates(text, today)
    return found[0] if found else None


def exact_day(text: str, today: date) -> date | None:
    """The one day the WHOLE text names (2026-06-15, 6月15日, 6/15, 明天, 下周五, next Friday),
    else None (a vague or partial date, or prose)."""
    s = (text or "").strip()
    m = re.fullmatch(r"(\d{1,2})[-/.](\d{1,2})", s)
    if m:
        return _next_md(int(m[1]), int(m[2]), today)
    found = find_dates(s, today)
    if len(found) == 1 and not found[0].fuzzy and found[0].first == found[0].last:
        d = found[0]
        if d.start == 0 and d.end >= len(s.rstrip("。.")):
            return d.first
    return None


def stated_today(text: str) -> date | None:
    """The current date a prompt states: an ISO date on a line naming today (dates.yaml
    `today_labels`: 当前日期, today ...), else the first ISO date in the text; None without one."""
    lex = date_lexicon()
    lines = (text or "").splitlines()
    for line in [ln for ln in lines if lex.today_label.search(ln)] + [text or ""]:
        m = lex.iso.search(line)
        if m and (d := _ymd(int(m[1]), int(m[2]), int(m[3]))):
            return d
    return None


def _mention(m: re.Match[str], first: date, last: date | None = None, **kw) -> DateMention:
    last = last or first
    day = kw.pop("day", first)
    return DateMention(
        first, last, day, kw.pop("fuzzy", False), kw.pop("kind"), m.start(), m.end(), m.group(0), **kw
    )


def _iso(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for m in lex.iso.finditer(text):
        d = _ymd(int(m[1]), int(m[2]), int(m[3]))
        if d:
            out.append(_mention(m, d, kind="iso"))
    return out


def _ranges(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for m in lex.range.finditer(text):
        mo, d1, mo2, d2 = _n(m["m1"]), _n(m["d1"]), _n(m["m2"]), _n(m["d2"])
        first = _next_md(mo, d1, today) if mo and d1 else None
        if first is None or not d2:
            continue
        end_month = mo2 or first.month
        last = _ymd(first.year + (end_month < first.month), end_month, d2)
        if last and last >= first:
            out.append(_mention(m, first, last, kind="range", end_given=True))
    return out


def _days(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for pattern in lex.days:
        for m in pattern.finditer(text):
            mo = _n(m["m"]) if m["m"].isdigit() or _n(m["m"]) else lex.months.get(m["m"].lower())
            d = _n(m["d"])
            if not mo or not d:
                continue
            year = int(m["y"]) if m.groupdict().get("y") else None
            day = _ymd(year, mo, d) if year else _next_md(mo, d, today)
            if day:
                out.append(_mention(m, day, kind="day"))
    return out


def _month_parts(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for pattern in lex.month_parts:
        for m in pattern.finditer(text):
            raw = m["m"]
            mo = lex.months.get(raw.lower()) if raw.lower() in lex.months else _n(raw)
            if not mo or not 1 <= mo <= 12:
                continue
            part = lex.parts.get((m["p"] or "").lower()) if m["p"] else None
            year = today.year if (mo, 31) >= (today.month, today.day) else today.year + 1
            last_day = _months.monthrange(year, mo)[1]
            lo, hi, rep = (part["from"], part["to"], part["day"]) if part else (1, last_day, 15)
            hi = last_day if hi == -1 else hi
            if date(year, mo, hi) < today:
                year += 1
            out.append(
                _mention(
                    m,
                    date(year, mo, lo),
                    date(year, mo, hi),
                    day=date(year, mo, rep),
                    fuzzy=True,
                    kind="month_part" if part else "month",
                )
            )
    return out


def _holidays(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for m in lex.holiday.finditer(text):
        name = m.group(0)
        if any(text[: m.start()].endswith(w) for w in lex.holiday_not_before):
            continue
        if any(text[m.end() :].lstrip().startswith(w) for w in lex.holiday_not_after):
            continue
        hid = lex.holidays[name.lower()]
        h = calendar.next_holiday(hid, today)
        if h is None or h.window is None:
            continue
        first, last = h.window
        if h.official is None:  # a season (暑假): the days it covers, a trip taken on its typical day
            out.append(
                _mention(m, first, last, day=h.typical or first, fuzzy=True, kind="holiday", holiday=hid)
            )
        else:
            out.append(_mention(m, first, last, kind="holiday", holiday=hid, end_given=True))
    return out


def _relative(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for m in lex.relative.finditer(text):
        d = today + timedelta(days=lex.relative_days[m.group(0).lower()])
        out.append(_mention(m, d, kind="relative"))
    return out


def _monday(today: date) -> date:
    return today - timedelta(days=today.weekday())


def _weekdays(text: str, today: date, lex: DateLex) -> list[DateMention]:
    """下周五 = Friday of next calendar week (weeks start Monday); 周五 alone = the next Friday on or
    after today; 这周五 = this week's Friday; 周末 = the coming Saturday and Sunday."""
    out = []
    for m in lex.weekday.finditer(text):
        prefix, name = (m["o"] or "").lower(), m["w"].lower()
        weekend = name in lex.weekend
        target = 5 if weekend else lex.weekdays[name]
        if prefix:
            d = _monday(today) + timedelta(days=7 * lex.week_offsets[prefix] + target)
        else:
            d = _monday(today) + timedelta(days=target)
            if d < today and not weekend:  # a 周五 already past this week means next week's
                d += timedelta(days=7)
        last = d + timedelta(days=1) if weekend else d
        out.append(_mention(m, d, last, fuzzy=weekend, kind="weekend" if weekend else "weekday"))
    return out


def _weeks(text: str, today: date, lex: DateLex) -> list[DateMention]:
    out = []
    for m in lex.next_week.finditer(text):
        monday = _monday(today) + timedelta(days=7)
        out.append(_mention(m, monday, monday + timedelta(days=6), fuzzy=True, kind="week"))
    for m in lex.next_month.finditer(text):
        y, mo = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        last = _months.monthrange(y, mo)[1]
        out.append(
            _mention(m, date(y, mo, 1), date(y, mo, last), day=date(y, mo, 15), fuzzy=True, kind="month")
        )
    return out
