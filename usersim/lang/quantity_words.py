"""The word tables of quantities and dates (numbers, money, units), merged over every language and compiled once.

A reply may mix languages ("¥680/night", "步行 20 min"), so quantities are read with the union of
every language's numbers/money/units resources; each word remembers the entry it came from, so a
reading can name the cue ("zh/money.codes"). Rebuilt when resources change (user folders added).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from usersim.lang.resources import language_codes, resources


@dataclass(frozen=True)
class Word:
    """One resource phrase: its value (a number, currency, unit id ...) and the entry it is from."""

    value: Any
    entry: str


@dataclass(eq=False)  # hashed by identity: compiled patterns are cached per lexicon
class Lexicon:
    """Every language's quantity words, by role."""

    digits: dict[str, int] = field(default_factory=dict)
    cn_units: dict[str, int] = field(default_factory=dict)
    half: dict[str, Word] = field(default_factory=dict)
    words: dict[str, Word] = field(default_factory=dict)  # English number words
    articles: dict[str, Word] = field(default_factory=dict)
    scales: dict[str, Word] = field(default_factory=dict)
    ranges: dict[str, Word] = field(default_factory=dict)
    and_a_half: dict[str, Word] = field(default_factory=dict)
    estimate_before: dict[str, Word] = field(default_factory=dict)
    estimate_after: dict[str, Word] = field(default_factory=dict)
    estimate_not: dict[str, Word] = field(default_factory=dict)
    symbols: dict[str, Word] = field(default_factory=dict)
    codes: dict[str, Word] = field(default_factory=dict)
    per_units: dict[str, Word] = field(default_factory=dict)
    per_after: dict[str, Word] = field(default_factory=dict)
    per_before: dict[str, Word] = field(default_factory=dict)
    per_prefix: dict[str, Word] = field(default_factory=dict)
    per_fillers: dict[str, Word] = field(default_factory=dict)
    units: dict[str, Word] = field(default_factory=dict)  # word -> (unit id, dimension, factor)
    minute_after_hour: dict[str, Word] = field(default_factory=dict)
    half_infix: dict[str, Word] = field(default_factory=dict)
    duration_cues: dict[str, Word] = field(default_factory=dict)  # word -> "commute" | "visit"
    commute_patterns: list[tuple[re.Pattern[str], str]] = field(default_factory=list)
    sorted_words: dict[str, tuple[str, ...]] = field(default_factory=dict)  # table -> longest first

    def longest(
        self, table: str, text: str, pos: int, *, ascii_boundary: bool = True
    ) -> tuple[str, Word] | None:
        """The longest word of `table` written at text[pos:]; a Latin word must end the word."""
        for word in _by_length(self, table):
            if text.startswith(word, pos) or (
                _fold(word) and text[pos : pos + len(word)].lower() == word.lower()
            ):
                end = pos + len(word)
                if ascii_boundary and word[-1:].isalpha() and word.isascii() and end < len(text):
                    if text[end].isascii() and text[end].isalpha():
                        continue
                return text[pos:end], getattr(self, table)[word]
        return None

    def ending(self, table: str, text: str, end: int) -> tuple[str, Word] | None:
        """The longest word of `table` that ends at text[:end]; a Latin word must start the word."""
        for word in _by_length(self, table):
            start = end - len(word)
            if start < 0:
                continue
            piece = text[start:end]
            if piece == word or (_fold(word) and piece.lower() == word.lower()):
                if (
                    word[:1].isalpha()
                    and word.isascii()
                    and start > 0
                    and text[start - 1].isascii()
                    and text[start - 1].isalpha()
                ):
                    continue
                return piece, getattr(self, table)[word]
        return None


def _fold(word: str) -> bool:
    # Latin words match in any case, except one letter, where case is the meaning (G = GB, g = gram).
    return word.isascii() and len(word) > 1


def _by_length(lex: Lexicon, table: str) -> tuple[str, ...]:
    if table not in lex.sorted_words:
        lex.sorted_words[table] = tuple(sorted(getattr(lex, table), key=len, reverse=True))
    return lex.sorted_words[table]


def _add(into: dict[str, Word], data: Any, entry: str) -> None:
    if isinstance(data, dict):
        for k, v in data.items():
            into.setdefault(str(k), Word(v, entry))
    else:
        for k in data or ():
            into.setdefault(str(k), Word(str(k), entry))


@functools.lru_cache(maxsize=8)
def _build(key: tuple) -> Lexicon:
    lex = Lexicon()
    for code in language_codes():
        res = resources(code)
        nums, money, units = res.topic("numbers"), res.topic("money"), res.topic("units")
        lex.digits.update({str(k): int(v) for k, v in (nums.get("digits") or {}).items()})
        lex.cn_units.update({str(k): int(v) for k, v in (nums.get("units") or {}).items()})
        for name in ("half", "words", "articles", "scales", "range", "and_a_half"):
            _add(
                getattr(lex, "ranges" if name == "range" else name), nums.get(name), f"{code}/numbers.{name}"
            )
        for name in ("estimate_before", "estimate_after", "estimate_not"):
            _add(getattr(lex, name), nums.get(name), f"{code}/numbers.{name}")
        for name in ("symbols", "codes", "per_units", "per_after", "per_before", "per_prefix", "per_fillers"):
            _add(getattr(lex, name), money.get(name), f"{code}/money.{name}")
        for unit, spec in (units.get("units") or {}).items():
            for w in spec.get("words") or ():
                lex.units.setdefault(
                    str(w),
                    Word((str(unit), str(spec["dimension"]), float(spec["factor"])), f"{code}/units.{unit}"),
                )
        _add(lex.minute_after_hour, units.get("minute_after_hour"), f"{code}/units.minute_after_hour")
        _add(lex.half_infix, units.get("half_infix"), f"{code}/units.half_infix")
        for kind, words in (units.get("duration_cues") or {}).items():
            for w in words or ():
                lex.duration_cues.setdefault(str(w), Word(str(kind), f"{code}/units.duration_cues.{kind}"))
        for pat in units.get("commute_patterns") or ():
            lex.commute_patterns.append(
                (re.compile(str(pat), re.IGNORECASE), f"{code}/units.commute_patterns")
            )
    return lex


def lexicon() -> Lexicon:
    """The merged lexicon for the resources in force (rebuilt when a resource folder is added)."""
    return _build(_key())


def _key() -> tuple:
    # the resource files in force (an added user folder changes it; ids of freed objects may repeat)
    return tuple((code, tuple(map(tuple, resources(code).files.values()))) for code in language_codes())
