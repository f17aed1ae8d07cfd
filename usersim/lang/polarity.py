"""How a mention stands in a reply: recommended, excluded, rejected, negated, asked about,
hypothetical or neutral, with the cue that decided it and how sure the reading is.

The cues are resources (`data/<code>/polarity.yaml`): groups of phrases, each with the polarity
it gives, which way it reaches (forward: the mention follows the cue, "不再去环球影城", "cannot be
refunded"; backward: it precedes, "MacBook Pro 超出预算", "the XPS exceeds your budget") and how
far (adjacent: the mention right after it; near: a few words; clause: to the clause end or a
scope breaker like 而是 / but). Idioms that
contain a negation but recommend ("不要错过", "can't go wrong with") are masked first. Every
language's cues are read in every text (replies mix scripts: "OPPO A3 ❌ Not recommended").

Context is read from the inside out: the mention's clause (cues before and after it), a clause
that only carries a cue and is joined to it ("…，已排除。", "X: over budget"), the item's verdict
(❌/✅, a verdict cell), the lead-in governing its list ("已排除：", but not "您说不要苹果，以下是推荐：").
The innermost reading that fires decides. A reading is `confident` when its cues agree,
`conflicting` when they do not or a cue is only loosely in reach, `none` when nothing fired.
"""

from __future__ import annotations

import re

from usersim.lang.cues import NEGATIVE, NEUTRAL, Confidence, Polarity, Reading, _conf, _gap, _list, _near_gap
from usersim.lang.inline_marks import governing_mark
from usersim.lang.item_polarity import ItemReader
from usersim.lang.resources import Cue, detect, resources
from usersim.lang.segment import Span

__all__ = ["NEGATIVE", "NEUTRAL", "Confidence", "Polarity", "Reader", "Reading", "polarity"]
_STRUCK = re.compile(r"~~[^~\n]+~~")


