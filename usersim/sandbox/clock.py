"""The sandbox clock: date parsing relative to the case's current date, demand seasons, and
seed-free stable hashing (the same question always gets the same answer)."""

from __future__ import annotations

import hashlib
import re
from datetime import date, timedelta
from typing import Any

DEFAULT_TODAY = date(2026, 4, 7)  # the seeds' "当前日期为 2026-04-07"

_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_RELATIVE = {"今天": 0, "today": 0, "明天": 1, "tomorrow": 1, "明日": 1, "后天": 2, "大后天": 3}

# (first day, last day, factor) of demand peaks; prices use the largest factor that applies.
_PEAKS: list[tuple[date, date, float]] = [
    (date(2025, 1, 28), date(2025, 2, 4), 1.9),  # 春节 2025
    (date(2025, 5, 31), date(2025, 6, 2), 1.35),  # 端午 2025
    (date(2026, 2, 14), date(2026, 2, 23), 1.9),  # 春节 2026
    (date(2026, 4, 4), date(2026, 4, 6), 1.2),  # 清明
    (date(2026, 5, 1), date(2026, 5, 5), 1.45),  # 五一
    (date(2026, 6, 19), date(2026, 6, 21), 1.35),  # 端午
    (date(2026, 7, 1), date(2026, 8, 31), 1.25),  # 暑假
    (date(2026, 9, 25), date(2026, 9, 27), 1.2),  # 中秋
    (date(2026, 10, 1), date(2026, 10, 8), 1.6),  # 国庆
    (date(2026, 12, 31), date(2027, 1, 3), 1.2),  # 元旦
    (date(2027, 2, 5), date(2027, 2, 14), 1.9),  # 春节 2027
]


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
    """YYYY-MM-DD, YYYY/MM/DD, M月D日, MM-DD, 今天/明天/后天, 周五/下周五 -> a date.

    A date without a year is the next such day on or after today. Vague values (6月中旬) are an
    error that says which argument needs a YYYY-MM-DD day.
    """
    text = str(value).strip()
    if text.lower() in _RELATIVE:
        return today + timedelta(days=_RELATIVE[text.lower()])
    m = re.fullmatch(r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})[日号]?", text)
    if m:
        return _checked(int(m[1]), int(m[2]), int(m[3]), arg, text)
    m = re.fullmatch(r"(\d{1,2})[-/.月](\d{1,2})[日号]?", text)
    if m:
        d = _checked(today.year, int(m[1]), int(m[2]), arg, text)
        return d if d >= today else _checked(today.year + 1, int(m[1]), int(m[2]), arg, text)
    m = re.fullmatch(r"(下下|下|本|这|这个)?(?:周|星期|礼拜)([一二三四五六日天])", text)
    if m:
        target = _WEEKDAYS[m[2]]
        monday = today - timedelta(days=today.weekday())
        weeks = {"下": 1, "下下": 2}.get(m[1] or "", 0)
        d = monday + timedelta(weeks=weeks, days=target)
        if not m[1] and d < today:  # a bare 周五 that has passed this week means next week's
            d += timedelta(weeks=1)
        return d
    raise DateError(
        f"argument '{arg}' must be a day as YYYY-MM-DD (today is {today.isoformat()}); got '{text}'"
    )


def _checked(y: int, mo: int, d: int, arg: str, text: str) -> date:
    try:
        return date(y, mo, d)
    except ValueError:
        raise DateError(f"argument '{arg}' is not a real date: '{text}'") from None


# Peaks on the same solar dates every year: 五一, summer holidays, 国庆.
_YEARLY: list[tuple[tuple[int, int], tuple[int, int], float]] = [
    ((5, 1), (5, 5), 1.45),
    ((7, 1), (8, 31), 1.25),
    ((10, 1), (10, 8), 1.6),
]


def demand_factor(day: date) -> float:
    """Holiday/season multiplier for prices on `day` (1.0 on an ordinary day)."""
    factor = 1.0
    for first, last, f in _YEARLY:
        if first <= (day.month, day.day) <= last:
            factor = max(factor, f)
    for first, last, f in _PEAKS:
        if first <= day <= last:
            factor = max(factor, f)
    return factor
