"""Text signals shared by the simulators, the fidelity judge and persona lint.

What an agent reply delivered, whether it proposed something against the user's constraints,
whether a user turn broke character or leaked what the user cannot know. Plain heuristics that a
user can check against the transcript; each returns what it found so reasons can quote it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from usersim.lang import acts, quantity
from usersim.lang.resources import Memo
from usersim.personas.schema import Goal, Persona
from usersim.simulator.constraints import Violation, violations

# Required-item names mapped to a canonical item, so personas can write 机票 or flights.
ITEM_ALIASES: dict[str, str] = {
    "flights": "flights",
    "flight": "flights",
    "机票": "flights",
    "航班": "flights",
    "hotel": "hotel",
    "hotels": "hotel",
    "酒店": "hotel",
    "住宿": "hotel",
    "itinerary": "itinerary",
    "行程": "itinerary",
    "日程": "itinerary",
    "model": "model",
    "型号": "model",
    "product": "model",
    "具体型号": "model",
    "channel": "channel",
    "购买渠道": "channel",
    "渠道": "channel",
    "listing": "listing",
    "房源": "listing",
    "小区": "listing",
    "restaurant": "restaurant",
    "餐厅": "restaurant",
    "restaurants": "restaurant",
    "trains": "trains",
    "train": "trains",
    "火车票": "trains",
    "高铁": "trains",
}

# Items whose delivery always carries numbers (times, dates, prices).
NUMERIC_ITEMS = {"flights", "hotel", "trains", "listing"}

# Evidence words per canonical item, used when a persona gives no deliverable_keywords.
DEFAULT_DELIVERABLE_KEYWORDS: dict[str, list[str]] = {
    "flights": ["起飞", "航班号", "直飞", "经停", "flight", "depart"],
    "hotel": ["入住", "每晚", "/晚", "离店", "check-in", "per night", "/night"],
    "itinerary": ["第一天", "Day 1", "D1", "第1天", "行程安排", "day 1"],
    "model": ["型号", "model"],
    "channel": ["京东", "天猫", "淘宝", "官网", "旗舰店", "JD", "Amazon", "store"],
    "listing": ["小区", "万/平", "总价", "listing"],
    "restaurant": ["餐厅", "饭店", "restaurant"],
    "trains": ["车次", "高铁", "G", "train"],
}


_ROLE_FLIP = re.compile(
    r"(作为(一个|一名|您的|你的)?\s*(AI\s*助手|AI|人工智能助手|人工智能|语言模型|智能助手|助手)|"
    r"我是(一个)?\s*(AI\s*助手|AI|人工智能|语言模型|智能助手)|"
    r"有什么(可以|能)帮(您|你)|请问有什么需要|很高兴为(您|你)服务|我可以为您提供|"
    r"\bas an ai\b|\bas a language model\b|\bi('| a)m an ai\b|\bi am an ai\b|\bhow can i (help|assist) you\b|"
    r"\bhow may i (help|assist)\b|\bis there anything else i can help\b|\bi'm here to help\b)",
    re.IGNORECASE,
)

# Items whose delivery a quantity shows, whatever words the persona listed: a hotel offer carries
# a nightly price ("¥680 一晚", "680 元每晚", "$120 per night"), read by usersim.lang.quantity.
DELIVERABLE_QUANTITIES: dict[str, tuple[str, str]] = {"hotel": ("money", "night")}

CONSTRAINT_KEYS = {
    "min": "smallest value per measure, with its unit ({data: 10 GB, duration: 2 hours})",
    "max": "largest value per measure, with its unit ({price: 60 元, price: $40, weight: 1.5 kg})",
    "require": "features a proposal must affirm (roaming, 国际漫游; synonyms via lang/lexicon)",
    "max_price": "largest price (元/$) a proposal may carry",
    "max_total_price_wan": "largest total price in 万 (housing)",
    "max_weight_kg": "largest weight in kg",
    "exclude": "words that must not be proposed (brands, allergens, 辣 ...)",
}


def canonical_item(item: str) -> str:
    """The canonical name of a goal.required item (flights for 机票), or the item itself."""
    return ITEM_ALIASES.get(item.strip().lower(), ITEM_ALIASES.get(item.strip(), item.strip()))


def sentences(text: str) -> list[str]:
    """Text split into the pieces the language layer reads as one act each: sentences, list lines,
    and a result joined to a closing by a comma as two ("Your card is blocked", "anything else?")."""
    return [a.text for a in acts.agent_acts(text or "")]


def is_question(sentence: str) -> bool:
    """Whether a sentence asks the user something (lang.acts: a request, confirmation request,
    clarification or closing question, with or without a question mark)."""
    return any(a.asking for a in acts.agent_acts(sentence or ""))


def is_asking(sentence: str) -> bool:
    """A question, or a request phrased as a statement ("请告诉我你的预算。", "Please state your
    date of birth.")."""
    return is_question(sentence)


def asking_sentences(text: str) -> list[str]:
    """The pieces of an agent reply that ask the user something (read in context: the list items
    under "请告诉我：" are each asked)."""
    return [a.text for a in acts.agent_acts(text or "") if a.asking]


def asks_confirmation(text: str) -> bool:
    """Whether the reply asks the user's go-ahead for an action ("Shall I go ahead?", "Is it OK if
    I block ...?", "确认为您办理 58 元套餐吗？")."""
    return any(a.kind == "confirm_request" for a in acts.agent_acts(text or ""))


def proposal_sentences(text: str) -> list[str]:
    """Pieces that state results or offers: not questions or requests, not announcements ("let me
    check"), not closings; "Confirmed: your card is blocked." is a result."""
    return [a.text for a in acts.agent_acts(text or "") if a.kind in ("inform", "offer")]


def item_keywords(goal: Goal, item: str) -> list[str]:
    """Evidence words for one required item: the persona's, else defaults for its canonical name."""
    words = goal.deliverable_keywords.get(item)
    if words:
        return words
    return DEFAULT_DELIVERABLE_KEYWORDS.get(canonical_item(item), [item])


def delivered_items(goal: Goal, text: str, items: list[str] | None = None) -> dict[str, str]:
    """Required items (or just `items` of them) this agent reply delivers -> the keyword that shows it.

    The keyword must sit in a stated result (not a question, request or announcement); for items
    whose results always carry numbers (flights, hotel, trains, listing: times, dates, prices) that
    sentence or the next (a heading and its first list line) must hold a digit, so a search snippet
    that merely mentions 直飞 does not count. Remembered per (reply, items, their keywords) while
    the same resources are in force: the simulator reads each earlier reply again on every turn.
    """
    wanted = list(goal.required if items is None else items)
    words = tuple((item, tuple(goal.deliverable_keywords.get(item) or ())) for item in wanted)
    memo, key = _DELIVERED.table(), (text, words)
    held = memo.get(key)
    if held is None:
        held = memo[key] = _delivered_items(goal, text, wanted)
    return dict(held)


_DELIVERED = Memo(2048)  # a key holds its reply text: bounded by entries


def _delivered_items(goal: Goal, text: str, items: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    candidates = [s.lower() for s in proposal_sentences(text)]
    numeric = [bool(re.search(r"\d", a + (b or ""))) for a, b in zip(candidates, candidates[1:] + [""])]
    for item in items:
        needs_number = canonical_item(item) in NUMERIC_ITEMS
        for word in item_keywords(goal, item):
            if any(
                keyword_in(word, s) and (numeric[i] or not needs_number) for i, s in enumerate(candidates)
            ):
                found[item] = word
                break
        if item not in found and (shown := quantity_evidence(item, candidates)):
            found[item] = shown
    return found


def quantity_evidence(item: str, sentences: list[str]) -> str | None:
    """The quantity that shows `item` delivered in one of `sentences` (a hotel's nightly price:
    "¥680 一晚", "每晚680元", "$120 per night"), or None; see DELIVERABLE_QUANTITIES."""
    want = DELIVERABLE_QUANTITIES.get(canonical_item(item))
    if want is None:
        return None
    kind, per = want
    for s in sentences:
        q = next((q for q in quantity.quantities(s) if q.kind == kind and q.per == per), None)
        if q is not None:
            return q.text
    return None


_QUANTITY = re.compile(r"^[$¥￥€£]?\s*(\d[\d,]*(?:\.\d+)?)\s*$")
_NUMBER = re.compile(r"(?<![\d.])\d[\d,]*(?:\.\d+)?(?![\d])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ZERO_CENTS = re.compile(r"(?<=\d)\.0+(?!\d)")


def normalize_numbers(text: str) -> str:
    """Numbers written one way: 1,628.00 -> 1628 (thousands separators and zero cents go)."""
    return _ZERO_CENTS.sub("", _THOUSANDS.sub("", text))


def _value(number: str) -> float | None:
    try:
        return float(number.replace(",", ""))
    except ValueError:
        return None


def keyword_in(word: str, lowered_text: str) -> bool:
    """Keyword match ignoring case and whitespace ("华为 MateBook" = "华为MateBook 14"); short Latin
    keywords (CA, MU, D1) must stand alone as a word; a number matches by value, as a whole number
    ("1628" finds "$1,628.00", "4" never finds "14 bags"), as the judges' keyword checks do."""
    kind, a, b = _keyword(word)
    if kind == "number":
        return any(_value(n) == a for n in _NUMBER.findall(lowered_text))
    text, squashed = _forms(lowered_text)
    if kind == "short":
        return a.search(text) is not None
    return a in text or b in squashed


_SPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=4096)
def _keyword(word: str) -> tuple[str, Any, Any]:
    """How `keyword_in` looks a keyword up, read once per keyword (every item's keywords are looked
    up in every sentence of every reply): ("number", its value, None), ("short", the pattern of a
    short Latin word standing alone, None) or ("text", normalized, normalized without whitespace)."""
    w = word.lower().strip()
    if m := _QUANTITY.match(w):
        return "number", _value(m.group(1)), None
    w = normalize_numbers(w)
    if len(w) <= 3 and w.isascii():
        return "short", re.compile(rf"(?<![a-z]){re.escape(w)}(?![a-z])"), None
    return "text", w, _SPACE.sub("", w)


@functools.lru_cache(maxsize=4096)
def _forms(lowered_text: str) -> tuple[str, str]:
    """A text with numbers normalized, and that without whitespace: every keyword of every item is
    looked up in the same sentences, so each is normalized once."""
    text = normalize_numbers(lowered_text)
    return text, _SPACE.sub("", text)


def undelivered(goal: Goal, assistant_texts: list[str], constraints: dict | None = None) -> list[str]:
    """Required items no acceptable assistant reply delivered (replies violating constraints don't count)."""
    done: set[str] = set()
    for text in assistant_texts:
        todo = [item for item in goal.required if item not in done]
        if not todo:
            break
        if constraint_violations(constraints if constraints is not None else goal.constraints, text):
            continue
        done.update(delivered_items(goal, text, todo))
    return [item for item in goal.required if item not in done]


def constraint_violations(constraints: dict, text: str, language: str | None = None) -> list[Violation]:
    """Constraint breaches in what one agent reply proposes (results, offers, confirmation
    requests): limits with units, required features, exclusions (simulator/constraints.py)."""
    return violations(constraints, text, language)


def role_flip(text: str) -> str | None:
    """The AI-assistant phrase a user turn contains (broke character), or None."""
    match = _ROLE_FLIP.search(text or "")
    return match.group(0) if match else None


def hidden_truths(persona: Persona) -> list[tuple[str, str]]:
    """(topic, truth) of unknown_info items written `topic: truth`."""
    out = []
    for item in persona.unknown_info:
        parts = re.split(r"[:：]", item, maxsplit=1)
        if len(parts) == 2 and parts[1].strip():
            out.append((parts[0].strip(), parts[1].strip()))
    return out


def unknown_topics(persona: Persona) -> list[str]:
    """The topics of unknown_info (never the hidden truths)."""
    return [re.split(r"[:：]", item, maxsplit=1)[0].strip() for item in persona.unknown_info]


def leaked_truth(persona: Persona, text: str) -> str | None:
    """The unknown_info truth a user turn states (the user cannot know it), or None."""
    low = (text or "").lower()
    for _topic, truth in hidden_truths(persona):
        if truth.lower() in low:
            return truth
    return None
