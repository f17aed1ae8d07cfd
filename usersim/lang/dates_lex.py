"""The date words of every language (dates.yaml) compiled into the patterns usersim.lang.dates reads.

Built once per set of resources (rebuilt when a user resource folder is added), merged over all
languages so a mixed reply ("6月15日 check-in, back next Friday") reads in one pass.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from usersim.lang.resources import language_codes, resources


@dataclass
class DateLex:
    """Merged date words and the compiled patterns over them."""

    relative_days: dict[str, int] = field(default_factory=dict)
    weekdays: dict[str, int] = field(default_factory=dict)
    weekend: set[str] = field(default_factory=set)
    week_offsets: dict[str, int] = field(default_factory=dict)
    months: dict[str, int] = field(default_factory=dict)
    parts: dict[str, dict[str, int]] = field(default_factory=dict)
    holidays: dict[str, str] = field(default_factory=dict)
    holiday_not_before: list[str] = field(default_factory=list)
    holiday_not_after: list[str] = field(default_factory=list)
    return_words: list[str] = field(default_factory=list)
    next_week_words: list[str] = field(default_factory=list)
    next_month_words: list[str] = field(default_factory=list)
    iso: re.Pattern[str] = re.compile("x^")
    range: re.Pattern[str] = re.compile("x^")
    days: list[re.Pattern[str]] = field(default_factory=list)
    month_parts: list[re.Pattern[str]] = field(default_factory=list)
    holiday: re.Pattern[str] = re.compile("x^")
    relative: re.Pattern[str] = re.compile("x^")
    weekday: re.Pattern[str] = re.compile("x^")
    next_week: re.Pattern[str] = re.compile("x^")
    next_month: re.Pattern[str] = re.compile("x^")
    today_label: re.Pattern[str] = re.compile("x^")
    today_labels: list[str] = field(default_factory=list)


def _alt(words: Any) -> str:
    return "|".join(re.escape(str(w)) for w in sorted({str(w) for w in words}, key=len, reverse=True))


def _latin(words: Any) -> str:
    """An alternation of words; Latin ones must stand as whole words."""
    parts = []
    for w in sorted({str(w) for w in words}, key=len, reverse=True):
        e = re.escape(w)
        # not \b: a CJK character is a word character too ("我想Spring Festival出去玩")
        parts.append(rf"(?<![A-Za-z]){e}(?![A-Za-z])" if w[:1].isascii() and w[:1].isalpha() else e)
    return "|".join(parts)


@functools.lru_cache(maxsize=8)
def _build(key: tuple) -> DateLex:
    lex = DateLex()
    zh_words: dict[str, list[str]] = {"weekday": [], "month": [], "day": [], "year": []}
    for code in language_codes():
        t = resources(code).topic("dates")
        lex.relative_days.update({str(k).lower(): int(v) for k, v in (t.get("relative_days") or {}).items()})
        lex.weekdays.update({str(k).lower(): int(v) for k, v in (t.get("weekdays") or {}).items()})
        lex.weekend.update(str(w).lower() for w in t.get("weekend") or ())
        lex.week_offsets.update({str(k).lower(): int(v) for k, v in (t.get("week_offsets") or {}).items()})
        lex.months.update({str(k).lower(): int(v) for k, v in (t.get("months") or {}).items()})
        lex.parts.update({str(k).lower(): dict(v) for k, v in (t.get("month_parts") or {}).items()})
        lex.holidays.update({str(k).lower(): str(v) for k, v in (t.get("holidays") or {}).items()})
        lex.holiday_not_before += [str(w) for w in t.get("holiday_not_before") or ()]
        lex.holiday_not_after += [str(w) for w in t.get("holiday_not_after") or ()]
        lex.return_words += [str(w) for w in t.get("return_words") or ()]
        zh_words["weekday"] += [str(w) for w in t.get("weekday_words") or ()]
        if t.get("month_word"):
            zh_words["month"].append(str(t["month_word"]))
            zh_words["day"] += [str(w) for w in t.get("day_words") or ()]
            zh_words["year"].append(str(t.get("year_word") or ""))
        lex.today_labels += [str(w) for w in t.get("today_labels") or ()]
        lex.next_week_words += [str(w) for w in t.get("next_week") or ()]
        lex.next_month_words += [str(w) for w in t.get("next_month") or ()]
    num = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
    mw, dw, yw = (
        _alt(zh_words["month"]) or "月",
        _alt(zh_words["day"]) or "日|号",
        _alt(zh_words["year"]) or "年",
    )
    joiner = r"\s*(?:到|至|-|—|–|~|～|to)\s*"
    lex.iso = re.compile(
        rf"(\d{{4}})\s*(?:[-/.]|{yw})\s*(\d{{1,2}})\s*(?:[-/.]|{mw})\s*(\d{{1,2}})(?:\s*(?:{dw}))?(?!\d)"
    )
    lex.range = re.compile(
        rf"(?P<m1>{num})\s*(?:{mw})\s*(?P<d1>{num})\s*(?:{dw})?{joiner}(?:(?P<m2>{num})\s*(?:{mw})\s*)?(?P<d2>{num})\s*(?:{dw})"
    )
    months = _latin(lex.months)
    # 6 月 15 号 / 6月15日 / 6月15 (not 6月15天); June 15(th); 15(th) (of) June
    lex.days = [
        re.compile(
            rf"(?:(?P<y>\d{{4}})\s*(?:{yw})\s*)?(?P<m>{num})\s*(?:{mw})\s*(?P<d>{num})(?:\s*(?:{dw})|(?![\d天晚夜人个点时分号]))"
        ),
        re.compile(
            rf"(?P<m>{months})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s*(?P<y>\d{{4}}))?", re.IGNORECASE
        ),
        re.compile(
            rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{months})\.?\b(?:,?\s*(?P<y>\d{{4}}))?",
            re.IGNORECASE,
        ),
    ]
    zh_parts = _alt(p for p in lex.parts if not p.isascii())
    en_parts = _alt(p for p in lex.parts if p.isascii())
    lex.month_parts = [
        re.compile(rf"(?P<m>{num})\s*(?:{mw})\s*(?P<p>{zh_parts})?(?!\s*{num}\s*(?:{dw})?)(?!份?\s*\d)"),
        re.compile(rf"(?:\b(?:the\s+)?(?P<p>{en_parts})\s*(?:the\s+)?)(?P<m>{months})\b", re.IGNORECASE),
        re.compile(rf"\b(?:in|during|around)\s+(?P<p>)(?P<m>{months})\b", re.IGNORECASE),
    ]
    lex.holiday = re.compile(_latin(lex.holidays), re.IGNORECASE)
    lex.relative = re.compile(_latin(lex.relative_days), re.IGNORECASE)
    offsets = _latin(lex.week_offsets)
    names = _latin(set(lex.weekdays) | lex.weekend)
    wk = _alt(zh_words["weekday"])
    lex.weekday = re.compile(
        rf"(?:(?P<o>{offsets})\s*)?(?:(?:{wk})(?=[{''.join(k for k in lex.weekdays if not k.isascii())}末])|(?=[A-Za-z]))(?P<w>{names})",
        re.IGNORECASE,
    )
    lex.next_week = re.compile(_latin(lex.next_week_words) + r"(?![一二三四五六日天末])", re.IGNORECASE)
    lex.next_month = re.compile(_latin(lex.next_month_words), re.IGNORECASE)
    lex.today_label = re.compile(_latin(lex.today_labels) or "x^", re.IGNORECASE)
    return lex


def date_lexicon() -> DateLex:
    """The merged date words for the resources in force."""
    return _build(_key())


def _key() -> tuple:
    # the resource files in force (an added user folder changes it; ids of freed objects may repeat)
    return tuple((code, tuple(map(tuple, resources(code).files.values()))) for code in language_codes())
