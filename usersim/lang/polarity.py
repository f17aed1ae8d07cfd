"""How a mention stands in a reply: recommended, excluded, rejected, negated, asked about,
hypothetical or neutral, with the cue that decided it and how sure the reading is.

The cues are resources (`data/<code>/polarity.yaml`): groups of phrases, each with the polarity
it gives, which way it reaches (forward: the mention follows the cue, "不再去环球影城", "cannot be
refunded"; backward: it precedes, "MacBook Pro 超出预算", "the XPS exceeds your budget") and how
far (near: a few words, clause: to the clause end or a scope breaker like 而是 / but). Idioms that
contain a negation but recommend ("不要错过", "can't go wrong with") are masked first. Every
language's cues are read in every text (replies mix scripts: "OPPO A3 ❌ Not recommended").

Context is read from the inside out: the mention's clause (cues before and after it), a clause
that only carries a cue and is joined to it ("…，已排除。", "X: over budget"), the item's verdict
(❌/✅, a verdict cell), the lead-in governing its list ("已排除：", but not "您说不要苹果，以下是推荐：").
The innermost reading that fires decides. A reading is `confident` when its cues agree,
`conflicting` when they do not or a cue is only loosely in reach, `none` when nothing fired.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from usersim.lang.layout import Item, Layout, Section, layout, marks
from usersim.lang.resources import Cue, language_codes, languages, resources
from usersim.lang.segment import Clause, Span, clauses, reading, sentences

Polarity = Literal["recommended", "excluded", "rejected", "negated", "asked_about", "hypothetical", "neutral"]
Confidence = Literal["confident", "conflicting", "none"]
NEGATIVE = frozenset({"excluded", "rejected", "negated"})
_GROUP_KEYS = ("kind", "phrases")
_STRUCK = re.compile(r"~~[^~\n]+~~")


@dataclass(frozen=True)
class Reading:
    """The polarity of one mention, the cues that decided it and the confidence."""

    polarity: Polarity
    confidence: Confidence
    cues: tuple[Cue, ...] = ()

    @property
    def negative(self) -> bool:
        """Named only to be excluded, rejected or negated (confidently or not)."""
        return self.polarity in NEGATIVE

    @property
    def sure(self) -> bool:
        return self.confidence != "conflicting"

    def describe(self) -> str:
        cue = "; ".join(c.describe() for c in self.cues)
        return f"{self.polarity} ({self.confidence})" + (f": {cue}" if cue else "")


NEUTRAL = Reading("neutral", "none")


@dataclass(frozen=True)
class _Group:
    entry: str
    code: str
    kind: str
    reach: str
    scope: str
    pattern: re.Pattern[str]
    sure: bool = True  # False: the cue only ever gives an unsure reading ("驾车路线没查到")


def _compile(code: str, phrases: list[str]) -> re.Pattern[str] | None:
    latin = not languages.get(code).script  # Latin-script cues match whole words
    parts = []
    # plain phrases longest first ("已经" before the "已" of a character class), then expressions
    for p in sorted({str(x) for x in phrases if str(x)}, key=lambda p: (p.startswith("re:"), -len(p))):
        if p.startswith("re:"):
            parts.append(f"(?:{p[3:]})")
        elif latin and p[:1].isalpha():
            parts.append(r"(?<![A-Za-z])" + re.escape(p) + (r"(?![A-Za-z])" if p[-1:].isalpha() else ""))
        else:
            parts.append(re.escape(p))
    return re.compile("|".join(parts), re.I | re.M) if parts else None


@functools.lru_cache(maxsize=4)
def _groups(_key: tuple[str, ...]) -> tuple[_Group, ...]:
    out = []
    for code in language_codes():
        for key, value in resources(code).topic("polarity").items():
            if isinstance(value, dict) and all(k in value for k in _GROUP_KEYS):
                pat = _compile(code, list(value["phrases"]))
                if pat is not None:
                    reach, scope = str(value.get("reach", "both")), str(value.get("scope", "clause"))
                    sure = bool(value.get("sure", True))
                    out.append(
                        _Group(f"{code}/polarity.{key}", code, str(value["kind"]), reach, scope, pat, sure)
                    )
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _list(_key: tuple[str, ...], key: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for code in language_codes():
        pat = _compile(code, list(resources(code).words("polarity", key)))
        if pat is not None:
            out.append((f"{code}/polarity.{key}", pat))
    return tuple(out)


def _key() -> tuple[str, ...]:
    # resources() is cached and cleared when folders are added; its identity keys our caches
    return tuple(f"{c}:{id(resources(c))}" for c in language_codes())


def _near_gap(code: str) -> int:
    return int(resources(code).get("polarity", "near_gap", 4))


def _gap(text: str) -> int:
    """Distance between a cue and a mention: CJK characters plus Latin words."""
    return len(re.findall(r"[\u3400-\u9fff]", text)) + len(re.findall(r"[A-Za-z0-9]+", text))


@dataclass(frozen=True)
class _Hit:
    group: _Group
    start: int  # offsets in the reply
    end: int

    def cue(self, text: str) -> Cue:
        return Cue(self.group.entry, self.start, self.end, text[self.start : self.end])


def _conf(h: _Hit) -> Confidence:
    return "confident" if h.group.sure else "conflicting"


class Reader:
    """Polarity of mentions in one reply; the segmentation and cue matches are computed once."""

    def __init__(self, text: str) -> None:
        self.text = text or ""
        self.norm = reading(self.text).replace("’", "'")
        self.clauses: list[Clause] = clauses(self.text)
        self.layout: Layout = layout(self.text)
        self._k = _key()
        self._masked = self._mask()
        self._hits: dict[int, list[_Hit]] = {}

    # --- cue matching -----------------------------------------------------------------------
    def _mask(self) -> list[bool]:
        taken = [False] * len(self.norm)
        for _, pat in _list(self._k, "idioms"):
            for m in pat.finditer(self.norm):
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
        return taken

    def hits(self, span: Span, avoid: tuple[int, int] = (0, 0)) -> list[_Hit]:
        """Cue matches inside `span`, longest first without overlaps, none inside an idiom or the
        mention itself (a keyword that contains a negation, "无法获取", is not negated by it)."""
        seg = self.norm[span.start : span.end]
        found = []
        for g in _groups(self._k):
            for m in g.pattern.finditer(seg):
                a, b = span.start + m.start(), span.start + m.end()
                if b > a:
                    found.append(_Hit(g, a, b))
        taken = [False] * (span.end - span.start)
        out = []
        for h in sorted(found, key=lambda h: (-(h.end - h.start), h.start)):
            rel = range(h.start - span.start, h.end - span.start)
            if h.start < avoid[1] and avoid[0] < h.end:
                continue
            if any(self._masked[i] for i in range(h.start, h.end)) or any(taken[i] for i in rel):
                continue
            for i in rel:
                taken[i] = True
            out.append(h)
        return sorted(out, key=lambda h: h.start)

    def _clause_hits(self, idx: int) -> list[_Hit]:
        if idx not in self._hits:
            self._hits[idx] = self.hits(self.clauses[idx])
        return self._hits[idx]

    def marker_only(self, span: Span, hits: list[_Hit] | None = None) -> bool:
        """Whether a piece says nothing but cues ("已排除", "（超出预算）", "— over budget")."""
        hits = self.hits(span) if hits is None else hits
        if not hits:
            return False
        rest = list(self.norm[span.start : span.end])
        for h in hits:
            for i in range(h.start - span.start, h.end - span.start):
                rest[i] = " "
        left = "".join(rest)
        for _, pat in _list(self._k, "fillers"):
            left = pat.sub(" ", left)
        return not left.strip()

    # --- the reading of one mention -------------------------------------------------------------
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
        inner = self._in_clause(idx, start, end) or (None if in_table else self._joined(idx))
        outer = self._question(idx, start) or self._hypothetical(idx, start)
        if inner and inner.negative and inner.sure:
            return inner
        if outer:
            return outer if not inner else Reading(outer.polarity, "conflicting", outer.cues + inner.cues)
        if inner:
            return inner
        item = self._item_of(start)
        return (item and self._item_reading(item)) or NEUTRAL

    def _in_clause(self, idx: int, start: int, end: int) -> Reading | None:
        c = self.clauses[idx]
        hits = self.hits(c, avoid=(start, end))
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
        if neg_after:
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

    def _gap(self, between: str) -> int:
        rest = between
        for _, pat in _list(self._k, "transparent"):
            rest = pat.sub(" ", rest)
        return _gap(rest)

    def _broken(self, between: str) -> bool:
        return any(pat.search(between) for _, pat in _list(self._k, "scope_breakers"))

    def _joined(self, idx: int) -> Reading | None:
        """A subjectless cue clause joined to this one: after it ("MacBook Air（苹果），不考虑。",
        "X — over budget", "…，所以没有放进推荐") or, across a colon, before it ("不推荐：MacBook Air").
        After a topic marker ("至于 MacBook Air，您说了不要苹果，就不列入了") the whole sentence is
        about the mention, so any subjectless cue clause in it applies."""
        c = self.clauses[idx]
        if idx > 0 and c.after_colon:
            prev = self.clauses[idx - 1]
            hits = self._clause_hits(idx - 1)
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

    def _from_hits(self, hits: list[_Hit], toward: str = "") -> Reading | None:
        """The reading cue-only text gives a neighbour: toward "forward" (what follows it: a
        lead-in, "不推荐：X") or "backward" (what precedes: "X，已排除"); "" = either."""
        if toward:
            hits = [h for h in hits if h.group.reach in (toward, "both")]
            if not hits:
                return None
        neg = [h for h in hits if h.group.kind != "recommended"]
        if neg and len(neg) < len(hits):  # "✅ 不推荐": both ways
            return Reading(neg[0].group.kind, "conflicting", tuple(h.cue(self.text) for h in hits))  # type: ignore[arg-type]
        h = neg[0] if neg else hits[0]
        return Reading(h.group.kind, _conf(h), (h.cue(self.text),))  # type: ignore[arg-type]

    def _sentence_of(self, idx: int) -> Span:
        c = self.clauses[idx]
        same = [k for k in self.clauses if k.sentence == c.sentence]
        return Span(same[0].start, same[-1].end, self.text[same[0].start : same[-1].end])

    def _question(self, idx: int, start: int) -> Reading | None:
        s = self._sentence_of(idx)
        tail = self.text[s.end : s.end + 1]
        for entry, pat in _list(self._k, "question_marks"):
            if pat.search(tail) or pat.search(s.text[-1:]):
                return Reading(
                    "asked_about",
                    "confident",
                    (Cue(entry, s.end - 1, s.end + 1, (s.text[-1:] + tail).strip()),),
                )
        for entry, pat in _list(self._k, "question_cues"):
            m = pat.search(self.norm[s.start : s.end + 1])
            if m:
                return Reading(
                    "asked_about",
                    "confident",
                    (Cue(entry, s.start + m.start(), s.start + m.end(), m.group(0)),),
                )
        return None

    def _hypothetical(self, idx: int, start: int) -> Reading | None:
        s = self._sentence_of(idx)
        for entry, pat in _list(self._k, "hypothetical"):
            for m in pat.finditer(self.norm[s.start : s.end]):
                a = s.start + m.start()
                if a < start or m.group(0) == "的话":
                    return Reading(
                        "hypothetical", "confident", (Cue(entry, a, s.start + m.end(), m.group(0)),)
                    )
        return None

    # --- items, marks and lead-ins -------------------------------------------------------------------
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
        return self._from_hits(hits) if hits and self.marker_only(it.verdict, hits) else None

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


def polarity(text: str, start: int, end: int) -> Reading:
    """The reading of the mention at [start, end) of `text` (build a `Reader` to ask many)."""
    return Reader(text).at(start, end)


def sentence_spans(text: str) -> list[Span]:
    """The sentences of a text (re-exported for readers that cut by sentence)."""
    return sentences(text)
