"""One sentence or clause of a turn read as a dialogue act (the classifier under lang.acts).

The cues come from `usersim/lang/data/<code>/acts.yaml`: question marks and particles, question
starts, requests, confirmations, clarifications, alternatives, closings, announcements, results
and offers. `read_sentence` returns one act, or two where a result or statement is joined by a
comma to a closing or a question ("Your card is blocked, anything else?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from usersim.lang.concepts import concepts_in
from usersim.lang.phrases import find, finditer, shifted
from usersim.lang.resources import Cue, resources

ASKING = ("request", "confirm_request", "clarify", "close")  # acts that want an answer from the user
QUESTIONS = ("request", "confirm_request", "clarify")  # asking acts that are not a closing


@dataclass(frozen=True)
class Act:
    """One act of a turn: its kind, the span of text it covers, and why it was read so."""

    kind: str
    start: int
    end: int
    text: str
    cues: tuple[Cue, ...] = ()
    slots: tuple[str, ...] = ()  # concepts asked (request / clarify / confirm_request) or given
    slot_cues: tuple[Cue, ...] = ()
    action: str = ""  # confirm_request: what the agent proposes to do
    values: tuple[str, ...] = ()  # numbers and codes in it ("4821", "3RK2T9", "58")
    options: tuple[str, ...] = ()  # clarify: the alternatives offered
    parts: tuple[str, ...] = ()  # the separately asked items of one question ("出发地、目的地和时间")
    sure: bool = True

    @property
    def asking(self) -> bool:
        return self.kind in ASKING

    def describe(self) -> str:
        return "; ".join(c.describe() for c in self.cues) or self.kind


_MARKUP = re.compile(r"\*\*|__|`|\|")
_TRAIL = re.compile(r"[\s*_`|~\"'”’」）)\]]+$")
VALUE = re.compile(
    r"(?<![\w.])(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{2,}(?![\w])|(?<![\w.])\d+(?:[.,]\d+)?(?![\d])"
)
_CLAUSE = re.compile(r"[，;；：]|,(?!\d{3})|(?<!\d):|:(?!\d)|\s[—–-]\s|[—–]")  # not 1,000 nor 10:30


def blank(text: str) -> str:
    """Markup replaced by spaces of the same length, so offsets stay those of the original."""
    return _MARKUP.sub(lambda m: " " * len(m.group(0)), text)


def core_text(text: str) -> str:
    """The text without trailing markup, quotes and closing brackets ("**请问？**" -> "请问？")."""
    return _TRAIL.sub("", text).strip()


def cue(text: str, key: str, codes: list[str], offset: int = 0) -> Cue | None:
    """The first hit of the acts.yaml list `key` in `text`, its span moved by `offset`."""
    c = find(text, "acts", key, codes)
    return shifted(c, offset) if c else None


def _starts(text: str, key: str, codes: list[str], offset: int) -> Cue | None:
    """A `key` phrase at the start of the text or of one of its clauses."""
    bounds = [0] + [m.end() for m in _CLAUSE.finditer(text)]
    for b in bounds:
        lead = len(text[b:]) - len(text[b:].lstrip())
        piece = text[b + lead :]
        for c in finditer(piece, "acts", key, codes):
            if c.start == 0:
                return shifted(c, offset + b + lead)
    return None


def _particle(text: str, key: str, codes: list[str], offset: int) -> Cue | None:
    core = core_text(text).rstrip("。.!！~～… ")
    for code in codes:
        for p in resources(code).words("acts", key):
            if core.endswith(p):
                at = offset + len(core) - len(p)
                return Cue(resources(code).entry("acts", key), at, at + len(p), p)
    return None


def _mark(text: str, codes: list[str], offset: int) -> Cue | None:
    core = core_text(text)
    for code in codes:
        for p in resources(code).words("acts", "question_marks"):
            if core.endswith(p):
                at = offset + len(core) - len(p)
                return Cue(resources(code).entry("acts", "question_marks"), at, at + len(p), p)
    return None


def _parts(body: str, codes: list[str]) -> tuple[str, ...]:
    """The items asked separately in one question: "出发地、目的地和时间" -> three; clauses that
    each hold a question word count one each ("去哪，玩几天？"); otherwise the question is one."""
    body = core_text(body).rstrip("?？。.!！")
    if "、" in body:
        head, _, tail = body.rpartition("、")
        cuts = [c for c in finditer(tail, "acts", "list_joiners", codes) if c.text != "、"]
        pieces, last = [], 0
        for c in sorted(cuts, key=lambda c: c.start):
            if c.start >= last:
                pieces.append(tail[last : c.start])
                last = c.end
        pieces.append(tail[last:])
        parts = [p for p in head.split("、") if p.strip()] + [p for p in pieces if p.strip()]
        if len(parts) >= 2:
            return tuple(p.strip() for p in parts)
    clauses = [c.strip() for c in re.split(r"[，,]", body) if c.strip()]
    asked = [c for c in clauses if find(c, "acts", "question_words", codes)]
    return tuple(asked) if len(asked) >= 2 else (body,)


def _options(text: str, cues: list[Cue]) -> tuple[str, ...]:
    if not cues:
        return ()
    body = _TRAIL.sub("", text).rstrip("?？。.!！")
    pieces, last = [], 0
    for c in sorted(cues, key=lambda c: c.start):
        pieces.append(body[last : c.start])
        last = c.end
    pieces.append(body[last:])
    opts = tuple(p.strip(" ，,、") for p in pieces if p.strip(" ，,、"))
    return opts if len(opts) >= 2 else ()


def _action(text: str, after: int, codes: list[str]) -> str:
    rest = core_text(text[after:]).rstrip("?？。.!！吗么嘛 ")
    for _ in range(3):
        lead = find(rest, "acts", "action_lead", codes)
        if lead is None or lead.start != 0:
            break
        rest = rest[lead.end :].strip()
    return rest.strip(" ，,")


def read_clause(text: str, start: int, codes: list[str], weak: bool) -> Act:
    """One sentence or clause at offset `start` classified as one act; `weak`: the reading is not
    sure (a heading, a question its next sentence answers)."""
    body = blank(text)
    mark = _mark(body, codes, start)
    particle = _particle(body, "question_particles", codes, start)
    weak_particle = _particle(body, "weak_particles", codes, start)
    particle = particle or _particle(body, "question_ends", codes, start)
    qword = cue(body, "question_words", codes, start)
    anota = cue(body, "a_not_a", codes, start)
    qstart = _starts(body, "question_starts", codes, start)
    request = cue(body, "requests", codes, start)
    confirm = cue(body, "confirmations", codes, start)
    clarify = cue(body, "clarifications", codes, start)
    closing = cue(body, "closings", codes, start)
    alts = [shifted(c, 0) for c in finditer(body, "acts", "alternatives", codes)]
    asking_cues = [c for c in (mark, particle, anota, qstart, request, confirm) if c]
    if weak_particle and (qword or mark):
        asking_cues.append(weak_particle)
    hits = [h for h in concepts_in(body, codes) if h.concept != "referent"]
    slots = tuple(h.concept for h in hits)
    slot_cues = tuple(shifted(h.cue, start) for h in hits)
    values = tuple(dict.fromkeys(m.group(0) for m in VALUE.finditer(text)))
    end = start + len(text)

    def act(kind: str, cues: list[Cue], **kw) -> Act:
        kept = tuple(dict.fromkeys(c for c in cues if c))
        return Act(kind, start, end, text, kept, slots, slot_cues, values=values, **kw)

    if clarify and (asking_cues or qword):
        after = [c for c in alts if c.start >= clarify.end - start]
        opts = (
            _options(" " * (clarify.end - start) + body[clarify.end - start :], after)
            if (mark or particle)
            else ()
        )
        return act("clarify", [clarify, *asking_cues], options=opts, parts=_parts(body, codes), sure=not weak)
    if not asking_cues:
        result = _starts(body, "results", codes, start) or cue(body, "results", codes, start)
        if result:
            return act("inform", [result])
        if ann := cue(body, "announcements", codes, start):
            return act("announce", [ann])
        if closing:
            return act("close", [closing])
        if offer := cue(body, "offers", codes, start):
            return act("offer", [offer])
        return act("inform", [])  # also "这里的它指的是行李箱。": a definition, not a question
    if closing and not slots:
        return act("close", [closing, *asking_cues], sure=not weak)
    opts = _options(body, alts) if (mark or particle) and alts else ()
    if opts and not request:  # "window or aisle?", "是去三亚还是厦门？": a choice between readings
        whole = (core_text(body).rstrip("?？。.!！"),)
        return act("clarify", [*alts, *asking_cues], options=opts, parts=whole, sure=not weak)
    if confirm and not (request and slots):
        action = _action(body, confirm.end - start, codes)
        return act("confirm_request", [confirm, *asking_cues], action=action, sure=not weak)
    return act("request", asking_cues, parts=_parts(body, codes), sure=not weak)


def read_sentence(text: str, start: int, codes: list[str], weak: bool) -> list[Act]:
    """A sentence as acts: a result or statement joined by a comma to a closing or a question
    ("Your card is blocked, anything else?") is read as two acts."""
    body = blank(text)
    closing = cue(body, "closings", codes, 0)
    cut = None
    if closing and closing.start > 0:
        cut = closing.start
    else:
        for m in _CLAUSE.finditer(body):
            lead = body[: m.start()]
            result = cue(lead, "results", codes) and not cue(lead, "requests", codes)
            if result and not _mark(lead, codes, 0):
                if read_clause(text[m.end() :].lstrip(), 0, codes, weak).asking:  # "..., would you like X?"
                    cut = m.end()
                break
    if cut is not None:
        lead = text[:cut].rstrip(" ，,;；—–-")
        rest = text[cut:]
        if lead.strip() and rest.strip() and re.search(r"\w", lead):
            pad = len(rest) - len(rest.lstrip())
            return [
                read_clause(lead, start, codes, weak),
                read_clause(rest.lstrip(), start + cut + pad, codes, weak),
            ]
    return [read_clause(text, start, codes, weak)]
