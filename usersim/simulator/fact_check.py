"""Whether an agent's proposal contradicts what the user knows about themselves.

"I'll ship the replacement to Building 1, Floor 1. Shall I go ahead?" to a user whose delivery
address is "Building 4, Floor 2"; "I will block your card ending in 1111" to one whose stolen card
ends in 7788; "a repair ticket for your MacBook Pro 14" to one with a ThinkPad X1 Carbon. The user
says no and corrects it. A proposed value is compared with a fact by meaning, in four ways, each
read from the language layer or the fact's own value (no word list here):

1. the fact value's own form with other digits ("Building 4, Floor 2" -> "Building 1, Floor 1",
   "E-2041" -> "E-2045", "4号楼2层" -> "1号楼1层");
2. a whole-value shape of the fact's concept (acts.yaml concepts' anchored `values`: a phone, an
   id, an e-mail) found with another value;
3. a number as long as the fact's own (its last four digits) in a sentence naming the fact's
   concept (lang.concepts: "card"), not a money amount, a measure or a date;
4. a name (capitalised words, letters with digits) at or right after a cue of the fact's concept
   ("your MacBook Pro 14" names a device) when the fact's value is such a name.

A proposal that mentions the fact's own value anywhere is consistent; a proposed value that is
another fact of the persona is not a contradiction (the old address beside the new one).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from usersim.lang import acts, dates, quantity
from usersim.lang.concepts import ConceptHit, concepts_in
from usersim.lang.resources import Memo, language_codes, resources
from usersim.simulator.constraints import Violation, proposes
from usersim.simulator.grounding import fact_concepts

_TOKEN = re.compile(r"\d+|[^\W\d_]+", re.UNICODE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NAME_TOKEN = re.compile(r"[A-Z][\w-]*|[\w-]*\d[\w-]*")
_DAY = date(2000, 1, 1)  # any day: dates are read here only for where they are


@dataclass(frozen=True)
class Fact:
    """One fact the user holds now: its slot, value and the concepts it means."""

    slot: str
    value: str
    concepts: frozenset[str]


def norm(text: str) -> str:
    """Lowercase letters and digits only: "Building 4, Floor 2" -> "building4floor2"."""
    return "".join(ch for ch in (text or "").lower() if ch.isalnum())


def core(value: str) -> str:
    """The part of a value that identifies it: leading lowercase words go when a capitalised word
    or a number follows ("the ThinkPad X1 Carbon" -> "ThinkPad X1 Carbon", "the one ending in
    7788" -> "7788")."""
    words = (value or "").split()
    i = 0
    while i < len(words) - 1 and words[i].isascii() and words[i].isalpha() and words[i].islower():
        i += 1
    rest = words[i:]
    return " ".join(rest) if rest and (rest[0][:1].isupper() or rest[0][:1].isdigit()) else value


def _same(candidate: str, value: str) -> bool:
    """Whether a proposed value is (part of) the fact's value, or the value is in it."""
    c, v, k = norm(candidate), norm(value), norm(core(value))
    return bool(c) and (c in v or (bool(k) and k in c))


def mentioned(value: str, text: str) -> bool:
    """Whether a text names the value: its identifying part, or every long number of it."""
    low = norm(text)
    if norm(core(value)) and norm(core(value)) in low:
        return True
    numbers = [n for n in re.findall(r"\d+", value) if len(n) >= 3]
    found = set(re.findall(r"\d+", text))
    return bool(numbers) and all(n in found for n in numbers)


@functools.lru_cache(maxsize=1024)  # pure (no resources): a persona's values, read on every turn
def _template(value: str) -> re.Pattern[str] | None:
    """The value's own form with any digits ("Building \\d+, Floor \\d+"), when it has both a
    word and a number; None otherwise."""
    tokens = _TOKEN.findall(core(value))
    words = [t for t in tokens if not t.isdigit()]
    if not words or not any(t.isdigit() for t in tokens):
        return None
    parts = [r"\d+" if t.isdigit() else re.escape(t) for t in tokens]
    body = r"[\W_]{0,3}".join(parts)
    return re.compile(_edge(tokens[0], "(?<!{})") + body + _edge(tokens[-1], "(?!{})"), re.IGNORECASE)


def _edge(token: str, look: str) -> str:
    """A boundary so a template never starts or ends inside a number or a Latin word."""
    if token.isdigit():
        return look.format(r"\d")
    return look.format("[A-Za-z0-9]") if token.isascii() else ""


# readings remembered while the same language resources are in force (lang.resources.Memo): the
# rule simulator reads every earlier agent reply again on each turn, against the same facts
_SHAPES = Memo(512)
_MEASURED = Memo()
_FOUND = Memo(2048)  # (facts, reply) -> contradictions: a key holds its reply text


def _shapes(concepts: frozenset[str], named: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    """Whole-value shapes (anchored `values` of acts.yaml concepts) of the fact's concepts,
    unanchored; a concept marked `values_need_cue` (an id) only when the sentence names it."""
    memo = _SHAPES.table()
    key = (concepts, named)
    held = memo.get(key)
    if held is None:
        held = memo[key] = tuple(_build_shapes(concepts, named))
    return held


def _build_shapes(concepts: frozenset[str], named: frozenset[str]) -> list[re.Pattern[str]]:
    out = []
    specs = [
        (concept, spec)
        for code in language_codes()
        for concept, spec in (resources(code).get("acts", "concepts", {}) or {}).items()
        if isinstance(spec, dict)
    ]
    need_cue = {concept for concept, spec in specs if spec.get("values_need_cue")}  # any language says so
    for concept, spec in specs:
        if concept not in concepts or (concept in need_cue and concept not in named):
            continue
        for raw in spec.get("values", ()) or ():
            p = str(raw).removeprefix("re:")
            if p.startswith("^") and p.endswith("$"):
                out.append(re.compile(r"(?<![A-Za-z0-9+-])(?:" + p[1:-1] + r")(?![A-Za-z0-9-])"))
    return out


def measured(value: str) -> bool:
    """Whether a fact is a date or a quantity ("7 月中旬", "6 天", "$40"): those are compared as
    constraints and by meaning (an exact day can fall in a fuzzy span), never as a changed form."""
    memo = _MEASURED.table()
    held = memo.get(value)
    if held is None:
        held = memo[value] = any(q.kind != "number" for q in quantity.quantities(value)) or bool(
            dates.find_dates(value, _DAY)
        )
    return held


def _busy(text: str) -> list[tuple[int, int]]:
    """Spans of money, measures and dates: their numbers are no id, card or phone."""
    spans = [(q.start, q.end) for q in quantity.quantities(text) if q.kind != "number"]
    return spans + [(d.start, d.end) for d in dates.find_dates(text, _DAY)]


@dataclass(frozen=True)
class _Sentence:
    """One proposed sentence with what every fact's reading of it needs: read once per sentence,
    not once per fact."""

    text: str
    busy: tuple[tuple[int, int], ...]  # money, measures and dates
    hits: tuple[ConceptHit, ...]  # the concepts it names

    @classmethod
    def read(cls, text: str) -> _Sentence:
        return cls(text, tuple(_busy(text)), tuple(concepts_in(text)))


def _candidates(fact: Fact, sentence: str, read: _Sentence | None = None) -> list[str]:
    """Values in one sentence standing where the fact's value would (see the module docstring);
    `read`: the sentence's readings, when the caller has them."""
    out: list[str] = []
    read = read or _Sentence.read(sentence)
    busy = read.busy

    def free(s: int, e: int) -> bool:
        return not any(a <= s < b or s <= a < e for a, b in busy)

    if (tpl := _template(fact.value)) is not None:
        out += [m.group(0) for m in tpl.finditer(sentence)]
    hits = [h for h in read.hits if h.concept in fact.concepts]
    shapes = _shapes(fact.concepts, frozenset(h.concept for h in hits))
    if any(p.search(fact.value.strip()) for p in shapes):
        for p in shapes:
            out += [m.group(0).strip() for m in p.finditer(sentence) if free(m.start(), m.end())]
    if not hits:  # the other readings need the sentence to name what the fact is
        return out
    groups = re.findall(r"\d+", fact.value)
    for n in (n for n in groups if len(n) >= 3 and len(groups) == 1):  # "ending in 7788", not a phone
        for m in re.finditer(rf"(?<!\d)\d{{{len(n)}}}(?!\d)", sentence):
            if free(m.start(), m.end()):
                out.append(m.group(0))
    first = (core(fact.value).split() or [""])[0]
    if first[:1].isupper() and _NAME_TOKEN.fullmatch(first):  # a name: "ThinkPad X1 Carbon"
        for h in hits:
            name = _name_at(sentence, h.cue.start, h.cue.end)
            if name and any(ch.isalpha() for ch in name) and free(h.cue.start, h.cue.end):
                out.append(name)
    return out


def _name_at(sentence: str, start: int, end: int) -> str | None:
    """A name at the cue (it is capitalised: "MacBook Pro 14"), right before it ("your Dell XPS 13
    laptop") or right after it ("laptop, the Dell XPS 13"), up to a word that is no part of a name."""
    before: list[str] = []
    for w in reversed(sentence[:start].split()):
        if not _NAME_TOKEN.fullmatch(w) or w.lower() in ("i", "a"):
            break
        before.insert(0, w)
    if before and not sentence[start : start + 1].isupper():
        return " ".join(before)
    if sentence[start : start + 1].isupper():
        pos = start
    else:
        m = re.match(r"[\s,:(]*(?:(?:the|a|an|your|my)\s+)?", sentence[end:], re.IGNORECASE)
        pos = end + (m.end() if m else 0)
    words = []
    for m in re.finditer(r"\S+", sentence[pos:]):
        w = m.group(0).rstrip(",.;:!?)")
        if not _NAME_TOKEN.fullmatch(w):
            break
        words.append(w)
        if w != m.group(0):
            break
    return " ".join(words) if words else None


def facts_of(persona, current: dict[str, str]) -> list[Fact]:
    """The persona's facts as held now (`current`: slot -> value after the changes said)."""
    out = []
    for slot, value in current.items():
        own = [f for f in persona.known_info if f.slot == slot]
        texts = [t for f in own for t in (f.label or "", *f.aliases, f.description or "") if t]
        out.append(Fact(slot, value, frozenset(fact_concepts(slot, texts, value))))
    return out


def contradictions(facts: Sequence[Fact], text: str) -> list[Violation]:
    """Facts of the user an agent reply proposes otherwise: one Violation("fact", found=what it
    proposed, limit=the user's value, slot=the fact) per fact, in the order of the facts.
    Remembered per (facts, reply) while the same resources are in force; the caller gets copies."""
    if not facts or not text:
        return []
    memo, key = _FOUND.table(), (tuple(facts), text)
    held = memo.get(key)
    if held is None:
        held = memo[key] = tuple(_contradictions(facts, text))
    return [replace(v) for v in held]


def _contradictions(facts: Sequence[Fact], text: str) -> list[Violation]:
    read = acts.agent_acts(text)
    # "I'll send it to Building 1. OK?": what is announced is put to the user once it asks anything
    asking = proposes(text) or any(a.asking and a.kind != "close" for a in read)
    # a check-back ("Just to confirm, you want me to freeze the card ending 4417?") states it too
    kinds = ("inform", "offer", "confirm_request", "clarify") + (("request", "announce") if asking else ())
    sentences = [a.text for a in read if a.kind in kinds]
    others = [f.value for f in facts]
    found: list[Violation] = []
    readings: dict[str, _Sentence] = {}  # each sentence read when a fact first needs it
    for fact in facts:
        if len(norm(fact.value)) < 2 or mentioned(fact.value, text) or measured(fact.value):
            continue
        for sentence in sentences:
            if sentence not in readings:
                readings[sentence] = _Sentence.read(sentence)
            bad = [
                c
                for c in _candidates(fact, sentence, readings[sentence])
                if not _same(c, fact.value) and not any(_same(c, o) for o in others)
            ]
            if bad:
                found.append(Violation("fact", bad[0], fact.value, slot=fact.slot))
                break
    return found
