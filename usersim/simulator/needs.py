"""Needs a user states in words, as constraints: "流量至少要10G" -> min data 10G, "每月不超过60元" /
"under $40" -> max price, "得能用国际漫游" / "needs roaming" -> require roaming. The cue words are
resource data (lang/data/<code>/needs.yaml); `merge` adds them to a goal's constraints."""

from __future__ import annotations

import re

from usersim.lang import quantity
from usersim.lang.resources import Memo
from usersim.simulator.constraints import CLAUSE, measure_dimensions, needs_resource

_NEEDS = Memo()


def stated_needs(text: str, language: str) -> dict:
    """The needs a user message states, as a constraints mapping: "流量至少要10G" -> min data 10G,
    "每月不超过60元" / "under $40" -> max price, "得能用国际漫游" / "needs roaming" -> require.
    Remembered per (text, language): the goal in force reads the opening message on every turn and
    in every judge; the caller gets its own copy."""
    memo = _NEEDS.table()
    held = memo.get((text, language))
    if held is None:
        held = memo[(text, language)] = _stated_needs(text, language)
    return {
        k: dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v for k, v in held.items()
    }


def _stated_needs(text: str, language: str) -> dict:
    cues = needs_resource(language)
    out: dict = {}
    for clause in CLAUSE.split(text or ""):
        low = clause.lower()
        qs = [q for q in quantity.quantities(clause) if q.kind != "number" or _priced(low[: q.start])]
        for q in qs:
            before, after = low[: q.start], low[q.end :].lstrip()
            for kind in ("min", "max"):
                words = cues.get(kind) or {}
                if any(_ends_with_cue(before, w) for w in words.get("before") or []) or any(
                    after.startswith(str(w).lower()) for w in words.get("after") or []
                ):
                    measure = "price" if q.kind in ("money", "number") else q.dimension or q.kind
                    written = q.text
                    if q.kind == "number":  # "预算3000以内": a bare number after a money word is money
                        written = str(cues.get("money_format") or "{value}").format(value=f"{q.value:g}")
                    out.setdefault(kind, {}).setdefault(measure, written)
                    break
        if qs:
            continue
        feature = _feature(clause, cues)
        if feature:
            out.setdefault("require", [])
            if feature not in out["require"]:
                out["require"].append(feature)
    return out


def _priced(before: str) -> bool:
    """Whether a money word (needs.yaml measures mapped to money: 预算, budget ...) names the
    bare number that follows in its clause."""
    dims = measure_dimensions()
    return any(word in before for word, dim in dims.items() if dim == "money")


def _ends_with_cue(before: str, word: object) -> bool:
    """Whether a comparator cue stands in the words right before a quantity (a few words between
    are fine: "流量至少要10G", "a budget of $40")."""
    w = str(word).lower()
    idx = before.rfind(w)
    if idx < 0 or (w.isascii() and idx > 0 and before[idx - 1].isalpha()):
        return False
    return len(before) - idx - len(w) <= (12 if w.isascii() else 4)


def _feature(clause: str, cues: dict) -> str | None:
    low = clause.lower()
    req = cues.get("require") or {}
    for cue in sorted((str(c).lower() for c in req.get("before") or []), key=len, reverse=True):
        m = re.search(rf"(?<![a-z]){re.escape(cue)}(?![a-z])" if cue.isascii() else re.escape(cue), low)
        if not m:
            continue
        rest = clause[m.end() :].strip(" \t:：*")
        if rest.isascii():
            rest = re.sub(r"^(an?|the|some)\s+", "", rest, flags=re.IGNORECASE)
        for t in sorted((str(t) for t in req.get("trim") or []), key=len, reverse=True):
            if rest.lower().endswith(t.lower()):
                rest = rest[: -len(t)].strip()
        limit = 4 if rest.isascii() else 10
        size = len(rest.split()) if rest.isascii() else len(rest)
        return rest if rest and size <= limit else None
    return None


def merge(base: dict, extra: dict) -> dict:
    """`base` with `extra`'s constraints added where base does not already set them."""
    out = dict(base)
    has_max_price = base.get("max_price") is not None
    for kind in ("min", "max"):
        if extra.get(kind):
            merged = dict(base.get(kind) or {})
            for measure, value in extra[kind].items():
                if kind == "max" and measure == "price" and has_max_price:
                    continue  # the goal's max_price already limits the price
                merged.setdefault(measure, value)
            out[kind] = merged
    for key in ("require", "exclude"):
        if extra.get(key):
            out[key] = list(base.get(key) or []) + [w for w in extra[key] if w not in (base.get(key) or [])]
    return out
