"""A user's constraints and whether a proposal meets them.

Constraints come from the goal (`min: {data: 10 GB}`, `max: {price: $40}`, `require: [roaming]`,
`exclude: [...]`, and the legacy `max_price` / `max_total_price_wan` / `max_weight_kg`), from
the needs the persona states in its opening message ("流量至少要10G", "under $40", "needs
roaming"; read by simulator/needs.py) and from add_constraint events. `violations`
reads one agent reply through the language layer: quantities by dimension (lang.quantity),
features by polarity (lang.polarity: "不含国际漫游" is a negated mention) and synonyms
(lang.lexicon).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from usersim.core.errors import CaseError
from usersim.lang import acts, lexicon, phrases, quantity
from usersim.lang.cues import NEGATIVE
from usersim.lang.polarity import Reader
from usersim.lang.resources import Memo, language_codes, resources

# Legacy keys: (kind, measure, dimension, unit shown after the number)
LEGACY = {
    "max_price": ("max", "price", "money", ""),
    "max_total_price_wan": ("max", "total_price_wan", "total_wan", "万"),
    "max_weight_kg": ("max", "weight", "weight", "kg"),
}
_TOTAL = re.compile(r"(合计|总计|共计|一共|总共|total|altogether)[^，,；;]{0,4}$", re.IGNORECASE)
# Clause breaks a stated need does not reach across (needs.py).
CLAUSE = re.compile(r"[，,。；;！!？?\n]+|\.(?!\d)|\s+and\s+|\s+but\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Limit:
    """One numeric limit: kind min|max, the measure's name, its dimension and the limit as written."""

    kind: str
    measure: str
    dimension: str
    value: float
    text: str
    currency: str | None = None
    legacy_unit: str | None = None  # legacy keys show the value found as a number + this unit


@dataclass
class Violation:
    """A proposal that breaks a constraint: which (max_price, min, max, require, require_missing,
    exclude ..., or `fact`: it contradicts a fact of the user), the value found and the limit (for
    a fact: the user's own value)."""

    constraint: str
    found: str
    limit: str
    slot: str | None = None  # a contradicted fact (constraint "fact"): the persona's fact key

    def describe(self) -> str:
        if self.constraint == "fact":
            return f"fact {self.slot}: proposed {self.found}, the user's is {self.limit}"
        if self.constraint == "require_missing":
            return f"require_missing: {self.limit} not offered"
        if self.constraint == "require":
            return f"require: proposed {self.found}, needs {self.limit}"
        return f"{self.constraint}: proposed {self.found}, limit {self.limit}"


def needs_resource(code: str) -> dict[str, Any]:
    """needs.yaml of one language (resources() caches the merged files; cleared with them)."""
    return resources(code).topic("needs")


def measure_dimensions() -> dict[str, str]:
    """Measure names (price, 流量 ...) -> the dimension of their quantities, all languages merged."""
    out: dict[str, str] = {}
    for code in language_codes():
        out.update({str(k).lower(): str(v) for k, v in (needs_resource(code).get("measures") or {}).items()})
    return out


def limits(constraints: dict, language: str | None = None) -> list[Limit]:
    """The numeric limits of a constraints mapping (legacy keys and `min:` / `max:`); a legacy
    max_price is shown in `language`'s money format (60 -> 60元, $40)."""
    out: list[Limit] = []
    money = str(needs_resource(language).get("money_format") or "{value}") if language else "{value}"
    for key, (kind, measure, dim, unit) in LEGACY.items():
        if constraints.get(key) is not None:
            value = float(constraints[key])
            shown = money.format(value=f"{value:g}") if dim == "money" else f"{value:g}{unit}"
            out.append(Limit(kind, measure, dim, value, shown, legacy_unit=unit))
    dims = measure_dimensions()
    for kind in ("min", "max"):
        for measure, raw in (constraints.get(kind) or {}).items():
            q = quantity.parse(str(raw))
            if q is None:  # an add_constraint event's value (the goal's are checked by the persona schema)
                raise CaseError(
                    f"constraints.{kind}.{measure}: {raw!r} is not a quantity (e.g. '10 GB', '$40')",
                    where="persona add_constraint event",
                )
            found = q.dimension if q.kind in ("money", "measure", "duration") else None
            dim = found or dims.get(str(measure).lower()) or str(measure)
            out.append(Limit(kind, str(measure), dim, q.value, str(raw).strip(), q.currency))
    return out


