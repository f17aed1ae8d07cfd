"""Checks on one simulated-user turn, shared by the LLM simulator (its output guards) and the
fidelity judge (its rule fallback): assistant voice, both sides written, parroting the agent,
language switch, length over the verbosity cap, unknown_info leaks (exact and fuzzy) and
invented quantities. Each returns what it found so reasons can quote it, or None.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from usersim.lang import quantity
from usersim.lang.quantity import chinese_digits
from usersim.lang.resources import Memo
from usersim.personas.schema import Persona
from usersim.simulator.signals import hidden_truths, role_flip

# Assistant phrasing beyond signals.role_flip: offering, presenting results, serving the user.
_ASSISTANT_VOICE = re.compile(
    r"(为(您|你)(查询|查到|找到|推荐|安排|预订|整理|挑选|筛选)|我来(为|帮)(您|你)|以下是(为您|为你|我为|我帮)|"
    r"我(可以|能)(为|帮)(您|你)(查|找|推荐|预订|安排)|很高兴(为|帮)(您|你)|还有什么(需要|可以)(我)?(帮|为)|"
    r"请问(您|你)还有(什么|其他)(需要|问题)|"
    r"\bhere are (some|a few|the|great|your|several)\b[^.\n]{0,40}\b(options|choices|flights|hotels|results)\b|"
    r"\bi can help you\b|\blet me (check|find|search|look) (that|this|for you)\b|\bwould you like me to\b|"
    r"\bhappy to help\b|\bi('d| would) be (happy|glad) to\b)",
    re.IGNORECASE,
)
# A turn that writes both sides of the chat: speaker labels at line starts.
_SPEAKER = re.compile(
    r"(?:^|\n)\s*(?:\*\*)?(assistant|user|agent|客服|助手|用户|客户|ai)(?:\*\*)?\s*[:：]", re.IGNORECASE
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")

# Characters a user turn may hold, by verbosity trait (Chinese counts; English gets 3x).
LENGTH_CAP = {"low": 200, "medium": 500, "high": 1200}
EN_FACTOR = 3

# one digit or 十 (the quantities a persona states)


def assistant_voice(text: str) -> str | None:
    """The AI-assistant phrase a user turn contains, or None."""
    found = role_flip(text)
    if found:
        return found
    match = _ASSISTANT_VOICE.search(text or "")
    return match.group(0) if match else None


def both_sides(text: str) -> str | None:
    """The speaker label of a turn that writes the dialogue of both sides ("用户：… 助手：…"), or None."""
    match = _SPEAKER.search(text or "")
    return match.group(0).strip() if match else None


def parroting(text: str, agent_text: str | None) -> float | None:
    """Similarity (0..1) when the turn copies the agent's last reply or plays the agent, else None.

    A turn much like the agent's reply is still the user's own when it answers it: it confirms or
    quotes the proposal (ids, values) in the user's voice ("Yes, I confirm cancelling reservation
    3RK2T9." to "Do you confirm cancelling reservation 3RK2T9?"). It is a copy when it re-asks the
    agent's question, keeps the agent's address to the user ("your booking ..."), or adds no word
    of its own (guards_parroting.echo)."""
    from usersim.simulator.guards_parroting import echo

    a, b = (text or "").strip(), (agent_text or "").strip()
    if len(a) < 20 or not b:
        return None
    if len(a) >= 30 and a in b:
        ratio = 1.0
    else:
        # SequenceMatcher's real_quick_ratio and quick_ratio bound its ratio from above (the lengths,
        # the characters shared): a turn much shorter than the reply, or with other words, never
        # needs the matcher (building one indexes every character of the reply)
        if _ratio(min(len(a), len(b)), len(a) + len(b)) < 0.7:
            return None
        if _ratio(sum((Counter(a) & Counter(b)).values()), len(a) + len(b)) < 0.7:
            return None
        ratio = SequenceMatcher(None, a, b, autojunk=False).ratio()
    if ratio < 0.7:
        return None
    return round(ratio, 2) if echo(a, b) else None


def _ratio(matches: int, length: int) -> float:
    """difflib's ratio of `matches` over two sequences of `length` characters together."""
    return 2.0 * matches / length if length else 1.0


def language_switch(text: str, language: str) -> str | None:
    """Why the turn is not in the persona's language ('zh' or 'en'), or None."""
    cjk = len(_CJK.findall(text or ""))
    latin = len(_LATIN.findall(text or ""))
    if language == "zh" and latin >= 12 and latin > 3 * cjk:
        return f"persona speaks Chinese but the turn is mostly Latin script ({latin} letters, {cjk} CJK)"
    if language == "en" and cjk >= 4 and cjk * 2 > latin:
        return f"persona speaks English but the turn is mostly Chinese ({cjk} CJK, {latin} letters)"
    return None


def length_cap(persona: Persona) -> int:
    """Most characters one user turn may hold for this persona's verbosity."""
    cap = LENGTH_CAP.get(persona.traits.verbosity, LENGTH_CAP["medium"])
    return cap * (EN_FACTOR if persona.language == "en" else 1)


def too_long(persona: Persona, text: str) -> str | None:
    cap = length_cap(persona)
    n = len(text or "")
    return (
        f"{n} characters, over the {cap}-character cap for verbosity {persona.traits.verbosity}"
        if n > cap
        else None
    )


def _bigrams(text: str) -> set[str]:
    s = re.sub(r"\s+", "", (text or "").lower())
    return {s[i : i + 2] for i in range(len(s) - 1)}