class Reader(ItemReader):
    """Polarity of mentions in one reply; the segmentation and cue matches are computed once."""

    def at(self, start: int, end: int) -> Reading:
        """The reading of the mention at [start, end)."""
        struck = next((m for m in _STRUCK.finditer(self.text) if m.start() < start < m.end()), None)
        if struck is not None:  # ~~Day 2 环球影城~~: crossed out
            return Reading(
                "excluded",
                "confident",
                (Cue("segment.strikethrough", struck.start(), struck.end(), struck.group(0)),),
            )
        idx = next((i for i, c in enumerate(self.clauses) if c.start <= start < c.end), None)
        if idx is None:
            return NEUTRAL
        cell = self._item_of(start)
        in_table = cell is not None and cell.kind in ("row", "column")
        # in a table the cells beside a mention are read as the row's verdict or cells, not as clauses
        subject = self._subject(idx, start)
        joined = None if in_table or not subject else self._joined(idx)
        marked = None if in_table else self._inline_mark(idx, start, end)
        if marked is not None and marked[1] > 1:  # several marks: each judges its own part
            inner: Reading | None = marked[0]
        else:
            inner = self._in_clause(idx, start, end, subject) or (marked and marked[0]) or joined
        if inner and inner.set_aside:  # excluded, rejected, negated, compared against
            return inner
        outer = self._question(idx, start) or self._hypothetical(idx, start)
        if outer:
            return outer if not inner else Reading(outer.polarity, "conflicting", outer.cues + inner.cues)
        if inner:
            return inner
        item = self._item_of(start)
        return (item and self._item_reading(item)) or NEUTRAL

    def _inline_mark(self, idx: int, start: int, end: int) -> tuple[Reading, int] | None:
        """(the reading the ✅/❌ mark judging this part of the clause gives, how many marks the
        clause has): lang.inline_marks."""
        c = self.clauses[idx]
        got = governing_mark(self.text, c.start, c.end, start, end)
        if got is None:
            return None
        mark, count = got
        cue = Cue(f"segment.marks.{mark.kind}", mark.start, mark.end, mark.text)
        return Reading(mark.kind, "confident", (cue,)), count  # type: ignore[arg-type]

    def _subject(self, idx: int, start: int) -> bool:
        """Whether the mention opens its clause (after scope-keeping words and earlier conjuncts):
        a cue after it ("MacBook Pro 14 超出预算", "…，已排除") is about the clause's subject, not
        about a later mention ("the charge is more than 60 days old, so it cannot be disputed")."""
        c = self.clauses[idx]
        head = re.sub(r"^\s*(?:\d{1,2}\s*[.、)）]|[-•*·]\s)", " ", self.norm[c.start : start])
        code = detect(c.text)
        return self._gap(head) <= int(resources(code).get("polarity", "subject_gap", 2))

    def _in_clause(self, idx: int, start: int, end: int, subject: bool = True) -> Reading | None:
        c = self.clauses[idx]
        hits = self.hits(c, avoid=(start, end), compare=True)
        before = [h for h in hits if h.end <= start]
        after = [h for h in hits if h.start >= end]
        positive_before = [h for h in before if h.group.kind == "recommended"]
        neg_before = None
        for h in reversed(before):  # the nearest forward-reaching negative cue in scope
            if h.group.kind == "recommended" or h.group.reach == "backward":
                continue
            between = self.norm[h.end : start]
            if self._broken(between):
                break
            if h.group.scope == "clause":
                neg_before = (h, h.group.sure)
                break
            # near: only words that keep the scope ("不再去", "won't get a") between cue and mention
            # make a sure reading; a few others ("没有直飞航班": the negation may be about 直飞)
            # an unsure one; more, and the cue is about something else
            gap = self._gap(between)
            if h.group.scope == "adjacent":  # only the mention right after it ("from Tokyo to Kyoto")
                if gap == 0:
                    neg_before = (h, h.group.sure)
                    break
                continue
            if gap <= _near_gap(h.group.code):
                neg_before = (h, gap == 0 and h.group.sure)
            break
        neg_after = [h for h in after if h.group.kind != "recommended" and h.group.reach != "forward"]
        pos_after = [h for h in after if h.group.kind == "recommended" and h.group.reach != "forward"]
        if neg_before:
            h, near = neg_before
            closer = [p for p in positive_before if p.start > h.end]
            if closer:  # "不是 A，推荐 B" is cut by clauses; "不要只看 A 推荐 B" is not clear
                return Reading(h.group.kind, "conflicting", (h.cue(self.text), closer[0].cue(self.text)))  # type: ignore[arg-type]
            return Reading(h.group.kind, "confident" if near else "conflicting", (h.cue(self.text),))  # type: ignore[arg-type]
        if neg_after and subject:
            h = neg_after[0]
            if positive_before:  # "推荐华为 MateBook 14 不考虑苹果": the cue is about what follows it
                return Reading("recommended", "confident", (positive_before[-1].cue(self.text),))
            if pos_after and pos_after[0].start < h.start:
                return Reading(h.group.kind, "conflicting", (pos_after[0].cue(self.text), h.cue(self.text)))  # type: ignore[arg-type]
            return self._contrast(idx, Reading(h.group.kind, _conf(h), (h.cue(self.text),)))  # type: ignore[arg-type]
        positive = positive_before[-1:] or pos_after[:1]
        if positive:
            return Reading("recommended", "confident", (positive[0].cue(self.text),))
        return None

    def _joined(self, idx: int) -> Reading | None:
        """A subjectless cue clause joined to this one: after it ("MacBook Air（苹果），不考虑。",
        "X — over budget", "…，所以没有放进推荐") or, across a colon, before it ("不推荐：MacBook Air").
        After a topic marker ("至于 MacBook Air，您说了不要苹果，就不列入了") the whole sentence is
        about the mention, so any subjectless cue clause in it applies."""
        c = self.clauses[idx]
        head = self._colon_head(idx)
        if head is not None:
            prev = self.clauses[head - 1]
            hits = self._clause_hits(head - 1)
            if prev.line == c.line and self.marker_only(prev, hits):
                got = self._from_hits(hits, "forward")
                if got is not None:  # "改为：Day 1 札幌" names the new plan, not a dropped one
                    return got
        topic = any(p.match(self.norm[c.start : c.end]) for _, p in _list(self._k, "topic_markers"))
        skipped = 0
        for j in range(idx + 1, len(self.clauses)):
            nxt = self.clauses[j]
            if nxt.line != c.line or not nxt.joined or nxt.sentence != c.sentence:
                break
            r = self.subjectless(j)
            if r is not None:
                return r if skipped == 0 or r.polarity != "recommended" else None
            reason = any(
                p.match(self.norm[nxt.start : nxt.end]) for _, p in _list(self._k, "reason_connectives")
            )
            attribute = re.search(r"\d", nxt.text) and _gap(nxt.text) <= 8
            if topic or (skipped < 2 and (nxt.aside or attribute or reason)):
                skipped += 1  # an aside, an attribute ("重 1.55kg") or a reason ("但它是苹果的")
                continue
            break
        return None

    def _colon_head(self, idx: int) -> int | None:
        """The clause right after a colon that this one is listed with: itself, or the first of a
        run of short comma-joined names on its line ("Removed: OPPO A3, Redmi Note 13"); None when
        no colon leads it."""
        k = idx
        while k > 0 and not self.clauses[k].after_colon:
            c, prev = self.clauses[k], self.clauses[k - 1]
            if not c.joined or prev.line != c.line or c.aside or not 0 < _gap(c.text) <= 6:
                return None
            if self._clause_hits(k):
                return None  # a clause with a cue of its own is not just a listed name
            k -= 1
        return k if k > 0 and self.clauses[k].after_colon else None

    def subjectless(self, j: int) -> Reading | None:
        """The reading a clause gives the clause before it when it says nothing but a cue, or
        nothing before its cue but fillers and pronouns ("which is over your budget", "所以没有放进
        推荐", "so it doesn't meet your brand requirement"); None otherwise."""
        c = self.clauses[j]
        hits = self._clause_hits(j)
        if not hits:
            return None
        if self.marker_only(c, hits):
            r = self._from_hits(hits, "backward")
            return self._contrast(j, r) if r is not None else None
        first = next((h for h in hits if h.group.kind != "recommended" and h.group.reach != "forward"), None)
        if first is None:
            return None
        head = self.norm[c.start : first.start]
        for _, pat in _list(self._k, "fillers"):
            head = pat.sub(" ", head)
        if head.strip():
            return None
        return self._contrast(j, Reading(first.group.kind, _conf(first), (first.cue(self.text),)))  # type: ignore[arg-type]

    def _contrast(self, j: int, r: Reading) -> Reading:
        """A negative reading conceded ("虽然超出预算", "although over budget") or turned around
        later in the sentence ("…, but worth it", "…，但我还是首推它") is unsure."""
        if not r.negative or not r.cues:
            return r
        c = self.clauses[j]
        cue = r.cues[0]
        sent = self._sentence_of(j)
        before = self.norm[c.start : cue.start]
        after = self.norm[cue.end : sent.end]
        conceded = any(p.search(before) for _, p in _list(self._k, "concessive"))
        turned = any(p.search(after) for _, p in _list(self._k, "contrast")) and any(
            h.group.kind == "recommended"
            for h in self.hits(Span(cue.end, sent.end, self.text[cue.end : sent.end]))
        )
        return Reading(r.polarity, "conflicting", r.cues) if conceded or turned else r

    def _question(self, idx: int, start: int) -> Reading | None:
        """A mention in a question is asked about; set aside when the question asks what the user
        meant or wants ("您是想要 OPPO A3 那样的吗？", "Did you mean the Redmi Note 13?"), not
        when it offers the mention ("要不要试试 OPPO A3？": the reading stays open)."""
        s = self._sentence_of(idx)
        asked = self._asked(s)
        if asked is None:
            return None
        for entry, pat in _list(self._k, "question_clarify"):
            m = pat.search(self.norm[s.start : s.end])
            if m:
                cue = Cue(entry, s.start + m.start(), s.start + m.end(), m.group(0))
                return Reading("asked_about", "confident", (cue, asked), aside=True)
        return Reading("asked_about", "confident", (asked,))

    def _asked(self, s: Span) -> Cue | None:
        tail = self.text[s.end : s.end + 1]
        for entry, pat in _list(self._k, "question_marks"):
            if pat.search(tail) or pat.search(s.text[-1:]):
                return Cue(entry, s.end - 1, s.end + 1, (s.text[-1:] + tail).strip())
        for entry, pat in _list(self._k, "question_cues"):
            m = pat.search(self.norm[s.start : s.end + 1])
            if m:
                return Cue(entry, s.start + m.start(), s.start + m.end(), m.group(0))
        return None

    def _hypothetical(self, idx: int, start: int) -> Reading | None:
        """A mention after an if ("如果", "if", "…的话") is hypothetical; set aside when the
        reply then turns to a recommendation ("…；但您不要小米，所以推荐荣耀X50", "…, but within
        ¥2000 I'd go with …"), else the reading stays open."""
        s = self._sentence_of(idx)
        for entry, pat in _list(self._k, "hypothetical"):
            for m in pat.finditer(self.norm[s.start : s.end]):
                a = s.start + m.start()
                if a < start or m.group(0) == "的话":
                    cue = Cue(entry, a, s.start + m.end(), m.group(0))
                    turn = self._turn(idx, start)
                    if turn is not None:
                        return Reading("hypothetical", "confident", (cue, *turn), aside=True)
                    return Reading("hypothetical", "confident", (cue,))
        return None

    def _turn(self, idx: int, start: int) -> tuple[Cue, Cue] | None:
        """A contrast word after the mention (in its sentence or the next) followed by a
        recommending cue: the reply turns away from the hypothetical to what it offers."""
        sentence = self.clauses[idx].sentence
        nxt = next((k for k in range(idx, len(self.clauses)) if self.clauses[k].sentence > sentence), None)
        end = self._sentence_of(nxt if nxt is not None else idx).end
        for entry, pat in _list(self._k, "contrast"):
            for m in pat.finditer(self.norm[start:end]):
                a = start + m.end()
                hits = self.hits(Span(a, end, self.text[a:end]))
                rec = next((h for h in hits if h.group.kind == "recommended"), None)
                if rec is not None:
                    return Cue(entry, start + m.start(), a, m.group(0)), rec.cue(self.text)
        return None


def polarity(text: str, start: int, end: int) -> Reading:
    """The reading of the mention at [start, end) of `text` (build a `Reader` to ask many)."""
    return Reader(text).at(start, end)
