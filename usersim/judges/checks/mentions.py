"""Mentions of keywords in replies and how each stands (usersim.lang.polarity): keyword matching
that ignores whitespace and case, numbers by value, spellings from the case's `synonyms` and the
language layer's lexicon (驾车 = 开车 = 自驾 = driving ...), the other names of a city or sight the
place data knows (杭州 = Hangzhou, 清水寺 = Kiyomizu-dera), and a three-way reading of the result:

- present: some mention is not negative ("cannot be refunded" is not a mention of refunded);
- absent: no mention, or every mention is confidently negated / excluded / rejected;
- doubtful: the mentions there are read only unsurely (cues conflict, a negation loosely in
  reach, a hypothetical) — the check then says "uncertain" rather than guess.

A mention under a condition in a sentence that offers to do it later ("如果你告诉我天数，我可以再帮你
排成 Day 1 的行程") is not said now: it reads as negated, the offer its cue.

No language knowledge lives here: every cue comes from lang's resource files.
"""

from __future__ import annotations

import functools
import re
from array import array
from dataclasses import dataclass
from typing import Literal

from usersim.lang import Cue, detect, phrases
from usersim.lang.lexicon import synonyms as lexicon_synonyms
from usersim.lang.polarity import NEUTRAL, Reader, Reading

Presence = Literal["present", "absent", "doubtful"]


def squash(text: str) -> str:
    """Text for matching: case folded, all whitespace removed ("华为 MateBook" == "华为MateBook")."""
    return re.sub(r"\s+", "", text).casefold()


def _numeric(word: str) -> bool:
    from usersim.judges.checks.normalize import is_quantity

    return bool(re.search(r"\d", word)) and is_quantity(word.strip())


def _letter(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _word_gaps(word: str) -> set[int]:
    """Positions (in the squashed word) of a space between two Latin letters ("New York": 3)."""
    out, k = set(), 0
    for i, ch in enumerate(word):
        if ch.isspace():
            continue
        if k and word[i - 1].isspace() and _letter(ch) and _letter(word[:i].rstrip()[-1:]):
            out.add(k)
        k += 1
    return out


def find_all(word: str, text: str) -> list[int]:
    """Start offsets (in `text`) of `word`, ignoring whitespace and case in both ("华为 MateBook"
    is "华为MateBook", "Day 1" is "Day1"); a word starting with a Latin letter does not start inside
    another word ("eligible" is not in "ineligible"), and a space between two Latin letters of the
    text is kept ("Tokyo" is not in "to Kyoto")."""
    needle = squash(word)
    if not needle:
        return []
    kept, hay = _folded(text)
    latin = _letter(needle[0])
    gaps = _word_gaps(word)
    out, start = [], hay.find(needle)
    while start != -1:
        at = kept[start]
        inside = latin and at > 0 and _letter(text[at - 1])
        bridged = any(
            kept[start + k] > kept[start + k - 1] + 1
            and _letter(text[kept[start + k]])
            and _letter(text[kept[start + k - 1]])
            and k not in gaps
            for k in range(1, len(needle))
        )
        if not (inside or bridged):
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


@functools.lru_cache(maxsize=1024)
def place_names(word: str) -> tuple[str, ...]:
    """The other names of the city or sight `word` is itself a name of (杭州 -> Hangzhou, 杭州市;
    清水寺 -> Kiyomizu-dera), from the place data; () for anything else (an airport, a composite
    like 北京故宫, an unknown word). One-character aliases (沪) are left out: too easily inside
    other words."""
    from usersim.sandbox.places import place_data, resolve_place

    ref = resolve_place(word)
    if ref is None or ref.kind == "airport":
        return ()
    table = place_data()["cities" if ref.kind == "city" else "places"]
    entry = next((e for e in table if e["name"] == ref.name), None)
    if entry is None:
        return ()
    names = [str(entry["name"]), *(str(a) for a in entry.get("aliases", []))]
    if squash(word) not in {squash(n) for n in names}:
        return ()
    return tuple(n for n in names if squash(n) != squash(word) and len(squash(n)) > 1)


def spellings(word: str, synonyms: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(spelling, via) of a keyword: itself, the case's synonyms, the lexicon's, then the place
    data's other names of a city or sight."""
    out = [(word, ""), *((s, "synonyms") for s in synonyms.get(word, []))]
    extra = [(p, f"lexicon.{c}") for c, p in lexicon_synonyms(word)] + [
        (p, "places") for p in place_names(word)
    ]
    for phrase, via in extra:
        if all(squash(phrase) != squash(s) for s, _ in out):
            out.append((phrase, via))
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
                    reading = offered(text, at, end, self.reader(k).at(at, end))
                    out.append(Mention(word, spelling, turn, at, end, reading, via))
        return out


_SENTENCE_END = re.compile(r"[。！？!?\n]|\.(?=\s|$)")


def offered(text: str, start: int, end: int, reading: Reading) -> Reading:
    """A mention under a condition in a sentence that offers to do it later ("如果你告诉我天数，我可以
    再帮你排成 Day 1 的行程", "if you'd like, I can look at Tokyo too") is not said now: negated,
    with the offer as its cue (lang `mentions.offers_later`). Any other reading is kept."""
    if reading.polarity != "hypothetical":
        return reading
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    head = ends[-1] if ends else 0
    tail = _SENTENCE_END.search(text, end)
    sentence = text[head : tail.start() if tail else len(text)]
    cue = phrases.find(sentence, "mentions", "offers_later")
    if cue is None:
        return reading
    return Reading("negated", "confident", (*reading.cues, phrases.shifted(cue, head)))


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
