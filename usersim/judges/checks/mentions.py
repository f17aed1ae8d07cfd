"""Mentions of keywords in replies and how each stands (usersim.lang.polarity): keyword matching
that ignores whitespace and case, numbers by value, spellings from the case's `synonyms` and the
language layer's lexicon (驾车 = 开车 = 自驾 = driving ...), and a three-way reading of the result:

- present: some mention is not negative ("cannot be refunded" is not a mention of refunded);
- absent: no mention, or every mention is confidently negated / excluded / rejected;
- doubtful: the mentions there are read only unsurely (cues conflict, a negation loosely in
  reach, a hypothetical) — the check then says "uncertain" rather than guess.

No language knowledge lives here: every cue comes from lang's resource files.
"""

from __future__ import annotations

import functools
import re
from array import array
from dataclasses import dataclass
from typing import Literal

from usersim.lang import Cue, detect
from usersim.lang.lexicon import synonyms as lexicon_synonyms
from usersim.lang.polarity import NEUTRAL, Reader, Reading

Presence = Literal["present", "absent", "doubtful"]


def squash(text: str) -> str:
    """Text for matching: case folded, all whitespace removed ("华为 MateBook" == "华为MateBook")."""
    return re.sub(r"\s+", "", text).casefold()


def _numeric(word: str) -> bool:
    from usersim.judges.checks.normalize import is_quantity

    return bool(re.search(r"\d", word)) and is_quantity(word.strip())


def find_all(word: str, text: str) -> list[int]:
    """Start offsets (in `text`) of `word`, ignoring whitespace and case in both; a word starting
    with a Latin letter does not start inside another word ("eligible" is not in "ineligible")."""
    needle = squash(word)
    if not needle:
        return []
    kept, hay = _folded(text)
    latin = needle[0].isascii() and needle[0].isalpha()
    out, start = [], hay.find(needle)
    while start != -1:
        at = kept[start]
        if not (latin and at > 0 and text[at - 1].isascii() and text[at - 1].isalpha()):
            out.append(at)
        start = hay.find(needle, start + 1)
    return out


# pure: every keyword of a check is looked up in the same few replies, one after another; a few
# replies are enough (an entry holds 8 bytes per character of its reply)
@functools.lru_cache(maxsize=32)
def _folded(text: str) -> tuple[array[int], str]:
    """(the offset in `text` of each character that is not whitespace, those characters casefolded)."""
    kept = array("q", (i for i, ch in enumerate(text) if not ch.isspace()))
    return kept, "".join(text[i] for i in kept).casefold()


def match_end(text: str, at: int, word: str) -> int:
    """End offset of a whitespace-insensitive match of `word` starting at `at`."""
    need, i = len(squash(word)), at
    while need and i < len(text):
        if not text[i].isspace():
            need -= 1
        i += 1
    return i


def has_keyword(word: str, text: str) -> bool:
    """Whether a keyword occurs in text: numbers by value (normalize.find_keyword: "1628" finds
    "$1,628.00", "4" never finds "14"), words ignoring case and whitespace ("华为 MateBook" finds
    "华为MateBook 14 2024")."""
    from usersim.judges.checks.normalize import find_keyword

    if _numeric(word):
        return find_keyword(word, text)
    return bool(find_all(word, text))


@dataclass(frozen=True)
class Mention:
    """One mention of a keyword: the spelling found, the reply it is in, its span and reading."""

    word: str
    spelling: str
    reply: int
    start: int
    end: int
    reading: Reading
    via: str = ""  # "synonyms" (the case's) or "lexicon.<concept>"


def spellings(word: str, synonyms: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(spelling, via) of a keyword: itself, the case's synonyms, then the lexicon's."""
    out = [(word, ""), *((s, "synonyms") for s in synonyms.get(word, []))]
    for concept, phrase in lexicon_synonyms(word):
        if all(squash(phrase) != squash(s) for s, _ in out):
            out.append((phrase, f"lexicon.{concept}"))
    return out


class Texts:
    """The scoped replies, each with one polarity Reader (built on first use)."""

    def __init__(self, texts: list[tuple[int, str]]) -> None:
        self.texts = texts
        self._readers: dict[int, Reader] = {}

    def reader(self, k: int) -> Reader:
        if k not in self._readers:
            self._readers[k] = Reader(self.texts[k][1])
        return self._readers[k]

    def mentions(self, word: str, synonyms: dict[str, list[str]]) -> list[Mention]:
        """Every mention of `word` (or a spelling of it) in the replies, read in context. A number
        is matched by value and never read as negated."""
        out: list[Mention] = []
        for k, (turn, text) in enumerate(self.texts):
            for spelling, via in spellings(word, synonyms):
                if _numeric(spelling):
                    if has_keyword(spelling, text):
                        out.append(Mention(word, spelling, turn, 0, 0, NEUTRAL, via))
                    continue
                for at in find_all(spelling, text):
                    end = match_end(text, at, spelling)
                    out.append(Mention(word, spelling, turn, at, end, self.reader(k).at(at, end), via))
        return out


def presence(found: list[Mention]) -> tuple[Presence, Mention | None]:
    """Whether a keyword counts as said (`any` / `all`): present when a mention is not negative,
    absent when there is none or every one is surely negative, else doubtful."""
    plain = next((m for m in found if not m.reading.negative), None)
    if plain is not None:
        return "present", plain
    unsure = next((m for m in found if not m.reading.sure), None)
    if unsure is not None:
        return "doubtful", unsure
    return "absent", found[0] if found else None


def forbidden(found: list[Mention]) -> tuple[Presence, Mention | None]:
    """Whether a `none` keyword is said: present when a mention surely stands (neutral,
    recommended, asked about), absent when every mention is surely negated, else doubtful."""
    plain = next(
        (
            m
            for m in found
            if not m.reading.negative and m.reading.sure and m.reading.polarity != "hypothetical"
        ),
        None,
    )
    if plain is not None:
        return "present", plain
    unsure = next((m for m in found if not m.reading.negative or not m.reading.sure), None)
    if unsure is not None:
        return "doubtful", unsure
    return "absent", found[0] if found else None


def cues_of(m: Mention | None) -> list[Cue]:
    """The cues behind a mention's reading, plus the lexicon entry when a lexicon spelling matched."""
    if m is None:
        return []
    out = list(m.reading.cues)
    if m.via.startswith("lexicon."):
        out.append(Cue(f"{detect(m.spelling)}/{m.via}", m.start, m.end, m.spelling))
    return out
