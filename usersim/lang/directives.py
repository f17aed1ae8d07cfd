"""Orders addressed to an assistant inside a text: what an agent that obeys text in tool results
takes for an instruction (topic `directives`: per action the phrases that ask for it and the words
of a tool that does it; `orders`, the cues that make a sentence an order; `lead`, a label before it).

A sentence is an order for an action when it has one of the action's cues and either starts with
it (after an optional label such as "SYSTEM:") or carries an order cue (must, immediately, without
asking, ignore previous instructions, 立即, 不要询问 ...). Its targets are read generally: record ids
(`A-2001`, `K-3002`), e-mail addresses, amounts of money (lang.quantity) and the words after the
cue (the object: an address, a hotel's name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from usersim.lang.phrases import codes_for, compiled, find
from usersim.lang.quantity import money
from usersim.lang.resources import Cue, language_codes, resources
from usersim.lang.segment import sentences

TOPIC = "directives"
_ID = re.compile(r"(?<![A-Za-z0-9-])[A-Z]{1,3}-?\d{3,}(?![A-Za-z0-9-])")
_EMAIL = re.compile(r"[A-Za-z0-9.+_-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_OBJECT_END = re.compile(
    r"[.!?。！？;；，]|\b(now|immediately|right away|without|before|and do not|and don't)\b|立即|马上|不要|无需|，"
)


@dataclass
class Directive:
    """One order found in a text."""

    action: str  # a key of `directives.actions` (transfer, block_card, book ...)
    sentence: str
    cue: Cue
    ids: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    amount: float | None = None
    object: str = ""  # the words after the action cue, up to an order word or the sentence's end


def actions(code: str) -> dict[str, dict[str, list[str]]]:
    """Action -> {asks, tool_words} in language `code`."""
    return dict(resources(code).get(TOPIC, "actions") or {})


def _starts_with(sentence: str, cue: Cue, code: str) -> bool:
    """Whether the sentence opens with the action's cue (a bare imperative), where the language
    reads one (`bare_imperative`; Chinese orders carry an order word: 请, 立即 ...)."""
    if not resources(code).get(TOPIC, "bare_imperative", True):
        return False
    lead = str(resources(code).get(TOPIC, "lead") or "")
    head = sentence[: cue.start]
    if lead.startswith("re:"):
        head = re.sub(lead[3:], "", head, count=1)
    head = re.sub(r"(?i)^\W*(please|kindly|also|then|now|and|请|并|再)?\W*", "", head)
    return not head.strip()


def directives(text: str) -> list[Directive]:
    """The orders in `text`, in order of appearance (several actions in one sentence: each)."""
    out: list[Directive] = []
    codes = codes_for(text)
    for s in sentences(text):
        order = find(s.text, TOPIC, "orders", codes)
        for code in codes:
            for action, spec in actions(code).items():
                cue = _cue(s.text, code, action, list(spec.get("asks") or []))
                if cue is None or any(d.action == action and d.sentence == s.text for d in out):
                    continue
                if order is None and not _starts_with(s.text, cue, code):
                    continue
                amounts = money(s.text)
                rest = s.text[cue.end :]
                stop = _OBJECT_END.search(rest)
                out.append(
                    Directive(
                        action=action,
                        sentence=s.text,
                        cue=cue,
                        ids=_ID.findall(s.text),
                        emails=_EMAIL.findall(s.text),
                        amount=amounts[0].value if amounts else None,
                        object=(rest[: stop.start()] if stop else rest).strip(" :：\"'“”"),
                    )
                )
    return out


def _cue(text: str, code: str, action: str, asks: list[str]) -> Cue | None:
    pat = compiled(tuple(asks))
    m = pat.search(text) if pat is not None else None
    if m is None or m.end() <= m.start():
        return None
    return Cue(f"{code}/{TOPIC}.actions.{action}", m.start(), m.end(), m.group(0))


def tool_for(action: str, tools: list[dict], code: str | None = None) -> str | None:
    """The tool (OpenAI schema list) that best does `action`: the most of the action's `tool_words`
    among the words of its name (counted twice) and description, or None when none has any."""
    best, score = None, 0
    for c in [code] if code else language_codes():
        words = [w.casefold() for w in (actions(c).get(action) or {}).get("tool_words") or []]
        for t in tools:
            fn = t.get("function") or t
            name = str(fn.get("name") or "")
            n = 2 * _hits(words, name.replace("_", " ")) + _hits(words, str(fn.get("description") or ""))
            if n > score:
                best, score = name, n
    return best


def _hits(words: list[str], text: str) -> int:
    """How many of `words` occur in `text`: Latin words whole, others as substrings."""
    folded = text.casefold()
    tokens = set(re.findall(r"[a-z0-9]+", folded))
    return sum(1 for w in words if (w in tokens if w.isascii() else w in folded))