def overlap(part: str, text: str) -> float:
    """Share of `part`'s character bigrams found in `text` (0..1)."""
    grams = _bigrams(part)
    return len(grams & _bigrams(text)) / len(grams) if grams else 0.0


def numbers(text: str) -> set[float]:
    """The numbers written in digits in `text` (1,628.00 -> 1628.0)."""
    return {v for v, _, _ in quantity.numerals_in(text or "")}


@dataclass(frozen=True)
class Leak:
    """An unknown_info truth a user turn states, and how: exact (word for word), numbers, paraphrase."""

    topic: str
    truth: str
    how: Literal["exact", "numbers", "paraphrase"]

    def describe(self) -> str:
        if self.how == "exact":
            return f"states '{self.truth}' word for word"
        if self.how == "numbers":
            return f"states the number(s) of '{self.topic}: {self.truth}'"
        return f"paraphrases '{self.topic}: {self.truth}'"


def find_leak(persona: Persona, text: str, context: list[str] | None = None) -> Leak | None:
    """The unknown_info truth a turn states, exactly, by its numbers or in most of its wording; None
    when nothing leaked. A truth the conversation already holds (`context`: earlier messages, e.g.
    the agent told the user) is no leak."""
    truths = hidden_truths(persona)
    if not truths:  # nothing the user cannot know: no need to read the conversation's numbers
        return None
    heard = "\n".join(context or [])
    heard_numbers = numbers(heard)
    said = numbers(text)
    low = (text or "").lower()
    for topic, truth in truths:
        if truth.lower() in heard.lower():
            continue
        if truth.lower() in low:
            return Leak(topic, truth, "exact")
        nums = numbers(truth)
        if nums and nums <= said and not nums <= heard_numbers:
            return Leak(topic, truth, "numbers")
        if not nums and len(truth) >= 4 and overlap(truth, text) >= 0.6:
            return Leak(topic, truth, "paraphrase")
    return None


def leak(persona: Persona, text: str, context: list[str] | None = None) -> str | None:
    """`find_leak` as a reason (the simulator's output guard), or None."""
    found = find_leak(persona, text, context)
    return found.describe() if found else None


# The facts a persona states as quantities: money, amounts in 万/千, people, nights, days, rooms,
# weights, areas, ages (not "3 款", "2 站": those are no persona facts).
_FACT_DIMENSIONS = {"money", "count", "weight", "area", "age"}


def _quantities(text: str) -> list[tuple[str, float, bool]]:
    """(phrase, number as written, is money or scaled) of the quantities a turn states, read by
    usersim.lang.quantity ("1万" -> ("1万", 1.0, True), "4 个人" -> ("4 个人", 4.0, False))."""
    out = []
    for q in quantity.quantities(text or ""):
        scaled = q.kind == "money" or q.scale != 1
        if scaled or q.dimension in _FACT_DIMENSIONS or q.unit == "day":
            out.append((q.text.strip(), round(q.amount / q.scale, 6), scaled))
    return out


def persona_text(persona: Persona, goal: str | None = None) -> str:
    """Everything the persona may say: identity, opening, goal, facts, constraints, scripted events."""
    parts = [persona.identity, persona.opening_message or "", persona.goal.description, goal or ""]
    parts += [f"{f.slot} {f.value} {' '.join(f.aliases)}" for f in persona.known_info]
    parts += [f"{k} {v}" for k, v in persona.goal.constraints.items()]
    parts += [f"{e.value or ''} {e.text or ''}" for e in persona.events]
    if persona.adversary is not None:  # a manipulative user's claims and target are its own words
        adv = persona.adversary
        parts += [
            adv.target.ask,
            adv.target.subject or "",
            *(v for v in adv.claims.model_dump().values() if v),
        ]
    return "\n".join(parts)


def find_invented(
    persona: Persona, text: str, context: list[str], goal: str | None = None
) -> tuple[str, float] | None:
    """(phrase, value) of a quantity (4 个人, 1万, $300) the turn states that is in neither the
    persona nor the conversation so far (`context`: earlier messages of both sides), or None."""
    stated = _quantities(text)
    if not stated:  # no quantity in the turn: nothing to look up in the persona or the conversation
        return None
    memo = _STATED.table()
    allowed = set(_stated(persona_text(persona, goal), memo))
    for t in context:
        allowed |= _stated(t, memo)
    for phrase, value, scaled in stated:
        trivial = value in (0.0, 1.0) and not scaled  # "1 个人", "第1个" are not facts
        if value not in allowed and not trivial:
            return phrase, value
    return None


_STATED = Memo()


def _stated(text: str, memo: dict[Any, Any]) -> frozenset[float]:
    """The numbers `text` writes in digits and its single numeral characters' values (零..九, 十),
    remembered per text in `memo` (_STATED's table for the resources in force): every turn reads the
    whole conversation so far again, and the fidelity judge reads it once more."""
    hit = memo.get(text)
    if hit is None:
        digits = chinese_digits()  # the numerals lexicon loads on the first turn, not on import
        hit = memo[text] = frozenset(numbers(text) | {float(digits[c]) for c in text if c in digits})
    return hit


def invented(persona: Persona, text: str, context: list[str], goal: str | None = None) -> str | None:
    """`find_invented` as a reason, or None."""
    found = find_invented(persona, text, context, goal)
    return f"'{found[0]}' is in neither the persona nor the conversation" if found else None
