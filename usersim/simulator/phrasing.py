"""Turn the rule simulator's dialogue acts into words, shaped by the persona's traits.

Templates are the language layer's `phrasing` resource (usersim/lang/data/<code>/phrasing.yaml,
extended by a domain's own lang/ folder). An option is a string or {text, when: {trait: [levels]}}:
a line is only said by a persona whose traits fit it (a tech-savvy engineer never says "It's my
first time doing this"), and a filler line at most once a conversation. Every choice goes through
the caller's seeded RNG, so the same seed gives the same words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from usersim import lang
from usersim.personas.schema import Traits


@dataclass
class Act:
    """One dialogue act of the simulated user (ConvLab-style: inform, request, reject ...)."""

    kind: str  # opening|say|answer|volunteer|repeat|unknown|generic|continue|reject|change_fact|...
    slot: str | None = None
    value: str | None = None
    item: str | None = None
    found: str | None = None
    limit: str | None = None
    text: str | None = None
    hedged: bool = False
    label: str | None = None  # how the user names the fact (the persona's label, or an unknown topic)
    concept: str | None = None  # slots.tables().concepts entry of a fact (user_id, email, name ...)


def templates(language: str) -> dict[str, Any]:
    """The phrasing templates of one language (zh, en): the language layer's `phrasing` resource."""
    found = lang.resources(language).topic("phrasing")
    if not found:
        raise FileNotFoundError(
            f"no rule-simulator phrasing for language '{language}' (usersim/lang/data/{language}/phrasing.yaml)"
        )
    return found


def option_text(option: str | dict[str, Any]) -> str:
    """The words of one template option (a string, or {text, when})."""
    return option if isinstance(option, str) else str(option.get("text", ""))


def fits(option: str | dict[str, Any], traits: Traits) -> bool:
    """Whether a persona with these traits may say the option: every `when` trait is at a listed level."""
    if isinstance(option, str):
        return True
    for trait, levels in (option.get("when") or {}).items():
        allowed = levels if isinstance(levels, list) else [levels]
        if getattr(traits, trait, None) not in allowed:
            return False
    return True


def humanize(key: str) -> str:
    """A fact key as words: user_id -> user ID, zip_code -> zip code (never the raw key)."""
    words = re.sub(r"[_\-.]+", " ", key).strip().split()
    fixed = {"id": "ID", "dob": "date of birth", "pnr": "PNR", "sku": "SKU", "url": "URL"}
    return " ".join(fixed.get(w.lower(), w) for w in words) or key


def slot_label(language: str, slot: str) -> str:
    return templates(language)["slot_labels"].get(slot) or humanize(slot)


def fact_label(language: str, act: Act) -> str:
    """How the user names the fact of an act: its own label, a slot or concept label, or the key in words."""
    t = templates(language)
    if act.label:
        return act.label
    if act.slot in t["slot_labels"] and not (act.concept and act.slot != act.concept):
        return t["slot_labels"][act.slot]
    if act.concept:
        from usersim.simulator.slots import tables

        key = (act.slot or "").lower()
        if language != "en" or key in tables().concepts[act.concept][0] or key == act.concept:
            return t["concept_labels"].get(act.concept) or humanize(key)
    return humanize(act.slot or "")


def join_words(language: str, names: list[str]) -> str:
    """Several names as one phrase: "the repair ticket and the replacement laptop", "工单和备用机"."""
    t = templates(language)
    sep, last = t.get("list_sep", ", "), t.get("list_and", " and ")
    return names[0] if len(names) == 1 else sep.join(names[:-1]) + last + names[-1]


def item_label(language: str, item: str, labels: dict[str, str] | None = None) -> str | None:
    """How the user names a required item: the persona's own words (goal.labels), the language's
    label for a known item, or None (then the user restates the goal instead of saying a raw key)."""
    from usersim.simulator.signals import canonical_item

    if labels and labels.get(item):
        return labels[item]
    return templates(language)["item_labels"].get(canonical_item(item))


class _Picker:
    """Seeded template choice among the options the persona's traits allow, avoiding a variant
    already said in this message (and, for `once` lists, anywhere earlier in the conversation)."""

    def __init__(self, rng: random.Random, traits: Traits, earlier: Iterable[str] = ()) -> None:
        self.rng = rng
        self.traits = traits
        self.earlier = list(earlier)
        self.used: set[str] = set()

    def allowed(self, options: list[Any], *, once: bool = False) -> list[str]:
        texts = [option_text(o) for o in options if fits(o, self.traits)]
        if once:
            texts = [t for t in texts if not any(t in e for e in self.earlier)]
        return texts

    def __call__(self, options: list[Any]) -> str:
        allowed = self.allowed(options) or [option_text(o) for o in options if isinstance(o, str)]
        allowed = allowed or [option_text(o) for o in options]
        fresh = [o for o in allowed if o not in self.used] or allowed
        choice = fresh[self.rng.randrange(len(fresh))]
        self.used.add(choice)
        return choice


