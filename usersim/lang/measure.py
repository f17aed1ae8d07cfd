"""What a quantity's surroundings say about it: an attached estimate word, and what a duration
measures (a commute / travel time or a visit / stay), read from the words of its clause.

The clause is the text between sentence and clause marks and brackets ("大皇宫（约 2 小时）" keeps
the bracket's own words); when it holds no cue, the whole line, then (in a Markdown table) the
header cell of the duration's column, are read. The nearest cue wins; commute and visit cues at
similar distance make the reading `mixed` (unsure), never a guess.
"""

from __future__ import annotations

import re

from usersim.lang.quantity_words import Lexicon
from usersim.lang.resources import Cue

_CLAUSE = re.compile(r"[。；;！？!?\n，,（）()【】\[\]]")
_STRONG = re.compile(r"[。；;！？!?\n]")
_WINDOW = 8  # an estimate word this close before the number belongs to it ("大约步行 20 分钟")


def _bounds(text: str, start: int, end: int, marks: re.Pattern[str]) -> tuple[int, int]:
    lo = max((m.end() for m in marks.finditer(text, 0, start)), default=0)
    hi = next((m.start() for m in marks.finditer(text, end)), len(text))
    return lo, hi


def estimate_of(text: str, start: int, end: int, lex: Lexicon) -> Cue | None:
    """The estimate word attached to the quantity at [start, end): within a few characters before
    it in its clause ("大约 20 分钟", "预计需要 30 分钟", "about 20 min") or right after it ("20 分钟左右",
    "20 minutes or so"). A word inside a longer word that is no estimate (预约) does not count."""
    lo, hi = _bounds(text, start, end, _CLAUSE)
    before = text[max(lo, start - _WINDOW - 6) : start]
    base = start - len(before)
    best: Cue | None = None
    for word in sorted(lex.estimate_before, key=len, reverse=True):
        for m in re.finditer(re.escape(word), before, re.IGNORECASE if word.isascii() else 0):
            a, b = base + m.start(), base + m.end()
            if word.isascii() and word[0].isalpha() and _latin_inside(text, a, b):
                continue
            if start - b > _WINDOW or re.search(r"\d", text[b:start]) or _inside_not_word(text, a, b, lex):
                continue
            if best is None or b > best.end:
                best = Cue(lex.estimate_before[word].entry, a, b, text[a:b])
    if best is not None:
        return best
    tail = text[end:hi]
    lead = len(tail) - len(tail.lstrip(" \t"))
    for word in sorted(lex.estimate_after, key=len, reverse=True):
        piece = tail[lead : lead + len(word)]
        if piece == word or (word.isascii() and piece.lower() == word.lower()):
            a = end + lead
            return Cue(lex.estimate_after[word].entry, a, a + len(word), text[a : a + len(word)])
    return None


def _latin_inside(text: str, a: int, b: int) -> bool:
    return (a > 0 and text[a - 1].isascii() and text[a - 1].isalpha()) or (
        b < len(text) and text[b].isascii() and text[b].isalpha()
    )


def _inside_not_word(text: str, a: int, b: int, lex: Lexicon) -> bool:
    for word in lex.estimate_not:
        for m in re.finditer(re.escape(word), text[max(0, a - len(word)) : b + len(word)]):
            s = max(0, a - len(word)) + m.start()
            if s <= a and s + len(word) >= b and len(word) > b - a:
                return True
    return False


def _cues(text: str, lo: int, hi: int, lex: Lexicon) -> list[tuple[str, Cue]]:
    """(kind, cue) for every duration cue in text[lo:hi], longest words first, no overlaps."""
    found: list[tuple[str, Cue]] = []
    taken: list[tuple[int, int]] = []
    piece = text[lo:hi]
    for word in sorted(lex.duration_cues, key=len, reverse=True):
        flags = re.IGNORECASE if word.isascii() else 0
        for m in re.finditer(re.escape(word), piece, flags):
            a, b = lo + m.start(), lo + m.end()
            if word.isascii() and word[0].isalpha() and _latin_inside(text, a, b):
                continue
            if any(a < y and x < b for x, y in taken):
                continue
            taken.append((a, b))
            w = lex.duration_cues[word]
            found.append((str(w.value), Cue(w.entry, a, b, text[a:b])))
    for pat, entry in lex.commute_patterns:
        for m in pat.finditer(piece):
            a, b = lo + m.start(), lo + m.end()
            found.append(("commute", Cue(entry, a, b, text[a:b])))
    return found


def _decide(found: list[tuple[str, Cue]], start: int, end: int) -> tuple[str | None, list[Cue], bool]:
    def dist(c: Cue) -> int:
        return max(0, start - c.end, c.start - end)

    nearest: dict[str, tuple[int, Cue]] = {}
    for kind, cue in found:
        d = dist(cue)
        if kind not in nearest or d < nearest[kind][0]:
            nearest[kind] = (d, cue)
    if not nearest:
        return None, [], False
    ranked = sorted(nearest.items(), key=lambda kv: kv[1][0])
    kind, (d, cue) = ranked[0]
    if len(ranked) == 1:
        return kind, [cue], False
    other_d, other = ranked[1][1]
    if other_d >= 2 * d + 3:  # the other kind's cue is clearly farther: the nearer one decides
        return kind, [cue, other], False
    return None, [cue, other], True


def measure_of(text: str, start: int, end: int, lex: Lexicon) -> tuple[str | None, list[Cue], bool]:
    """(what the duration at [start, end) measures: "commute" | "visit" | None, the cues read,
    mixed): its clause, else its line, else its table column's header."""
    for marks in (_CLAUSE, _STRONG):
        lo, hi = _bounds(text, start, end, marks)
        found = _cues(text, lo, hi, lex)
        if found:
            return _decide(found, start, end)
    header = _column_header(text, start)
    if header is not None:
        found = _cues(text, header[0], header[1], lex)
        if found:
            kind, cues, mixed = _decide(found, header[0], header[0])
            return kind, cues, mixed
    return None, [], False


def _column_header(text: str, pos: int) -> tuple[int, int] | None:
    """[start, end) of the header cell above `pos` in a Markdown table, or None."""
    line_start = text.rfind("\n", 0, pos) + 1
    line_end = text.find("\n", pos)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    if not line.lstrip().startswith("|"):
        return None
    column = text.count("|", line_start, pos)
    rows: list[int] = []  # starts of the table's lines, from this one up
    s = line_start
    while s > 0:
        prev = text.rfind("\n", 0, s - 1) + 1
        if not text[prev : s - 1].lstrip().startswith("|"):
            break
        rows.append(prev)
        s = prev
    if not rows:
        return None
    head = rows[-1]
    head_end = text.find("\n", head)
    cells = [m.start() for m in re.finditer(r"\|", text[head:head_end])]
    if column >= len(cells):
        return None
    a = head + cells[column - 1] + 1 if column >= 1 else head
    b = head + cells[column] if column < len(cells) else head_end
    return a, b
