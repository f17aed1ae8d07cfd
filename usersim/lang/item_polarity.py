"""How a listed item stands: its label's reading, a ✅/❌ verdict (a verdict column or row, a
mark leading its line), a cell that only says it is out, a later clause of its line that rejects it
without a new subject, and the lead-in line governing its list."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

from usersim.lang.cues import NEUTRAL, CueReader, Reading, _Hit, _list
from usersim.lang.layout import Item, Section, marks
from usersim.lang.resources import Cue
from usersim.lang.segment import Clause, Span


class ItemReader(CueReader, ABC):
    """Readings of items. Abstract: the clause-level readings it builds on (`at`, `subjectless`)
    are the polarity `Reader`'s, which is the only concrete reader."""

    @abstractmethod
    def at(self, start: int, end: int) -> Reading:
        """The reading of the mention at [start, end) (lang.polarity.Reader.at)."""

    @abstractmethod
    def subjectless(self, j: int) -> Reading | None:
        """The reading a subjectless clause j gives the clause before it (lang.polarity.Reader)."""

    def _item_of(self, offset: int) -> Item | None:
        for it in self.layout.listed + self.layout.table:
            if it.kind == "column":
                if it.label.start <= offset < it.label.end or any(
                    c.start <= offset < c.end for c in it.cells
                ):
                    return it
            elif it.span.start <= offset < it.span.end:
                return it
        return None

    def item(self, it: Item) -> Reading:
        """The reading of an item as a whole: its label's reading, its verdict, its lead-in."""
        if not it.label.text:
            return self._item_reading(it) or NEUTRAL
        hits = self.hits(it.label)
        if hits and self.marker_only(it.label, hits):
            return self._from_hits(hits) or NEUTRAL
        body = self.norm[it.label.start : it.label.end]
        p = it.label.start + len(body) - len(body.lstrip(" " + marks("excluded") + marks("recommended")))
        r = self.at(p, p)  # zero width: every cue in the label is before or after the name
        return r if r.polarity != "neutral" else self._item_reading(it) or NEUTRAL

    def _item_reading(self, it: Item) -> Reading | None:
        return (
            self._verdict(it)
            or self._cells(it)
            or self._in_line(it)
            or self._lead_in(self.layout.section_of(it))
        )

    def _in_line(self, it: Item) -> Reading | None:
        """A list line that says later, without a new subject, that its item is out
        ("5. Redmi Note 13 —— 小米旗下，不符合要求")."""
        if it.kind not in ("numbered", "bullet"):
            return None
        for j, c in enumerate(self.clauses):
            if it.label.end <= c.start < it.span.end and c.start > it.label.start:
                r = self.subjectless(j)
                if r is not None and r.negative:
                    return r
        return None

    def _verdict(self, it: Item) -> Reading | None:
        if it.verdict is None:
            return None
        t = it.verdict.text
        no = [ch for ch in marks("excluded") if ch in t]
        yes = [ch for ch in marks("recommended") if ch in t]
        entry = "segment.marks"
        if no and yes:
            return Reading("excluded", "conflicting", (Cue(entry, it.verdict.start, it.verdict.end, t),))
        if no or yes:
            i = t.index((no or yes)[0])
            cue = Cue(
                f"{entry}.{'excluded' if no else 'recommended'}",
                it.verdict.start + i,
                it.verdict.start + i + 1,
                t[i],
            )
            return Reading("excluded" if no else "recommended", "confident", (cue,))
        hits = self.hits(it.verdict)
        if hits and self.marker_only(it.verdict, hits):
            return self._from_hits(hits)
        return self._verdict_words(it.verdict)

    def _verdict_words(self, cell: Span) -> Reading | None:
        """A verdict cell in words: its leading clause says nothing but a cue ("已排除（小米）",
        "推荐，性价比高", "Excluded — Xiaomi brand"); the rest of the cell gives the reason."""
        first = next((c for c in self.clauses if cell.start <= c.start < cell.end), None)
        if first is None:
            return None
        hits = self.hits(first)
        if not hits or not self.marker_only(first, hits):
            return None
        got = self._from_hits(hits)
        rest = self.hits(Span(first.end, cell.end, self.text[first.end : cell.end]))
        if got is not None and any(
            (h.group.kind == "recommended") != (got.polarity == "recommended") for h in rest
        ):
            return Reading(got.polarity, "conflicting", got.cues + tuple(h.cue(self.text) for h in rest))
        return got

    def _cells(self, it: Item) -> Reading | None:
        """A row with a cell that only says it is out ("| OPPO A3 | 1499 | 已剔除 |")."""
        if it.kind != "row":
            return None
        for cell in it.cells:
            if it.grid and all(
                ch in marks("excluded") + marks("recommended") + " \ufe0f" for ch in cell.text
            ):
                continue  # a feature mark in a grid of marks ("| NFC | ❌ |"), not a verdict
            hits = self.hits(cell)
            if (
                hits
                and self.marker_only(cell, hits)
                and any(h.group.kind in ("excluded", "rejected") for h in hits)
            ):
                r = self._from_hits(hits) or NEUTRAL
                return Reading(r.polarity, "conflicting", r.cues) if it.grid else r
        return None

    def _lead_in(self, sec: Section | None) -> Reading | None:
        """A lead-in's reading for the items it governs, from its LAST clause only: "已排除：",
        "以下几款超出预算：" exclude; "您说不要苹果，以下是推荐：" and "Since you don't want Apple, here
        are my picks:" recommend (the negation is about 苹果, not about the list)."""
        if sec is None or sec.lead is None:
            return None
        parts = [c for c in self.clauses if sec.lead.start <= c.start < sec.lead.end]
        if not parts:
            return None
        last = parts[-1]
        hits = self.hits(last)
        neg = [h for h in hits if h.group.kind != "recommended"]
        pos = [h for h in hits if h.group.kind == "recommended"]
        deixis = any(p.search(self.norm[last.start : last.end]) for _, p in _list(self._k, "lead_in_deixis"))
        if neg and (self.marker_only(last, hits) or deixis or self._nothing_after(neg[-1], last)) and not pos:
            return Reading(neg[-1].group.kind, "confident", (neg[-1].cue(self.text),))  # type: ignore[arg-type]
        if pos or any(
            p.search(self.norm[last.start : last.end]) for _, p in _list(self._k, "lead_in_recommend")
        ):
            cue = (
                pos[0].cue(self.text)
                if pos
                else Cue("polarity.lead_in_recommend", last.start, last.end, last.text)
            )
            return Reading("recommended", "confident", (cue,))
        return None

    def _nothing_after(self, h: _Hit, c: Clause) -> bool:
        rest = self.norm[h.end : c.end]
        for _, pat in _list(self._k, "fillers"):
            rest = pat.sub(" ", rest)
        return not rest.strip() or bool(re.fullmatch(r"\s*(?:的|items?|ones?|models?|options?)\s*", rest))
