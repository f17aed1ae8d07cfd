"""Grounding an agent's question in what the user knows, by meaning (through lang.concepts).

"What's your staff ID?" names the concept `id`; a persona fact `employee_id` means `id` (its key's
words are a concept's `fields`), so the fact answers it. A fact whose key names nothing still
means a concept through the shape of its value (an `E-2041` is an id, `+1 415 555 0142` a phone:
the concepts' `values` in acts.yaml). Of several concepts in one question only the asked ones
count: "Where should we deliver the replacement laptop?" asks for the address, the laptop is
what is delivered; "your name, email and phone" asks for three (joined by list words).

Also here: open questions ("Anything else?", "还有什么需要吗？": `open_questions`) and recall of
what the user already said ("流量有什么要求？" after the opening "流量至少要10G").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from usersim.lang import dates, quantity
from usersim.lang.concepts import ConceptHit, concepts_in, field_concepts
from usersim.lang.phrases import codes_for, find
from usersim.lang.resources import Memo, language_codes, resources


def value_concepts(value: str) -> list[str]:
    """The concepts a fact's value looks like (`values` patterns of acts.yaml concepts)."""
    from usersim.lang.phrases import compiled

    out: list[str] = []
    text = (value or "").strip()
    for code in language_codes():
        for concept, spec in (resources(code).get("acts", "concepts", {}) or {}).items():
            shapes = (
                tuple(str(v) for v in (spec or {}).get("values", ()) or ()) if isinstance(spec, dict) else ()
            )
            pat = compiled(shapes) if shapes else None
            if pat is not None and pat.search(text) and concept not in out:
                out.append(concept)
    return out


def _quantity_kinds() -> dict[str, set[str]]:
    """concept -> the quantity kinds or dimensions that state it (acts.yaml concepts' `quantities`:
    duration -> duration, budget -> money, party_size -> count; `date` for a date of lang.dates)."""
    out: dict[str, set[str]] = {}
    for code in language_codes():
        for concept, spec in (resources(code).get("acts", "concepts", {}) or {}).items():
            if isinstance(spec, dict) and spec.get("quantities"):
                out.setdefault(str(concept), set()).update(str(k) for k in spec["quantities"])
    return out


def quantity_concepts(clause: str, wanted: set[str]) -> set[str]:
    """The concepts among `wanted` whose value type a clause holds: a duration ("玩5天", "for 5
    days"), money ("预算3000元"), a head count ("我们两个人"), a date ("下周五")."""
    kinds = {c: k for c, k in _quantity_kinds().items() if c in wanted}
    if not kinds:
        return set()
    found = {q.kind for q in quantity.quantities(clause)} | {
        q.dimension for q in quantity.quantities(clause) if q.dimension
    }
    if any("date" in k for k in kinds.values()) and dates.find_dates(clause, date(2000, 1, 1)):
        found.add("date")
    return {c for c, k in kinds.items() if k & found}


def _plain(text: str) -> str:
    """ "the laptop's serial number" -> "the laptop serial number" (a possessive is not a word)."""
    return re.sub(r"['’]s\b", "", text or "")


_FACTS = Memo()


def fact_concepts(key: str, texts: Sequence[str], value: str | None = None) -> set[str]:
    """The concepts a fact means: by its key/label/aliases/description words and its value's shape.
    Remembered per fact: every conversation of a persona (and its fidelity judges) reads the same
    facts again."""
    memo, mkey = _FACTS.table(), (key, tuple(texts), value)
    found = memo.get(mkey)
    if found is None:
        found = memo[mkey] = frozenset(field_concepts([_plain(t) for t in (key, *texts)])) | frozenset(
            value_concepts(value or "")
        )
    return set(found)


def asked_hits(sentence: str) -> tuple[list[ConceptHit], list[ConceptHit]]:
    """(the concepts a question asks for, the concepts it only mentions). The first concept named is
    asked; a later one is asked too only when a list word joins it to the one before ("name, email
    and phone"), otherwise it is a modifier ("deliver the replacement laptop")."""
    hits = concepts_in(sentence)
    if not hits:
        return [], []
    codes = codes_for(sentence)
    asked, other = [hits[0]], []
    for prev, h in zip(hits, hits[1:], strict=False):
        between = sentence[prev.cue.end : h.cue.start]
        if prev in asked and between.strip() in _links():  # "电脑的序列号": the 序列号 is asked
            asked.remove(prev)
            other.append(prev)
            asked.append(h)
            continue
        joined = not between.strip(" ") or find(between, "acts", "list_joiners", codes) is not None
        (asked if joined and prev in asked else other).append(h)
    return asked, other


def blank_spans(sentence: str, hits: Sequence[ConceptHit]) -> str:
    """The sentence with the spans of `hits` blanked (so nothing matches inside a modifier)."""
    chars = list(sentence)
    for h in hits:
        for i in range(h.cue.start, min(h.cue.end, len(chars))):
            chars[i] = " "
    return "".join(chars)


def open_question(sentence: str) -> bool:
    """Whether a sentence asks what else the user wants ("Anything else?", "您还有什么要求？")."""
    return find(sentence, "acts", "open_questions", codes_for(sentence)) is not None


_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_LATIN = re.compile(r"[a-z][a-z0-9]+|\d+[a-z]*")
_CLAUSES = re.compile(r"(?:[，。;；!！?？\n]|,(?!\d{3})|\.(?!\d))+")  # never inside 1,000 or 2.5


def _links() -> set[str]:
    return {str(w) for code in language_codes() for w in resources(code).get("acts", "modifier_links", ())}


def _stops() -> set[str]:
    return {str(w) for code in language_codes() for w in resources(code).get("acts", "recall_stop", ())}


def tokens(text: str) -> set[str]:
    """Content tokens of a text (Chinese character pairs, Latin word stems), minus recall_stop."""
    return _tokens(text, _stops())


def _tokens(text: str, stops: set[str]) -> set[str]:
    """Content tokens: Chinese character pairs, Latin words of 4+ letters cut to 5 (a crude stem)."""
    out: set[str] = set()
    for run in _CJK_RUN.findall(text):
        out |= {run[i : i + 2] for i in range(len(run) - 1)}
    for w in _LATIN.findall(text.lower()):
        if len(w) >= 4 and w not in stops:
            out.add(w[:5])
    return out - stops


def recall(sentence: str, said: Sequence[str]) -> str | None:
    """The clause of the user's own earlier messages that the question is about, or None: the clause
    sharing most content tokens with it (ties: the latest said)."""
    stops = _stops()
    want = _tokens(sentence, stops)
    asked = {h.concept for h in concepts_in(sentence)}
    if not want and not asked:
        return None
    best: tuple[int, int, str] | None = None
    order = 0
    for message in said:
        for clause in _CLAUSES.split(message or ""):
            clause = clause.strip()
            order += 1
            shared = len(want & _tokens(clause, stops))
            if asked and clause:  # "月费能接受多少" asks the budget; "每月不超过50元" states one
                named = {h.concept for h in concepts_in(clause)} | set(value_concepts(clause))
                named |= quantity_concepts(clause, asked)  # "玩5天" answers "玩几天" / "How long"
                shared += 2 * len(asked & named)
            if clause and shared and (best is None or (shared, order) >= best[:2]):
                best = (shared, order, clause)
    return best[2] if best else None
