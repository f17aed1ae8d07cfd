"""Phrase lists from the resource files compiled into matchers that return cues.

A resource list entry is a literal phrase (matched case-insensitively; a Latin phrase only as whole
words, its spaces as any whitespace) or `re:PATTERN`, a regular expression. Every hit is a
`lang.Cue` naming the entry (`<code>/<topic>.<key>`) and the span it matched, so a verdict can say
which word of which resource decided it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from usersim.lang.resources import Cue, Resources, detect, language_codes, languages, resources


def _one(phrase: str) -> str:
    if phrase.startswith("re:"):
        return f"(?:{phrase[3:]})"
    body = r"\s+".join(re.escape(p) for p in phrase.split())
    if phrase.isascii() and phrase[:1].isalnum():
        return rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])"
    return body


@functools.lru_cache(maxsize=2048)
def compiled(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex matching any of `phrases` (None for an empty list); a bad pattern names itself."""
    if not phrases:
        return None
    parts = [_one(p) for p in phrases]
    try:  # compiled once; each part on its own only to name the bad one (every language reads
        return re.compile("|".join(parts), re.IGNORECASE)  # hundreds of lists at its first use)
    except re.error as whole:
        for p, part in zip(phrases, parts, strict=True):
            try:
                re.compile(part)
            except re.error as exc:
                raise ValueError(f"language resource pattern {p!r} is not a valid regex: {exc}") from None
        raise whole


def codes_for(text: str) -> list[str]:
    """The languages whose cues are read in `text`: the detected one first, then the others whose
    script occurs in it (a Chinese reply quoting an English phrase is read with both)."""
    first = detect(text)
    return [first] + [c for c in language_codes() if c != first and _has_script(c, text)]


def _has_script(code: str, text: str) -> bool:
    script = languages.get(code).script
    pat = re.compile(f"[{script}]") if script else _LATIN
    return pat.search(text) is not None


_LATIN = re.compile(r"[A-Za-z]")


_CACHE: dict[tuple[str, str, str], tuple[Resources, re.Pattern[str] | None, str]] = {}


def pattern(code: str, topic: str, key: str) -> tuple[re.Pattern[str] | None, str]:
    """The compiled list `topic.key` of language `code` and its entry name, remembered for the
    resources in force (a new resource folder gives new resources, so a new pattern)."""
    res = resources(code)
    hit = _CACHE.get((code, topic, key))
    if hit is None or hit[0] is not res:
        hit = _CACHE[(code, topic, key)] = (res, compiled(res.words(topic, key)), res.entry(topic, key))
    return hit[1], hit[2]


def finditer(text: str, topic: str, key: str, codes: list[str] | None = None) -> Iterator[Cue]:
    """Every hit of the list `topic.key` in `text`, language by language."""
    for code in codes or codes_for(text):
        pat, entry = pattern(code, topic, key)
        if pat is None:
            continue
        for m in pat.finditer(text):
            if m.end() > m.start():
                yield Cue(entry, m.start(), m.end(), m.group(0))


def find(text: str, topic: str, key: str, codes: list[str] | None = None) -> Cue | None:
    """The first hit of `topic.key` in `text` (earliest in the first language that has one)."""
    for code in codes or codes_for(text):
        pat, entry = pattern(code, topic, key)
        m = pat.search(text) if pat is not None else None
        if m is not None and m.end() > m.start():
            return Cue(entry, m.start(), m.end(), m.group(0))
    return None


def shifted(cue: Cue, offset: int) -> Cue:
    """The same cue with its span moved by `offset` (from a piece's offsets to the whole text's)."""
    return Cue(cue.entry, cue.start + offset, cue.end + offset, cue.text)
