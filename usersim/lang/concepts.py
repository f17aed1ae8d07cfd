"""Slot concepts: what a question asks about, by meaning (the `concepts` of acts.yaml).

"What's your staff ID?" names the concept `id`; "Where should we deliver it?" names `address`. A
concept has `words` (how a question names it) and `fields` (words in a fact's key, label or
description that mean it), so a persona fact `employee_id` is grounded to `id` and answers the
staff-ID question. Where concepts overlap in a question the longest match wins: "从哪里出发" is
origin, never the exit city that its prefix "从哪里出" would be. A concept may `implies` broader ones:
asking the first city one lands in (entry_city: 想先到哪个城市, where do you land first) asks the
destination too. Users add concepts or synonyms in
their own resource folder (`<code>/acts.yaml`, key `concepts`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from usersim.lang.phrases import codes_for, compiled
from usersim.lang.resources import Cue, Resources, language_codes, resources


@dataclass(frozen=True)
class ConceptHit:
    """One concept named in a text, with the cue (resource entry and span) that named it."""

    concept: str
    cue: Cue


def concept_names() -> list[str]:
    """Every concept any language defines, in file order."""
    out: list[str] = []
    for code in language_codes():
        for name in resources(code).get("acts", "concepts", {}) or {}:
            if name not in out:
                out.append(name)
    return out


def _spec(code: str, concept: str) -> dict:
    spec = (resources(code).get("acts", "concepts", {}) or {}).get(concept) or {}
    return spec if isinstance(spec, dict) else {"words": list(spec)}


Row = tuple[str, str, re.Pattern[str], tuple[str, ...]]
_TABLES: dict[str, tuple[Resources, list[Row]]] = {}


def _table(code: str) -> list[Row]:
    """(concept, entry, any-word pattern, its words) of a language, for the resources in force:
    the any-word pattern skips a concept at once when none of its words is there (one pattern per
    word is compiled only for a concept a text names: most never are)."""
    res = resources(code)
    held = _TABLES.get(code)
    if held is None or held[0] is not res:
        rows = []
        for concept in res.get("acts", "concepts", {}) or {}:
            words = tuple(str(w) for w in _spec(code, concept).get("words", ()) or ())
            anyone = compiled(words)
            if anyone is not None:
                rows.append((concept, f"{code}/acts.concepts.{concept}", anyone, words))
        held = _TABLES[code] = (res, rows)
    return held[1]


@functools.lru_cache(maxsize=4096)
def _each(words: tuple[str, ...]) -> list[re.Pattern[str]]:
    """One pattern per word (each valid: the any-word pattern of the same words compiled)."""
    return [p for w in words if (p := compiled((w,))) is not None]


def _hits(text: str, codes: list[str], only: str | None = None) -> list[ConceptHit]:
    found: list[ConceptHit] = []
    for code in codes:
        for concept, entry, anyone, words in _table(code):
            if (only is not None and concept != only) or not anyone.search(text):
                continue
            for pat in _each(words):  # each phrase on its own: one's hit never hides another's
                for m in pat.finditer(text):
                    if m.end() > m.start():
                        found.append(ConceptHit(concept, Cue(entry, m.start(), m.end(), m.group(0))))
    return found


def _generic() -> set[str]:
    return {str(c) for code in language_codes() for c in resources(code).get("acts", "generic_concepts", ())}


def _resolve(hits: list[ConceptHit]) -> list[ConceptHit]:
    """Longest match wins: a hit overlapping a longer hit of another concept is dropped; a generic
    concept (city, date, ...) never swallows a specific one ("飞入哪个城市" is entry_city)."""
    generic = _generic()
    rank = {id(h): (h.concept in generic, -(h.cue.end - h.cue.start), h.cue.start) for h in hits}
    kept: list[ConceptHit] = []
    for h in sorted(hits, key=lambda h: rank[id(h)]):
        clash = any(
            k.concept != h.concept
            and k.cue.start < h.cue.end
            and h.cue.start < k.cue.end
            and rank[id(k)][:2] < rank[id(h)][:2]  # equal length: both readings stay
            for k in kept
        )
        if not clash:
            kept.append(h)
    return sorted(kept, key=lambda h: h.cue.start)


def concepts_in(text: str, codes: list[str] | None = None) -> list[ConceptHit]:
    """The concepts a text names, in order of appearance (one hit per concept: its first)."""
    seen: dict[str, ConceptHit] = {}
    for h in _resolve(_hits(text, codes or codes_for(text))):
        seen.setdefault(h.concept, h)
    return list(seen.values())


def implied(concept: str) -> set[str]:
    """The broader concepts a concept's question also asks (`implies` in acts.yaml): asking the
    first city one lands in (entry_city) asks where the trip goes (destination)."""
    out: set[str] = set()
    for code in language_codes():
        out |= {str(c) for c in _spec(code, concept).get("implies", ()) or ()}
    return out


def names(text: str, concept: str, codes: list[str] | None = None) -> ConceptHit | None:
    """Whether `text` names `concept` (after longest-match resolution against every concept), or a
    narrower concept that implies it."""
    hits = concepts_in(text, codes)
    return next((h for h in hits if h.concept == concept), None) or next(
        (h for h in hits if concept in implied(h.concept)), None
    )


def shadowed(text: str, start: int, end: int, codes: list[str] | None = None) -> ConceptHit | None:
    """A longer concept hit that continues past the span [start, end) of `text`, so the span is
    only the front of a phrase that means something else (a case's word "从哪出" inside the origin
    phrase "从哪出发"), or None. A span that ends where the phrase ends is its head ("出发" in
    "从哪里出发") and is not shadowed."""
    for h in concepts_in(text, codes):
        if h.cue.start <= start and end < h.cue.end:
            return h
    return None


_SPLIT = re.compile(r"[_\-\s/.]+|(?<=[a-z])(?=[A-Z])")


def field_words(texts: Sequence[str]) -> list[str]:
    """A fact's key, label, aliases and description split into words (employee_id -> employee, id)."""
    out: list[str] = []
    for t in texts:
        for w in _SPLIT.split(t or ""):
            w = w.strip().lower()
            if w and w not in out:
                out.append(w)
    return out


