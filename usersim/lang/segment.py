"""A reply cut into sentences (and, for the Markdown-aware parts, items): spans into the text.

Every reader of agent and user turns goes through these spans, so "where a sentence ends" is
decided once: at 。！？!?；; and line breaks, at ". " between sentences, never inside a number
("3.5") or a bracket's closing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"[。！？!?；;\n]+|(?<![\d.])\.(?=\s|$)(?!\d)")


@dataclass(frozen=True)
class Span:
    """A piece of a text: [start, end) offsets into the original text and the piece itself."""

    start: int
    end: int
    text: str


def sentences(text: str) -> list[Span]:
    """The sentences (and list lines) of `text`, stripped, with their offsets; the closing
    punctuation stays with its sentence ("请问几位？")."""
    out: list[Span] = []
    start = 0
    for m in _SENTENCE_END.finditer(text or ""):
        _add(out, text, start, m.end())
        start = m.end()
    _add(out, text or "", start, len(text or ""))
    return out


def _add(out: list[Span], text: str, a: int, b: int) -> None:
    piece = text[a:b]
    lead = len(piece) - len(piece.lstrip())
    body = piece.strip()
    if body:
        out.append(Span(a + lead, a + lead + len(body), body))
