"""The dialogue acts of a turn: what an agent reply (or a user message) does, with evidence.

An agent reply is read line by line (Markdown list items, table rows, headings and bold are
markup, not words) and sentence by sentence (`lang.segment.sentences`); a sentence whose result
is joined to a closing or a question by a comma ("Your card is blocked, anything else?") is two
acts. Each act names the cues (resource entry + matched span) that made it, and `sure` says whether
the reading is confident (a question in a heading, or one its next sentence answers, is not).

Agent acts: request (with the slots asked), confirm_request (the proposed action and its values),
clarify (with its options), offer, inform (a result or fact), announce ("let me check"), close.
User acts: confirm, refuse, dont_know, provide (the values and concepts given).
All cue words are in `usersim/lang/data/<code>/acts.yaml`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from usersim.lang.concepts import concepts_in
from usersim.lang.phrases import codes_for, find, finditer, shifted
from usersim.lang.resources import Cue, resources
from usersim.lang.segment import Span, sentences

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


_ITEM = re.compile(
    r"^\s*(?:>\s*)*(?:\d{1,2}[.、)）:：](?!\d)|[（(]\d{1,2}[)）]|[①-⑳]|[-•*·+](?=\s)|\d\ufe0f?\u20e3|[🔹🔸▪▫✅❌☑✔➡👉])\s*"
)
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_MARKUP = re.compile(r"\*\*|__|`|\|")
_TRAIL = re.compile(r"[\s*_`|~\"'”’」）)\]]+$")
_VALUE = re.compile(
    r"(?<![\w.])(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{2,}(?![\w])|(?<![\w.])\d+(?:[.,]\d+)?(?![\d])"
)
_CLAUSE = re.compile(r"[，,;；:：]|\s[—–-]\s|[—–]")


def _blank(text: str) -> str:
    """Markup replaced by spaces of the same length, so offsets stay those of the original."""
    return _MARKUP.sub(lambda m: " " * len(m.group(0)), text)


def _core(text: str) -> str:
    return _TRAIL.sub("", text).strip()


def _cue(text: str, key: str, codes: list[str], offset: int = 0) -> Cue | None:
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
    core = _core(text).rstrip("。.!！~～… ")
    for code in codes:
        for p in resources(code).words("acts", key):
            if core.endswith(p):
                at = offset + len(core) - len(p)
                return Cue(resources(code).entry("acts", key), at, at + len(p), p)
    return None


def _mark(text: str, codes: list[str], offset: int) -> Cue | None:
    core = _core(text)
    for code in codes:
        for p in resources(code).words("acts", "question_marks"):
            if core.endswith(p):
                at = offset + len(core) - len(p)
                return Cue(resources(code).entry("acts", "question_marks"), at, at + len(p), p)
    return None


def _parts(body: str, codes: list[str]) -> tuple[str, ...]:
    """The items asked separately in one question: "出发地、目的地和时间" -> three; clauses that
    each hold a question word count one each ("去哪，玩几天？"); otherwise the question is one."""
    body = _core(body).rstrip("?？。.!！")
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
    rest = _core(text[after:]).rstrip("?？。.!！吗么嘛 ")
    for _ in range(3):
        lead = find(rest, "acts", "action_lead", codes)
        if lead is None or lead.start != 0:
            break
        rest = rest[lead.end :].strip()
    return rest.strip(" ，,")


def _unit(text: str, start: int, codes: list[str], weak: bool) -> Act:
    """One sentence or clause, classified."""
    body = _blank(text)
    mark = _mark(body, codes, start)
    particle = _particle(body, "question_particles", codes, start)
    weak_particle = _particle(body, "weak_particles", codes, start)
    particle = particle or _particle(body, "question_ends", codes, start)
    qword = _cue(body, "question_words", codes, start)
    anota = _cue(body, "a_not_a", codes, start)
    qstart = _starts(body, "question_starts", codes, start)
    request = _cue(body, "requests", codes, start)
    confirm = _cue(body, "confirmations", codes, start)
    clarify = _cue(body, "clarifications", codes, start)
    closing = _cue(body, "closings", codes, start)
    alts = [shifted(c, 0) for c in finditer(body, "acts", "alternatives", codes)]
    asking_cues = [c for c in (mark, particle, anota, qstart, request, confirm) if c]
    if weak_particle and (qword or mark):
        asking_cues.append(weak_particle)
    hits = [h for h in concepts_in(body, codes) if h.concept != "referent"]
    slots = tuple(h.concept for h in hits)
    slot_cues = tuple(shifted(h.cue, start) for h in hits)
    values = tuple(dict.fromkeys(m.group(0) for m in _VALUE.finditer(text)))
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
        result = _starts(body, "results", codes, start) or _cue(body, "results", codes, start)
        if result:
            return act("inform", [result])
        if ann := _cue(body, "announcements", codes, start):
            return act("announce", [ann])
        if closing:
            return act("close", [closing])
        if offer := _cue(body, "offers", codes, start):
            return act("offer", [offer])
        return act("inform", [])  # also "这里的它指的是行李箱。": a definition, not a question
    if closing and not slots:
        return act("close", [closing, *asking_cues], sure=not weak)
    opts = _options(body, alts) if (mark or particle) and alts else ()
    if opts and not request:  # "window or aisle?", "是去三亚还是厦门？": a choice between readings
        whole = (_core(body).rstrip("?？。.!！"),)
        return act("clarify", [*alts, *asking_cues], options=opts, parts=whole, sure=not weak)
    if confirm and not (request and slots):
        action = _action(body, confirm.end - start, codes)
        return act("confirm_request", [confirm, *asking_cues], action=action, sure=not weak)
    return act("request", asking_cues, parts=_parts(body, codes), sure=not weak)


def _split(text: str, start: int, codes: list[str], weak: bool) -> list[Act]:
    """A sentence as acts: a result or statement joined by a comma to a closing or a question
    ("Your card is blocked, anything else?") is read as two acts."""
    body = _blank(text)
    closing = _cue(body, "closings", codes, 0)
    cut = None
    if closing and closing.start > 0:
        cut = closing.start
    else:
        for m in _CLAUSE.finditer(body):
            lead = body[: m.start()]
            result = _cue(lead, "results", codes) and not _cue(lead, "requests", codes)
            if result and not _mark(lead, codes, 0):
                if _unit(text[m.end() :].lstrip(), 0, codes, weak).asking:  # "..., would you like X?"
                    cut = m.end()
                break
    if cut is not None:
        lead = text[:cut].rstrip(" ，,;；—–-")
        rest = text[cut:]
        if lead.strip() and rest.strip() and re.search(r"\w", lead):
            pad = len(rest) - len(rest.lstrip())
            return [_unit(lead, start, codes, weak), _unit(rest.lstrip(), start + cut + pad, codes, weak)]
    return [_unit(text, start, codes, weak)]


_NUMBER_STOP = re.compile(r"(?<=\d)\.\s+(?=[A-Z\u4e00-\u9fff])")


def _after_number(span: Span) -> list[Span]:
    """segment.sentences keeps "ending in 4242. Shall I go ahead?" whole (a full stop after a
    number); a capital after it starts a new sentence."""
    out, last = [], 0
    for m in _NUMBER_STOP.finditer(span.text):
        out.append(Span(span.start + last, span.start + m.start() + 1, span.text[last : m.start() + 1]))
        last = m.end()
    out.append(Span(span.start + last, span.end, span.text[last:]))
    return [s for s in out if s.text.strip()]


def agent_acts(text: str) -> list[Act]:
    """The acts of an agent reply, in order, with their spans into `text`."""
    return list(_agent_acts(text or ""))


@functools.lru_cache(maxsize=4096)
def _agent_acts(text: str) -> tuple[Act, ...]:
    """agent_acts, remembered: the rule simulator re-reads every earlier reply on each turn."""
    codes = codes_for(text)
    acts: list[Act] = []
    request_open = False  # the previous line asked for several things ("Please tell me:")
    head_cues: tuple[Cue, ...] = ()
    pos = 0
    for line in text.split("\n"):
        base = pos
        pos += len(line) + 1
        if not line.strip() or re.fullmatch(r"[\s|:\-]+", line):
            request_open = request_open and not line.strip() == ""
            continue
        heading = bool(_HEADING.match(line))
        item = _ITEM.match(line)
        skip = _HEADING.match(line) or item
        offset = base + (skip.end() if skip else 0)
        body = line[(skip.end() if skip else 0) :]
        if item and request_open:
            one = _unit(body, offset, codes, False)
            one = Act(one.kind, one.start, one.end, one.text, one.cues or head_cues, one.slots, one.slot_cues)
            kind = one.kind if one.kind in QUESTIONS else "request"
            acts.append(
                Act(
                    kind,
                    one.start,
                    one.end,
                    one.text,
                    one.cues,
                    one.slots,
                    one.slot_cues,
                    values=one.values,
                    parts=(_core(body).rstrip("?？；;。"),),
                )
            )
            continue
        request_open = False
        spans = [piece for span in sentences(body) for piece in _after_number(span)]
        spans = [sp for sp in spans if re.search(r"\w", _blank(sp.text))]  # a lone "**" is markup
        for k, span in enumerate(spans):
            last = k == len(spans) - 1
            nxt = spans[k + 1].text if not last else ""
            answered = bool(nxt) and find(nxt, "acts", "self_answer", codes) is not None
            weak = heading or answered
            pieces = _split(span.text, offset + span.start, codes, weak)
            if item and not last:  # inside a list item only its closing sentence asks the user
                pieces = [p if not p.asking else Act("inform", p.start, p.end, p.text) for p in pieces]
            acts.extend(pieces)
            if last and _core(span.text).endswith((":", "：")):
                head = pieces[-1]
                if (
                    head.kind in QUESTIONS
                    or _cue(span.text, "question_words", codes)
                    or _cue(span.text, "requests", codes)
                ):
                    request_open = True
                    head_cues = head.cues
                    acts[-1] = Act(
                        "request",
                        head.start,
                        head.end,
                        head.text,
                        head.cues,
                        head.slots,
                        head.slot_cues,
                        values=head.values,
                        parts=(),
                        sure=head.sure,
                    )
    return tuple(_fill_actions(acts))


def _fill_actions(acts: list[Act]) -> list[Act]:
    """A bare "Shall I go ahead?" proposes what the sentence before it announced."""
    out: list[Act] = []
    for a in acts:
        if (
            a.kind == "confirm_request"
            and not a.action
            and out
            and out[-1].kind in ("announce", "inform", "offer")
        ):
            prev = out[-1]
            a = Act(
                a.kind,
                a.start,
                a.end,
                a.text,
                a.cues,
                a.slots,
                a.slot_cues,
                action=_core(prev.text).rstrip("。."),
                values=tuple(dict.fromkeys(prev.values + a.values)),
                sure=a.sure,
            )
        out.append(a)
    return out


def questions(text: str) -> list[Act]:
    """The asking acts of an agent reply that are not closings (requests, confirmation requests,
    clarifications): what a clarification check counts."""
    return [a for a in agent_acts(text) if a.kind in QUESTIONS]


def user_acts(text: str) -> list[Act]:
    """The acts of a user message: confirm, refuse, dont_know, provide (values / concepts given)."""
    codes = codes_for(text or "")
    out: list[Act] = []
    for span in sentences(text or ""):
        body = _blank(span.text)
        values = tuple(dict.fromkeys(m.group(0) for m in _VALUE.finditer(span.text)))
        hits = concepts_in(body, codes)
        base = dict(
            values=values,
            slots=tuple(h.concept for h in hits),
            slot_cues=tuple(shifted(h.cue, span.start) for h in hits),
        )
        refuse = _cue(body, "user_refuse", codes, span.start)
        yes = _cue(body, "user_confirm", codes, span.start)
        unknown = _cue(body, "user_unknown", codes, span.start)
        if unknown:
            out.append(Act("dont_know", span.start, span.end, span.text, (unknown,), **base))
        elif refuse and (not yes or refuse.start <= yes.start):
            out.append(Act("refuse", span.start, span.end, span.text, (refuse,), **base))
        elif yes:
            out.append(Act("confirm", span.start, span.end, span.text, (yes,), **base))
        elif values or hits:
            out.append(Act("provide", span.start, span.end, span.text, (), **base))
        else:
            out.append(Act("other", span.start, span.end, span.text, (), **base))
    return out
