"""A ✅/❌ mark inside a line of prose ("20000mAh 充电宝 ✅ 可随身带 ❌ 不能托运", "Kyoto ✅ good
pick, Tokyo ❌ too crowded") judges only the part of its clause it belongs to, not the whole line.

With one mark in the clause, the mark is the clause's verdict. With several, how they are written
decides which part each judges: when the clause ends on a mark ("Carry-on ✅ · checked bag ❌")
each mark follows the words it judges; otherwise each mark leads the words after it, and the words
before the first mark (the clause's subject) take the first mark ("充电宝 ✅ 可随身带 ❌ 不能托运":
充电宝 and 随身带 ✅, 托运 ❌). Marks that also mean something else in prose (× in "2 × 3",
⭐ in a rating) are left to the table and list readers (usersim.lang.layout)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from usersim.lang.layout import marks

_NOT_INLINE = "×⭐"


@dataclass(frozen=True)
class Mark:
    kind: str  # "excluded" | "recommended"
    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    chars = "".join(ch for ch in marks("excluded") + marks("recommended") if ch not in _NOT_INLINE)
    return re.compile(f"[{re.escape(chars)}]\ufe0f?(?:[{re.escape(chars)}]\ufe0f?)*")


def inline_marks(text: str, start: int, end: int) -> list[Mark]:
    """The marks in text[start:end] (a run of marks, "✅✅", is one)."""
    out = []
    excluded = marks("excluded")
    for m in _pattern().finditer(text, start, end):
        kind = "excluded" if any(ch in excluded for ch in m.group(0)) else "recommended"
        out.append(Mark(kind, m.start(), m.end(), m.group(0)))
    return out


def governing_mark(text: str, start: int, end: int, at: int, at_end: int) -> tuple[Mark, int] | None:
    """(the mark that judges the mention at [at, at_end) of the clause text[start:end], how many
    marks the clause has); None when the clause has no mark or the mention is a mark."""
    found = inline_marks(text, start, end)
    if not found or any(m.start <= at < m.end for m in found):
        return None
    if len(found) == 1:
        return found[0], 1
    trailing = not re.search(r"\w", text[found[-1].end : end])
    if trailing:  # "A ✅ · B ❌": the first mark after the mention
        mark = next((m for m in found if m.start >= at_end), found[-1])
    else:  # "A ✅ B ❌ C": the last mark before it; the subject before the first takes the first
        mark = next((m for m in reversed(found) if m.end <= at), found[0])
    return mark, len(found)