def _values(limit: Limit, sentence: str) -> list[tuple[float, str]]:
    """(value, as written) of each quantity in `sentence` measuring what `limit` limits."""
    out = []
    for q in quantity.quantities(sentence):
        if limit.dimension == "total_wan":
            if not (q.scale == 10000 and q.per is None and q.kind in ("number", "money")):
                continue
            vals = [q.value / 10000] + ([q.high / 10000] if q.high is not None else [])
        elif limit.dimension == "money":
            if q.kind != "money" or (limit.currency and q.currency and q.currency != limit.currency):
                continue
            if _TOTAL.search(sentence[max(0, q.start - 8) : q.start]):
                continue  # "2 人合计约 ¥2,580" is a group total, not the price of one item
            vals = [q.value] + ([q.high] if q.high is not None else [])
        elif limit.dimension == "duration":
            if q.kind != "duration":
                continue
            vals = [q.value] + ([q.high] if q.high is not None else [])
        else:
            if q.dimension != limit.dimension:
                continue
            vals = [q.value] + ([q.high] if q.high is not None else [])
        out += [(v, q.text) for v in vals]
    return out


def feature_words(feature: str) -> list[str]:
    """A required feature and its synonyms (lang.lexicon: 国际漫游 = 漫游 = roaming ...)."""
    words = [feature] + [w for _c, w in lexicon.synonyms(feature)]
    return sorted(dict.fromkeys(w for w in words if w), key=len, reverse=True)


def _mentions(text: str, words: list[str]) -> list[tuple[int, int]]:
    low, spans = text.lower(), list[tuple[int, int]]()
    for w in words:
        for m in re.finditer(re.escape(w.lower()), low):
            if not any(s <= m.start() < e for s, e in spans):
                spans.append((m.start(), m.end()))
    return spans


_VIOLATIONS = Memo()


def violations(constraints: dict, text: str, language: str | None = None) -> list[Violation]:
    """Constraint breaches in what one agent reply proposes (results, offers, confirmation requests).
    Remembered per (constraints, reply, language): the simulator reads each agent reply again on
    every later turn and the judges read them all once more; the caller gets its own copies.

    Limits and exclusions are read in every proposed sentence; `min` and `require` only in a reply
    that offers something or asks the go-ahead (a statement of the current plan is no proposal). A
    required feature is breached when the offer negates it ("不含国际漫游", "no roaming") or, in an
    offer carrying a constrained quantity (a price, a data allowance), leaves it out.
    """
    if not constraints:
        return []
    try:
        key = (json.dumps(constraints, sort_keys=True, default=str), text, language)
    except (TypeError, ValueError):  # keys that do not sort: read it every time
        return _violations(constraints, text, language)
    memo = _VIOLATIONS.table()
    held = memo.get(key)
    if held is None:
        held = memo[key] = tuple(_violations(constraints, text, language))
    return [replace(v) for v in held]