def _phrase(
    act: Act, t: dict[str, Any], language: str, pick: _Picker, terse: bool, labels: dict[str, str]
) -> str:
    builtin = act.slot in t["slot_labels"] and act.concept in (None, act.slot)
    if act.kind == "dont_know":
        label = act.label or ""
    else:
        label = fact_label(language, act) if act.slot else ""
    item = (item_label(language, act.item, labels) or "") if act.item else ""
    if act.kind == "silent":
        return ""
    if act.kind in ("opening", "say") or (act.text and act.kind != "reject"):
        return act.text or ""
    if act.kind == "answer":
        if terse:
            return act.value or ""
        if act.hedged:
            return pick(t["answer_hedged"]).format(value=act.value)
        if act.slot in t["answer"]:
            options = t["answer"][act.slot]
        elif act.concept in t["answer"]:
            options = t["answer"][act.concept]
        elif builtin:
            options = t["answer"]["default"]
        else:  # any other fact: "My user ID is anya_garcia_5901."
            options = t["answer_fact"]
        return pick(options).format(value=act.value, label=label)
    if act.kind == "volunteer" and not builtin:
        return pick(t["volunteer_fact"]).format(value=act.value, label=label)
    if act.kind == "reject":
        options = t["reject"].get(act.slot or "", t["reject"]["exclude"])
        return pick(options).format(found=act.found, limit=act.limit, label=act.label or "")
    if act.kind == "continue" and act.item and not item:  # no words for the item: say the goal
        return pick(t["continue_goal"]).format(goal=act.value or "")
    if act.kind == "continue" and terse:
        return f"{item}呢？" if language == "zh" else f"{item}?"
    # remaining kinds name their template list: volunteer, repeat, unknown, continue, goal_met, ...
    return pick(t[act.kind]).format(value=act.value, label=label, item=item, goal=act.value)


def _typos(text: str, language: str, rng: random.Random, t: dict[str, Any]) -> str:
    """Deterministic typos / non-native phrasing for typo_prone personas."""
    if language == "zh":
        present = [k for k in t.get("typos", {}) if k in text]
        for key in rng.sample(present, k=min(2, len(present))):
            text = text.replace(key, t["typos"][key], 1)
        return text
    # English learners: drop articles, swap two letters in one longer word
    text = re.sub(r"\b(the|a|an) ", "", text, count=2, flags=re.IGNORECASE)
    words = text.split(" ")
    long_idx = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if long_idx:
        i = long_idx[rng.randrange(len(long_idx))]
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def render(
    acts: list[Act],
    *,
    language: str,
    traits: Traits,
    rng: random.Random,
    earlier: Iterable[str] = (),
    labels: dict[str, str] | None = None,
) -> str:
    """One user message from the acts: terse personas list bare values, verbose ones add colour
    (a filler that fits their traits and that they have not said before: `earlier` are the user's
    previous messages). `labels`: the persona's words for its required items (goal.labels)."""
    t = templates(language)
    terse = traits.verbosity == "low"
    pick = _Picker(rng, traits, earlier)
    pieces = [p for p in (_phrase(a, t, language, pick, terse, labels or {}) for a in acts) if p]
    fillers = pick.allowed(t["fillers"], once=True)
    if (
        traits.verbosity == "high"
        and fillers
        and pieces
        and not any(a.kind in ("goal_met", "give_up") for a in acts)
    ):
        pieces.append(pick(fillers))
    if terse:
        text = t["joiner"].join(p.rstrip("。.") for p in pieces)
    else:
        end = t["end"]
        text = (" " if language == "en" else "").join(
            p if p[-1:] in "。！？!?.～…" else p + (question_mark(language) if act_is_question(p) else end)
            for p in pieces
        )
    text = re.sub(r"(吧|呢|啊)\1", r"\1", text)  # "8000 以内吧" + "{value}吧" -> one 吧
    if traits.typo_prone:  # typos never touch the facts themselves (ids, emails, names)
        values = sorted({a.value for a in acts if a.value and a.value in text}, key=len, reverse=True)
        for i, value in enumerate(values):
            text = text.replace(value, f"\x00{i}\x00")
        text = _typos(text, language, rng, t)
        for i, value in enumerate(values):
            text = text.replace(f"\x00{i}\x00", value)
    return text.strip()


def question_mark(language: str) -> str:
    return "？" if language == "zh" else "?"


def act_is_question(piece: str) -> bool:
    return piece.endswith(("吗", "呢")) or piece.lower().startswith(("what", "anything", "can you"))