def field_concepts(texts: Sequence[str]) -> list[str]:
    """The concepts a persona fact means, from its key/label/aliases/description: by the concepts'
    `fields` words (whole words in Latin text, substrings in CJK) or their question `words`."""
    words = field_words(texts)
    joined = " ".join(t for t in texts if t)
    found: list[str] = []
    for code in language_codes():
        table = resources(code).get("acts", "concepts", {}) or {}
        for concept in table:
            marks = [str(f).lower() for f in _spec(code, concept).get("fields", ()) or ()]
            if any((m in words) if m.isascii() else any(m in w for w in words) for m in marks):
                if concept not in found:
                    found.append(concept)
    for h in concepts_in(joined):
        if h.concept not in found:
            found.append(h.concept)
    return found


def _contains(low: str, phrase: str) -> bool:
    if phrase.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", low) is not None
    return phrase in low


def ground(text: str, fields: Mapping[str, Sequence[str]]) -> list[str]:
    """The persona fields a question asks for, best first: a field whose own words (key, label,
    aliases) appear in the question, else one sharing a concept the question names (the most
    specific: fewest concepts), ties broken by shared words."""
    low = text.lower()
    asked = {h.concept for h in concepts_in(text)}
    scored: list[tuple[int, int, int, str]] = []
    for i, (key, texts) in enumerate(fields.items()):
        own = [key.replace("_", " "), *(t for t in texts if t and len(t) <= 30)]
        direct = any(len(t) >= 2 and _contains(low, t.lower()) for t in own)
        concepts = field_concepts([key, *texts])
        shared = asked & set(concepts)
        overlap = len(set(field_words([key, *texts])) & set(re.findall(r"[a-z0-9]+|[^\x00-\x7f]", low)))
        if direct or shared:
            scored.append((0 if direct else 1, len(concepts) if shared else 99, -overlap, f"{i:04d}{key}"))
    return [s[3][4:] for s in sorted(scored)]
