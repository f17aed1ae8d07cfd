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

from usersim.lang import dates
from usersim.lang.quantity import number


@dataclass
class DateSpan:
    """A resolved date expression: start (and end when the text gives one)."""

    start: date
    end: date | None = None
    fuzzy: bool = False
    text: str = ""
    pos: int = 0


def find_dates(text: str, today: date) -> list[DateSpan]:
    """Every date expression in the text, in order of position (read by usersim.lang.dates)."""
    return [
        DateSpan(d.day if d.fuzzy else d.first, d.last if d.end_given else None, d.fuzzy, d.text, d.start)
        for d in dates.find_dates(text, today)
    ]


_DAY_ONLY = re.compile(r"(?<![月\d])(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*[号日](?:\s*(?:出发|回|返))")


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
            day = number(m.group(1))
            if day:
                try:
                    ret = first.start.replace(day=int(day))
                except ValueError:
                    pass
    return first, ret


def parse_today(text: str) -> date | None:
    """The current date stated in a system prompt (当前日期 / 今天 / current date): an ISO date on
    a line that names today (dates.yaml `today_labels`), else the first ISO date."""
    return dates.stated_today(text)
