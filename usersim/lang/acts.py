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

from usersim.lang.concepts import concepts_in
from usersim.lang.phrases import codes_for, find, shifted
from usersim.lang.resources import Cue, Resources, language_codes, resources
from usersim.lang.segment import Span, sentences
from usersim.lang.sentence_acts import ASKING, QUESTIONS, VALUE, Act, blank, core_text, cue, read_clause
from usersim.lang.sentence_acts import read_sentence as _split

__all__ = ["ASKING", "QUESTIONS", "Act", "agent_acts", "questions", "user_acts"]


_ITEM = re.compile(
    r"^\s*(?:>\s*)*(?:\d{1,2}[.、)）:：](?!\d)|[（(]\d{1,2}[)）]|[①-⑳]|[-•*·+](?=\s)|\d\ufe0f?\u20e3|[🔹🔸▪▫✅❌☑✔➡👉])\s*"
)
_HEADING = re.compile(r"^\s*#{1,6}\s+")

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
    return list(_agent_acts(text or "", _version()))


_HELD: list[Resources] = []  # resources a remembered reading was made with (their ids stay unique)


def _version() -> tuple[int, ...]:
    """Which resources are in force: a reading is remembered per text and resources."""
    out = []
    for code in language_codes():
        res = resources(code)
        if not any(res is h for h in _HELD):
            _HELD.append(res)
        out.append(id(res))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _agent_acts(text: str, _version: tuple[int, ...]) -> tuple[Act, ...]:
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
            one = read_clause(body, offset, codes, False)
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
                    parts=(core_text(body).rstrip("?？；;。"),),
                )
            )
            continue
        request_open = False
        spans = [piece for span in sentences(body) for piece in _after_number(span)]
        spans = [sp for sp in spans if re.search(r"\w", blank(sp.text))]  # a lone "**" is markup
        for k, span in enumerate(spans):
            last = k == len(spans) - 1
            nxt = spans[k + 1].text if not last else ""
            answered = bool(nxt) and find(nxt, "acts", "self_answer", codes) is not None
            weak = heading or answered
            pieces = _split(span.text, offset + span.start, codes, weak)
            if item and not last:  # inside a list item only its closing sentence asks the user
                pieces = [p if not p.asking else Act("inform", p.start, p.end, p.text) for p in pieces]
            acts.extend(pieces)
            if last and core_text(span.text).endswith((":", "：")):
                head = pieces[-1]
                if (
                    head.kind in QUESTIONS
                    or cue(span.text, "question_words", codes)
                    or cue(span.text, "requests", codes)
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
                action=core_text(prev.text).rstrip("。."),
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
        body = blank(span.text)
        values = tuple(dict.fromkeys(m.group(0) for m in VALUE.finditer(span.text)))
        hits = concepts_in(body, codes)
        base = dict(
            values=values,
            slots=tuple(h.concept for h in hits),
            slot_cues=tuple(shifted(h.cue, span.start) for h in hits),
        )
        refuse = cue(body, "user_refuse", codes, span.start)
        yes = cue(body, "user_confirm", codes, span.start)
        unknown = cue(body, "user_unknown", codes, span.start)
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


def accepts(text: str) -> bool:
    """Whether a user turn accepts what was put to it: a confirm act and no refusal."""
    kinds = {a.kind for a in user_acts(text)}
    return "confirm" in kinds and "refuse" not in kinds
