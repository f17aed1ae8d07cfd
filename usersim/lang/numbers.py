"""Numbers as written: digits with separators, Chinese numerals and English number words.

The one numeral reader of usersim (the judges, the simulator's guards, the reference agent and the
sandbox all read numbers here); the words are data (usersim/lang/data/<code>/numbers.yaml).
"""

from __future__ import annotations

import functools
import re

from usersim.lang.quantity_words import Lexicon, lexicon


# ------------------------------------------------------------------------------
def chinese_int(text: str) -> int | None:
    """三 -> 3, 十二 -> 12, 两千 -> 2000, 一万五 -> 15000; None when not a Chinese numeral."""
    lex = lexicon()
    digits, units = lex.digits, lex.cn_units
    if not text or any(ch not in digits and ch not in units for ch in text):
        return None
    total, section, digit = 0, 0, None
    last_unit, saw_zero = 1, False
    for ch in text:
        if ch in digits:
            digit = digits[ch]
            saw_zero = saw_zero or digit == 0
        else:
            unit = units[ch]
            if unit >= 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
            last_unit = unit
    if digit is not None:  # 一万五 = 15000, 两千五 = 2500: a trailing digit scales one unit down
        section += digit * (last_unit // 10 if last_unit >= 100 and not saw_zero else 1)
    return total + section


def chinese_digits() -> dict[str, int]:
    """The single Chinese numeral characters and their values (零..九, 两, and 十)."""
    lex = lexicon()
    return {**lex.digits, **{k: v for k, v in lex.cn_units.items() if v == 10}}


def _english(text: str) -> float | None:
    lex = lexicon()
    parts = re.split(r"[-\s]+", text.strip().lower())
    if not parts or any(p not in lex.words for p in parts):
        return None
    return float(sum(float(lex.words[p].value) for p in parts))


def number(text: str) -> float | None:
    """'12', '1,628.00', '1.5', '两', '十五', 'twenty-five' -> a number; None when the whole text is
    not one number."""
    text = (text or "").strip()
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?|\d+(\.\d+)?", text):
        return float(text.replace(",", ""))
    value = chinese_int(text)
    return float(value) if value is not None else _english(text)


@functools.lru_cache(maxsize=8)
def number_pattern(lex: Lexicon) -> re.Pattern[str]:
    """One number token: digits with separators (d), a Chinese numeral (c), 半 (h), English number
    words (e) or an article that counts as one before a unit (a)."""
    cn = "".join(sorted(set(lex.digits) | set(lex.cn_units) - {""}))
    lead = "".join(sorted(set(lex.digits) | {"十"}))
    en = "|".join(sorted((re.escape(w) for w in lex.words), key=len, reverse=True))
    arts = "|".join(re.escape(w) for w in lex.articles)
    half = "|".join(re.escape(w) for w in lex.half)
    return re.compile(
        r"(?P<d>(?<![\d.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d]))"
        rf"|(?P<c>[{lead}][{cn}]*)"
        + (rf"|(?P<h>{half})" if half else "")
        + (rf"|(?P<e>(?<![A-Za-z])(?:{en})(?:-(?:{en}))?(?![A-Za-z]))" if en else "")
        + (rf"|(?P<a>(?<![A-Za-z])(?:{arts})(?![A-Za-z]))" if arts else ""),
        re.IGNORECASE,
    )


def token_value(m: re.Match[str]) -> float | None:
    """The value of a number token matched by number_pattern (半 = 0.5, an article = 1)."""
    raw = m.group(0)
    if m.group("d"):
        return float(raw.replace(",", ""))
    if m.group("c"):
        v = chinese_int(raw)
        return None if v is None else float(v)
    if m.lastgroup == "h":
        return 0.5
    if m.lastgroup == "a":
        return 1.0
    return _english(raw)


_DIGITS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\d.,])\d+(?:\.\d+)?(?![\d])")


def numerals_in(text: str) -> list[tuple[float, int, int]]:
    """Every number written in digits, each a whole token with its span: '$1,628.00 for 14 bags'
    -> [(1628.0, 1, 10), (14.0, 15, 17)]; '14' never yields a '4'."""
    return list(_numerals(text or ""))


@functools.lru_cache(maxsize=8192)  # the guards read every message of a conversation on each turn
def _numerals(text: str) -> tuple[tuple[float, int, int], ...]:
    return tuple((float(m.group(0).replace(",", "")), m.start(), m.end()) for m in _DIGITS.finditer(text))
