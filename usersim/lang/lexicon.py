"""Synonym sets for common domain concepts (`data/<code>/lexicon.yaml`): drive = 驾车 = 开车 =
driving = by car ...; a set of the same name in every language (and in the user's resource
folders) is one concept. Keyword checks use them in addition to a case's own `synonyms`."""

from __future__ import annotations

import functools
import re

from usersim.lang.resources import language_codes, resources


@functools.lru_cache(maxsize=4)
def _sets(_key: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for code in language_codes():
        for name, words in resources(code).topic("lexicon").items():
            bucket = out.setdefault(str(name), [])
            bucket.extend(str(w) for w in (words or []) if str(w) not in bucket)
    return {k: tuple(v) for k, v in out.items()}


def concepts() -> dict[str, tuple[str, ...]]:
    """Every synonym set by concept name, all languages merged."""
    return _sets(tuple(f"{c}:{id(resources(c))}" for c in language_codes()))


def _key(phrase: str) -> str:
    return re.sub(r"\s+", "", phrase).casefold()  # "第 1 天" is "第1天", "Day 1" is "day1"


def synonyms(word: str) -> list[tuple[str, str]]:
    """(concept, phrase) for every other phrase that means `word` ("驾车" -> drive: 开车, 自驾, ...),
    spellings compared ignoring case and whitespace."""
    key = _key(word)
    out: list[tuple[str, str]] = []
    for name, words in concepts().items():
        if any(_key(w) == key for w in words):
            out.extend((name, w) for w in words if _key(w) != key and (name, w) not in out)
    return out
