"""Cue matching for the polarity readers: the cue groups of every language's polarity.yaml
compiled once, matched in a text (idioms masked, the longest cue winning an overlap), and the
readings they give (`Reading`: polarity, confidence, cues)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from usersim.lang.layout import Layout, layout
from usersim.lang.resources import Cue, language_codes, languages, resources
from usersim.lang.segment import Clause, Span, clauses, reading

Polarity = Literal[
    "recommended", "excluded", "rejected", "negated", "compared", "asked_about", "hypothetical", "neutral"
]
Confidence = Literal["confident", "conflicting", "none"]
NEGATIVE = frozenset({"excluded", "rejected", "negated"})
_GROUP_KEYS = ("kind", "phrases")


@dataclass(frozen=True)
class Reading:
    """The polarity of one mention, the cues that decided it and the confidence. `aside`: a
    question or hypothetical that names the mention without putting it forward (a question about
    what the user meant, "您是想要 OPPO A3 那样的吗？"; a hypothetical the sentence turns away from,
    "要是没有品牌限制，Redmi 最划算；但您不要小米，所以推荐荣耀X50")."""

    polarity: Polarity
    confidence: Confidence
    cues: tuple[Cue, ...] = ()
    aside: bool = False

    @property
    def negative(self) -> bool:
        """Named only to be excluded, rejected or negated (confidently or not)."""
        return self.polarity in NEGATIVE

    @property
    def sure(self) -> bool:
        return self.confidence != "conflicting"

    @property
    def put_forward(self) -> bool:
        """Surely named as what the reply offers: recommended, or plainly named (a list row)."""
        return self.sure and self.polarity in ("neutral", "recommended")

    @property
    def set_aside(self) -> bool:
        """Surely named NOT as what the reply offers: excluded, rejected or negated, the standard
        of a comparison ("比 Redmi Note 13 续航更好", "unlike the OPPO A3"), or `aside`."""
        return self.sure and (self.negative or self.polarity == "compared" or self.aside)

    def describe(self) -> str:
        cue = "; ".join(c.describe() for c in self.cues)
        what = f"{self.polarity}, set aside" if self.aside else self.polarity
        return f"{what} ({self.confidence})" + (f": {cue}" if cue else "")


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


class CueReader:
    """A text with its clauses, layout and cue matches (computed once); the base of `Reader`."""

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

    def hits(self, span: Span, avoid: tuple[int, int] = (0, 0), compare: bool = False) -> list[_Hit]:
        """Cue matches inside `span`, longest first without overlaps, none inside an idiom or the
        mention itself (a keyword that contains a negation, "无法获取", is not negated by it).
        Comparison cues ("比", "unlike") only with `compare`: they are about the mention right
        after them, never a verdict of a clause, cell or lead-in."""
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
            if compare or h.group.kind != "compared":
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
    def _gap(self, between: str) -> int:
        """Words between a cue and a mention that may take it out of the cue's scope: none for
        scope-keeping words ("不再去"), none for earlier conjuncts of the same list ("不再去环球影城和
        大阪城", "no Apple or Samsung phones"), else the count of other words."""
        rest = between
        for _, pat in _list(self._k, "transparent"):
            rest = pat.sub(" ", rest)
        for _, pat in _list(self._k, "coordinators"):
            parts = pat.split(rest)
            if len(parts) > 1 and not parts[-1].strip() and all(0 < _gap(x) <= 6 for x in parts[:-1]):
                return 0  # only conjuncts before the mention, each a short name
        return _gap(rest)

    def _broken(self, between: str) -> bool:
        return any(pat.search(between) for _, pat in _list(self._k, "scope_breakers"))

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