def _violations(constraints: dict, text: str, language: str | None) -> list[Violation]:
    read = acts.agent_acts(text or "")
    proposing = proposes(text)
    # "I will switch you to Max at $45. Shall I go ahead?": the announced plan is what is put to the user
    kinds = ("inform", "offer", "confirm_request") + (("request", "announce") if proposing else ())
    sentences = [a.text for a in read if a.kind in kinds]
    sentences = [
        s for s in sentences if phrases.find(s, "needs", "rejecting") is None
    ]  # warnings propose nothing
    found: list[Violation] = []
    all_limits = limits(constraints, language)
    for limit in all_limits:
        if limit.kind == "min" and not proposing:
            continue
        for sentence in sentences:
            for value, written in _values(limit, sentence):
                if (limit.kind == "max" and value > limit.value) or (
                    limit.kind == "min" and value < limit.value
                ):
                    shown = written if limit.legacy_unit is None else f"{value:g}{limit.legacy_unit}"
                    _add(found, Violation(_key(limit), shown, limit.text))
    for word in constraints.get("exclude") or []:
        for sentence in sentences:
            for s, e in _mentions(sentence, [str(word)]):
                if Reader(sentence).at(s, e).polarity not in NEGATIVE and not _left_out(sentence, s, e):
                    _add(found, Violation("exclude", str(word), f"no {word}"))
    if proposing and constraints.get("require"):
        body = "\n".join(sentences)
        concrete = _carries_terms(body)
        reader = Reader(body)
        for feature in constraints["require"]:
            spans = _mentions(body, feature_words(str(feature)))
            readings = [(s, e, reader.at(s, e)) for s, e in spans]
            if any(r.polarity not in NEGATIVE for _s, _e, r in readings):
                continue
            if readings:
                s, e, r = readings[0]
                start = min([s] + [c.start for c in r.cues])
                found.append(Violation("require", body[start:e], str(feature)))
            elif concrete:
                found.append(Violation("require_missing", "", str(feature)))
    return found


def proposes(text: str) -> bool:
    """Whether an agent reply puts something to the user: an offer, a go-ahead question ("确认为您
    办理吗？"), or a question asked about something carrying a price or measure ("58元/月，流量20G，
    您看可以办吗", "Lite | $25 | 4GB ... Do you want this one?")."""
    read = acts.agent_acts(text or "")
    if any(a.kind in ("offer", "confirm_request") for a in read):
        return True
    # a closing ("有问题随时找我", "anything else?") asks nothing about what was stated
    return any(a.asking and a.kind != "close" for a in read) and _carries_terms(text)


def _carries_terms(text: str) -> bool:
    """Whether a text states the terms of something: a price or a measure (GB, kg, km), not a
    count ("身份证后六位" is no offer)."""
    return any(
        q.kind == "money" or (q.kind == "measure" and q.dimension not in (None, "count"))
        for q in quantity.quantities(text or "")
    )


def asks_go_ahead(text: str) -> bool:
    """Whether the reply asks the user's yes to what it proposes (a confirmation request, or any
    question in a reply that proposes something)."""
    read = acts.agent_acts(text or "")
    return any(a.kind == "confirm_request" for a in read) or (
        proposes(text) and any(a.asking and a.kind != "close" for a in read)
    )


def _add(found: list[Violation], v: Violation) -> None:
    """Add a breach once (a price repeated in the offer and its confirmation is one breach)."""
    key = (v.constraint, v.found.replace(" ", ""), v.limit)
    if not any((f.constraint, f.found.replace(" ", ""), f.limit) == key for f in found):
        found.append(v)


def _key(limit: Limit) -> str:
    """The reject template key: legacy keys as before, a money limit max_price, else min / max."""
    if limit.dimension == "total_wan":
        return "max_total_price_wan"
    if limit.kind == "max" and limit.dimension == "money":
        return "max_price"
    if limit.kind == "max" and limit.dimension == "weight" and limit.text.endswith("kg"):
        return "max_weight_kg"
    return limit.kind


def _cue_words(key: str) -> list[str]:
    return [str(w).lower() for code in language_codes() for w in needs_resource(code).get(key) or []]


def _left_out(sentence: str, start: int, end: int) -> bool:
    """Whether an excluded word's mention says it is left out although lang.polarity reads it as
    neutral: a negation right before it ("无海鲜") or a restriction right after ("海鲜过敏",
    "gluten-free"); the words are needs.yaml's negated_before / restriction_after."""
    before, after = sentence[max(0, start - 6) : start].lower(), sentence[end : end + 12].lower()
    return any(w in before for w in _cue_words("negated_before")) or any(
        after.lstrip(" ").startswith(w.strip()) or after.startswith(w)
        for w in _cue_words("restriction_after")
    )
