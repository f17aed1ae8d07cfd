"""Numbers, money, units and durations in text, each normalised to one typed value.

"¥680/晚", "¥680 一晚", "680 元每晚", "每晚680元", "$120 per night" and "120 USD a night" all read as
a `Quantity(kind="money", value=..., currency=..., per="night")`; "1h 20min", "一个半小时" and
"90 minutes" as durations in minutes; "1.5 公斤" and "1500g" as 1.5 kg. A duration says what it
measures when its clause says so (`measures`: "commute" for "步行 19 分钟" / "drive 20 min", "visit"
for "建议游览 2 小时" / "spend 2 hours there"), and any quantity says whether an estimate word is
attached ("大约 20 分钟", "about 20 min"). Every reading carries the cues (resource entry + span) that
made it. The words are data: usersim/lang/data/<code>/{numbers,money,units}.yaml.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from usersim.lang.measure import estimate_of, measure_of
from usersim.lang.numbers import chinese_digits, chinese_int, number, number_pattern, numerals_in, token_value
from usersim.lang.quantity_words import Lexicon, lexicon
from usersim.lang.resources import Cue

Kind = Literal["number", "money", "measure", "duration"]
__all__ = [
    "Quantity",
    "chinese_digits",
    "chinese_int",
    "durations",
    "measures",
    "money",
    "number",
    "numerals_in",
    "parse",
    "quantities",
]


@dataclass(frozen=True)
class Quantity:
    """One quantity written in a text. `value` is normalised: money in its currency's units (万
    applied), weights in kg, lengths in km, data in GB, durations in minutes, counts as written;
    `high` is the top of a range ("20-30 分钟"); `amount` the number as written before the unit."""

    kind: Kind
    value: float
    start: int
    end: int
    text: str
    amount: float = 0.0
    high: float | None = None
    scale: float = 1.0  # the scale written after the number (1.5万 -> 10000, 8k -> 1000)
    unit: str | None = None  # canonical unit id (kg, minute, night ...) or currency code (CNY ...)
    dimension: str | None = None  # money | weight | length | data | duration | count | area ...
    currency: str | None = None
    per: str | None = None  # what a price is per: night, person, day, item ...
    estimate: Cue | None = None  # the estimate word attached ("大约", "about", "左右")
    measures: str | None = None  # durations: "commute" | "visit" | None (the text does not say)
    measure_cues: tuple[Cue, ...] = ()
    mixed: bool = False  # commute and visit cues both close: what it measures is unsure
    cues: tuple[Cue, ...] = field(default=())


# --- scanning -----------------------------------------------------------------------------
_SPACE = re.compile(r"[ \t\u3000*_]*")  # spaces and Markdown emphasis ("**¥680** 一晚")


_GAP = " \t\u3000*_"


def _skip(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]


def _cue(word_entry: str, start: int, end: int, text: str) -> Cue:
    return Cue(word_entry, start, end, text[start:end])


def quantities(text: str) -> list[Quantity]:
    """Every quantity written in `text`, in order: money, measures, durations and bare numbers."""
    return list(_quantities(text or "", lexicon()))


# The simulator's guards and the judges read the same transcript messages again on every turn and
# in every check (a conversation reads each message a dozen times): readings are remembered per
# (text, lexicon in force). Quantities are frozen, the list is copied for the caller.
@functools.lru_cache(maxsize=8192)
def _quantities(text: str, lex: Lexicon) -> tuple[Quantity, ...]:
    out: list[Quantity] = []
    pos = 0
    pattern = number_pattern(lex)
    while True:
        m = pattern.search(text, pos)
        if m is None:
            break
        q = _read(text, m, lex)
        if q is None:
            pos = m.end()
            continue
        out.append(q)
        pos = max(q.end, m.end())
    return tuple(_annotate(text, q, lex) for q in out)


def _read(text: str, m: re.Match[str], lex: Lexicon) -> Quantity | None:
    value = token_value(m)
    if value is None:
        return None
    bare_ok = bool(m.group("d"))
    start, end, cues = m.start(), m.end(), []
    high = None
    # a range: 20-30 分钟, 500 至 700 元, ¥500–¥700
    j = _skip(text, end)
    if hit := lex.longest("ranges", text, j):
        k = _skip(text, j + len(hit[0]))
        if text[k : k + 1] in lex.symbols or (text[k : k + 3] in lex.symbols):
            sym = lex.longest("symbols", text, k)
            k = _skip(text, k + len(sym[0])) if sym else k
        m2 = number_pattern(lex).match(text, k)
        if m2 and (m2.group("d") or m2.group("c")) and (v2 := token_value(m2)) is not None and v2 > value:
            high, end = v2, m2.end()
    # 一个半小时 / 1 个半小时, "an hour and a half", "2 and a half hours"
    extra = 0.0
    j = _skip(text, end)
    if hit := lex.longest("half_infix", text, j):
        extra, end = 0.5, j + len(hit[0])
    # "half an hour": skip the article after "half"
    if (
        m.lastgroup in ("h", "e")
        and value == 0.5
        and (art := re.match(r"\s+(an?|a)\b", text[end:], re.IGNORECASE))
    ):
        end += art.end()
    if hit := lex.longest("and_a_half", text, _skip(text, end)):
        extra, end = 0.5, _skip(text, end) + len(hit[0])
    scale = 1.0
    j = _skip(text, end)
    unit_hit = _unit_at(text, j, lex)
    if unit_hit is None and (hit := lex.longest("scales", text, j)) and m.group("d"):
        scale, end = float(hit[1].value), j + len(hit[0])
        cues.append(_cue(hit[1].entry, j, end, text))
        unit_hit = _unit_at(text, _skip(text, end), lex)
    amount = (value + extra) * scale
    if m.group("c") and lex.cn_units.get(m.group(0)[-1], 0) >= 10000:  # 三万: written in 万 too
        scale = float(lex.cn_units[m.group(0)[-1]])
    high = high * scale if high is not None else None
    currency, unit_id, dimension, factor = None, None, None, 1.0
    # currency after the number (680 元, 120 USD, 1万日元) or before it (¥680, USD 120, 人民币 500)
    j = _skip(text, end)
    if code := lex.longest("codes", text, j):
        currency, end = str(code[1].value), j + len(code[0])
        cues.append(_cue(code[1].entry, j, end, text))
    before = _currency_before(text, start, lex)
    if before is not None:
        currency = currency or str(before[1].value)
        start = before[2]
        cues.append(_cue(before[1].entry, before[2], before[2] + len(before[0]), text))
    if currency is None and unit_hit is not None:
        word, w, u_end = unit_hit
        unit_id, dimension, factor = w.value
        end = u_end
        cues.append(_cue(w.entry, u_end - len(word), u_end, text))
        if dimension == "duration" and unit_id == "hour":  # 1小时20分 = 80 minutes
            minutes, end = _minutes_after_hour(text, end, amount * factor, lex)
            if hit := lex.longest("and_a_half", text, _skip(text, end)):  # "an hour and a half"
                minutes, end = minutes + 30, _skip(text, end) + len(hit[0])
            factor = minutes / amount if amount else factor
    if m.lastgroup in ("a", "h") and currency is None and unit_id is None:
        return None  # "a" / "半" alone is no quantity
    if m.group("c") and currency is None and unit_id is None and m.lastgroup == "c":
        spelled = len(m.group(0)) >= 2 and any(ch in lex.cn_units for ch in m.group(0))
        if not spelled and not _per_follows(text, end, lex):
            return None  # 三亚, 一起, 五一: a numeral inside a word is no quantity (两千, 一万五 are)
    if m.lastgroup == "e" and currency is None and unit_id is None:
        return None
    per = None
    if currency is not None or unit_id is not None or bare_ok:
        per_hit = _per_after(text, end, lex)
        if per_hit:
            per, end = per_hit[0], per_hit[1]
            cues.append(per_hit[2])
        elif pb := _per_before(text, start, lex):
            per = pb[0]
            cues.append(pb[1])
    if currency is not None:
        kind: Kind = "money"
        dimension = "money"
        norm, norm_high = amount, high
    elif unit_id is not None:
        kind = "duration" if dimension == "duration" else "measure"
        norm, norm_high = amount * factor, (high * factor if high is not None else None)
    else:
        kind, norm, norm_high = "number", amount, high
    return Quantity(
        kind=kind,
        value=round(norm, 6),
        high=round(norm_high, 6) if norm_high is not None else None,
        start=start,
        end=end,
        text=text[start:end],
        amount=round(amount, 6),
        scale=scale,
        unit=currency or unit_id,
        dimension=dimension,
        currency=currency,
        per=per,
        cues=tuple(cues),
    )


def _unit_at(text: str, pos: int, lex: Lexicon) -> tuple[str, object, int] | None:
    p = pos + 1 if text[pos : pos + 1] == "-" else pos  # "a 15-minute walk"
    hit = lex.longest("units", text, p)
    if hit is None:
        return None
    return hit[0], hit[1], p + len(hit[0])


def _minutes_after_hour(text: str, end: int, minutes: float, lex: Lexicon) -> tuple[float, int]:
    """1小时20分(钟), 1h 20min, 1 hour and 20 minutes: the minutes after an hour add up."""
    m = re.match(r"[ \t]*(?:and[ \t]+|零)?(\d{1,2}|[一二三四五六七八九十]+)[ \t]*", text[end:], re.IGNORECASE)
    if not m:
        return minutes, end
    k = end + m.end()
    unit = lex.longest("units", text, k)
    word = unit[0] if unit and unit[1].value[0] == "minute" else None
    if word is None and (tail := lex.longest("minute_after_hour", text, k)):
        word = tail[0]
    if word is None:
        return minutes, end
    add = number(m.group(1)) or 0.0
    return minutes + add, k + len(word)


def _currency_before(text: str, start: int, lex: Lexicon) -> tuple[str, object, int] | None:
    j = start
    while j > 0 and text[j - 1] in _GAP:
        j -= 1
    for table in ("symbols", "codes"):
        hit = lex.ending(table, text, j)
        if hit and not (table == "codes" and hit[0] in ("元", "块")):
            return hit[0], hit[1], j - len(hit[0])
    return None


def _per_after(text: str, end: int, lex: Lexicon) -> tuple[str, int, Cue] | None:
    j = _skip(text, end)
    marker = lex.longest("per_after", text, j)
    if marker is None:
        return None
    k = _skip(text, j + len(marker[0]))
    unit = lex.longest("per_units", text, k)
    if unit is None:
        return None
    stop = k + len(unit[0])
    return str(unit[1].value), stop, _cue(unit[1].entry, j, stop, text)


def _per_follows(text: str, end: int, lex: Lexicon) -> bool:
    return _per_after(text, end, lex) is not None


def _per_before(text: str, start: int, lex: Lexicon) -> tuple[str, Cue] | None:
    """每晚680元, 每晚约 700 元, 一晚 680 元, 人均 300 元: the per-unit said before the price."""
    j = start
    for _ in range(3):  # skip spaces and fillers (约, 仅需, ：) between the unit and the price
        while j > 0 and text[j - 1] in _GAP:
            j -= 1
        filler = lex.ending("per_fillers", text, j)
        if filler is None:
            break
        j -= len(filler[0])
    while j > 0 and text[j - 1] in _GAP:
        j -= 1
    if hit := lex.ending("per_prefix", text, j):
        return str(hit[1].value), _cue(hit[1].entry, j - len(hit[0]), j, text)
    unit = lex.ending("per_units", text, j)
    if unit is None:
        return None
    k = j - len(unit[0])
    while k > 0 and text[k - 1] in _GAP:
        k -= 1
    marker = lex.ending("per_before", text, k)
    if marker is None:
        return None
    return str(unit[1].value), _cue(unit[1].entry, k - len(marker[0]), j, text)


def _annotate(text: str, q: Quantity, lex: Lexicon) -> Quantity:
    est = estimate_of(text, q.start, q.end, lex)
    if q.kind != "duration":
        return replace(q, estimate=est)
    kind, cues, mixed = measure_of(text, q.start, q.end, lex)
    return replace(q, estimate=est, measures=kind, measure_cues=tuple(cues), mixed=mixed)


# --- convenience --------------------------------------------------------------------------
def parse(text: str) -> Quantity | None:
    """The one quantity the whole text is ("两个人", "8千", "¥1,980", "1.5 公斤", "two"), else None."""
    text = (text or "").strip()
    found = quantities(text)
    if len(found) == 1 and found[0].start == 0 and found[0].end >= len(text.rstrip("。.")):
        return found[0]
    value = number(text)
    if value is not None:
        return Quantity("number", value, 0, len(text), text, amount=value)
    return None


def money(text: str, *, per: str | None = None) -> list[Quantity]:
    """The amounts of money in `text` (only those priced per `per`, e.g. "night", when given)."""
    return [q for q in quantities(text) if q.kind == "money" and (per is None or q.per == per)]


def durations(text: str, *, measures: str | None = None) -> list[Quantity]:
    """The durations in `text` (only those measuring `measures`: "commute" / "visit", when given)."""
    return [
        q for q in quantities(text) if q.kind == "duration" and (measures is None or q.measures == measures)
    ]


def measures(text: str, dimension: str) -> list[Quantity]:
    """The measures of one dimension (weight, length, data, count ...) in `text`."""
    return [q for q in quantities(text) if q.dimension == dimension]
