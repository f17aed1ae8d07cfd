"""The sandbox clock: date parsing relative to the case's current date, demand seasons, and
seed-free stable hashing (the same question always gets the same answer)."""

from __future__ import annotations

import hashlib
import re
from datetime import date
from typing import Any

from usersim.lang import calendar, dates

DEFAULT_TODAY = date(2026, 4, 7)  # the seeds' "当前日期为 2026-04-07"


class DateError(ValueError):
    """A date argument the sandbox cannot read; the message names the argument."""


def stable_unit(*parts: Any) -> float:
    """A number in [0, 1) fixed by `parts` (sha256), so fixtures vary but never change run to run."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def today_of(current_date: str | None) -> date:
    """The sandbox's today: the case's context.current_date, else the seeds' 2026-04-07."""
    return date.fromisoformat(current_date) if current_date else DEFAULT_TODAY


def parse_date(value: Any, *, today: date, arg: str) -> date:
    """YYYY-MM-DD, YYYY/MM/DD, M月D日, MM-DD, 今天/明天/后天, 周五/下周五, tomorrow, next Friday -> a
    date, read by the one date parser (usersim.lang.dates).

    A date without a year is the next such day on or after today. Vague values (6月中旬) are an
    error that says which argument needs a YYYY-MM-DD day.
    """
    text = str(value).strip()
    m = re.fullmatch(r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})[日号]?", text)
    if m:  # an impossible day (2026-02-30) is its own error, not "vague"
        _checked(int(m[1]), int(m[2]), int(m[3]), arg, text)
    day = dates.exact_day(text, today)
    if day is not None:
        return day
    raise DateError(
        f"argument '{arg}' must be a day as YYYY-MM-DD (today is {today.isoformat()}); got '{text}'"
    )


def _checked(y: int, mo: int, d: int, arg: str, text: str) -> date:
    try:
        return date(y, mo, d)
    except ValueError:
        raise DateError(f"argument '{arg}' is not a real date: '{text}'") from None


def demand_factor(day: date) -> float:
    """Holiday/season multiplier for prices on `day` (1.0 on an ordinary day): the demand of the
    holidays whose peak-travel window covers it, from THE holiday calendar (usersim.lang.calendar)."""
    return calendar.demand_factor(day)
