"""A reply cut into sentences, clauses and Markdown items: spans into the text.

Every reader of agent and user turns goes through these spans, so "where a sentence ends" is
decided once: at 。！？!?；; and line breaks, at ". " between sentences (also after a number:
"card 7788. Block it"), never inside a number ("3.5"), after an ellipsis or after a list item's
number at the start of a line ("2. Book the hotel"), nor at a bracket's closing. `reading(text)` is the text with Markdown markup (bold, headings,
code ticks) blanked out, same length, so offsets into it are offsets into the reply. `clauses`
cuts further at commas, colons, dashes and brackets. `layout` (lang.markdown) finds list items,
table rows or columns, their ❌/✅ marks and the lead-in lines that govern them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"[。！？!?；;\n]+|(?<!\.)\.(?=\s|$)")
_ENUMERATOR = re.compile(r"(?:^|\n)[ \t]*\d{1,3}$")  # "2." opening a line numbers an item


def _period_ends(text: str, i: int) -> bool:
    """Whether the "." at i ends a sentence: followed by a space or the end, not part of an ellipsis,
    not a list item's number at the start of a line."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if (nxt and not nxt.isspace()) or (i and text[i - 1] == "."):
        return False
    return not (i and text[i - 1].isdigit() and _ENUMERATOR.search(text, max(0, i - 12), i))


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
        if m.group(0) == "." and not _period_ends(text, m.start()):
            continue
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


_MARKUP = re.compile(
    r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|`+|~~|^[ \t]*#{1,6}(?=\s)|^[ \t]*>+", re.M
)


def reading(text: str) -> str:
    """`text` with Markdown emphasis, heading hashes, quote marks and code ticks replaced by
    spaces: the same length, so a span found in the reading is a span of the reply."""
    return _MARKUP.sub(lambda m: " " * len(m.group(0)), text or "")


@dataclass(frozen=True)
class Clause(Span):
    """A clause: a sentence piece cut at commas, colons, dashes and brackets.

    line: line number; sentence: index of the sentence it belongs to; aside: inside brackets;
    joined: joined to the clause before by a comma, bracket, colon or dash (same sentence);
    after_colon: follows a "：" on the same line."""

    line: int = 0
    sentence: int = 0
    aside: bool = False
    joined: bool = False
    after_colon: bool = False


_OPEN = "（(【["
_CLOSE = ")）】]"
_SENT = set("。！？!?；;\n")
_SOFT = set("，,：:、|") | set(_OPEN) | set(_CLOSE)


def _cut_at(text: str, i: int) -> str | None:
    """The kind of cut at position i: a sentence end, a soft cut (comma, colon, bracket, dash) or None."""
    ch = text[i]
    prev = text[i - 1] if i else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch in ",:." and prev.isdigit() and nxt.isdigit():
        return None  # 1,299 / 10:30 / 3.5
    if ch == ".":
        return "sent" if _period_ends(text, i) else None
    if ch in _SENT:
        return "sent"
    if ch == "、":
        return None  # an enumeration comma keeps its items in one clause ("A、B 已剔除")
    if ch in _SOFT:
        return "soft"
    if ch in "—–" or (ch == "-" and prev == " " and nxt == " "):
        return "soft"
    return None


def clauses(text: str) -> list[Clause]:
    """The clauses of `text` (its reading: Markdown markup blanked), stripped, with offsets."""
    src = reading(text)
    out: list[Clause] = []
    line = sentence = depth = 0
    start = 0
    sep = "\n"
    open_sentence = False  # the current sentence has a clause
    for i in range(len(src) + 1):
        kind = "sent" if i == len(src) else _cut_at(src, i)
        if kind is None:
            continue
        seg = src[start:i]
        ch = src[i] if i < len(src) else "\n"
        if seg.strip():
            lead = len(seg) - len(seg.lstrip())
            body = seg.strip()
            a = start + lead
            joined = sep not in _SENT
            out.append(
                Clause(
                    a, a + len(body), text[a : a + len(body)], line, sentence, depth > 0, joined, sep in "：:"
                )
            )
            open_sentence = True
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        if ch == "\n":
            line += 1
            depth = 0
        if kind == "sent" and open_sentence:
            sentence += 1
            open_sentence = False
        if seg.strip() or ch not in _CLOSE:
            sep = ch if kind == "soft" or ch in _SENT else "\n"
        start = i + 1
    return out


def lines(text: str) -> list[Span]:
    """Every line of `text` (not stripped, empty lines included) with its offsets."""
    out, pos = [], 0
    for ln in (text or "").split("\n"):
        out.append(Span(pos, pos + len(ln), ln))
        pos += len(ln) + 1
    return out
