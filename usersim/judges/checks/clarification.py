"""asked_clarification: did the agent ask (enough, the right) questions before acting?

The questions are the language layer's asking acts (lang.acts: requests, confirmation requests,
clarifications; a closing such as "还有什么可以帮您？" asks nothing), each counted by its separately
asked parts. A reading the layer is not sure of (a question in a heading, one answered by the next
sentence, a bare question word such as 什么 standing in for a topic, a case word swallowed by a
longer phrase that means something else, "从哪出" inside "从哪出发") never makes a confident
verdict: when the verdict hangs on it the check says unjudged "uncertain: ...".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.core.registry import did_you_mean
from usersim.core.saferegex import case_regex
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.judges.checks.vacuity import Problems, matches_empty, never_fails, never_passes
from usersim.lang import concepts
from usersim.lang.acts import Act, questions
from usersim.lang.phrases import find

if TYPE_CHECKING:
    from usersim.cases.schema import Case

CONCEPT = "concept:"


def extract_questions(text: str) -> list[str]:
    """Distinct questions asked in a reply, in order (each separately asked part of a question once)."""
    return [q for q, _act in _parts(text)]


def _parts(text: str) -> list[tuple[str, Act]]:
    seen: set[str] = set()
    out: list[tuple[str, Act]] = []
    for act in questions(text):
        for part in act.parts or (() if act.kind == "request" else (act.text,)):
            part = part.strip().rstrip("?？；;。")
            key = re.sub(r"\W", "", part).casefold()
            if key and key not in seen:
                seen.add(key)
                out.append((part, act))
    return out


Groups = list[list[str]]


def _groups(v: list[list[str] | str]) -> Groups:
    groups = [[g] if isinstance(g, str) else list(g) for g in v]
    known = concepts.concept_names()
    for i, group in enumerate(groups):
        for w in group:
            if w.startswith("re:"):
                try:
                    case_regex(w[3:], True)  # UnsafePatternError (a ValueError) when pathological
                except re.error as exc:
                    raise ValueError(f"about.{i}: '{w}' is not a valid regex: {exc}") from None
            if w.startswith(CONCEPT) and w[len(CONCEPT) :] not in known:
                name = w[len(CONCEPT) :]
                raise ValueError(f"about.{i}: unknown concept '{name}'.{did_you_mean(name, set(known))}")
    return groups


class AskedClarificationParams(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too

    min_questions: int = Field(default=1, ge=0, description="At least this many distinct questions.")
    max_questions: int | None = Field(default=None, ge=0, description="At most this many (None = no limit).")
    before_tools: list[str] | None = Field(
        default=None,
        description="Questions must come before any of these tools is called (None = any time in the first turn).",
    )
    about: list[list[str] | str] = Field(
        default_factory=list,
        description="Topics; each must be asked in some question. A topic is a list of synonyms, where "
        "'re:PATTERN' is a regular expression and 'concept:NAME' a concept of the language layer's "
        "lexicon (acts.yaml `concepts`, e.g. concept:entry_city); a plain 'concept:NAME' is a topic too.",
    )
    not_about: list[list[str] | str] = Field(
        default_factory=list,
        description="Topics no question may ask about (same syntax as about), e.g. asking back a "
        "destination the conversation already gave: [concept:destination].",
    )

    @field_validator("about", "not_about")
    @classmethod
    def _valid(cls, v: list[list[str] | str]) -> Groups:
        return _groups(v)

    def case_problems(self, case: Case) -> Problems:
        """No question needed and none forbidden (min 0 alone), bounds no count meets, and a topic
        word found in every question (blank, or a regex matching the empty string)."""
        out: Problems = []
        if self.min_questions == 0 and self.max_questions is None and not self.about and not self.not_about:
            why = "min_questions 0 with no max_questions, about or not_about holds for any reply"
            fix = "Give min_questions >= 1, a max_questions (0 = no question allowed) or topics"
            out.append((("min_questions",), never_fails("asked_clarification", why, fix)))
        if self.max_questions is not None and self.min_questions > self.max_questions:
            why = f"min_questions {self.min_questions} is above max_questions {self.max_questions}"
            out.append((("min_questions",), never_passes("asked_clarification", why, "Fix the bounds")))
        for name in ("about", "not_about"):
            for i, group in enumerate(getattr(self, name)):
                for j, w in enumerate(group):
                    if not w.strip():
                        out.append(
                            ((name, i, j), "a blank topic word matches nothing; write the word or remove it")
                        )
                    elif w.startswith("re:") and matches_empty(w[3:]):
                        effect = (
                            "forbids every question" if name == "not_about" else "is found in every question"
                        )
                        out.append(
                            (
                                (name, i, j),
                                f"/{w[3:]}/ matches the empty string, so it {effect}; write what it must contain",
                            )
                        )
        return out


@dataclass
class _Hit:
    sure: bool
    cue: str
    why: str = ""


@dataclass
class _Reading:
    parts: list[tuple[str, Act]]
    hits: dict[int, _Hit] = field(default_factory=dict)


def _group_concepts(group: list[str]) -> set[str]:
    out = {w[len(CONCEPT) :] for w in group if w.startswith(CONCEPT)}
    plain = [w for w in group if not w.startswith(("re:", CONCEPT))]
    for w in plain:
        out |= {h.concept for h in concepts.concepts_in(w)}
    return out | set(concepts.field_concepts(plain))  # 飞入 names entry_city by its `fields`


def _hit(group: list[str], question: str, act: Act) -> _Hit | None:
    """How a question asks about a topic group: sure, unsure (with why), or not at all."""
    named = _group_concepts(group)
    best: _Hit | None = None
    for w in group:
        if w.startswith(CONCEPT):
            h = concepts.names(question, w[len(CONCEPT) :])
            if h:
                return _Hit(True, h.cue.describe())
            continue
        if w.startswith("re:"):
            m = case_regex(w[3:], True).search(question)
        else:
            i = question.casefold().find(w.casefold())
            m = None if i < 0 else (i, i + len(w))
        if m is None:
            continue
        a, b = (m.start(), m.end()) if isinstance(m, re.Match) else m
        cue = f'case word "{question[a:b]}"'
        over = concepts.shadowed(question, a, b)
        if over and over.concept not in named:
            best = best or _Hit(False, cue, f"“{question[a:b]}” is part of {over.cue.describe()}")
            continue
        bare = find(question[a:b], "acts", "question_words")
        if bare and bare.text == question[a:b] and act.kind != "clarify" and not over:
            best = best or _Hit(False, cue, f"“{question[a:b]}” is only a question word")
            continue
        if not act.sure:
            best = best or _Hit(False, cue, f"“{question}” may not be a question to the user")
            continue
        return _Hit(True, cue)
    return best


def _shown(group: list[str]) -> list[str]:
    return [w for w in group if not w.startswith("re:")][:3] or group[:1]


def _topics(groups: Groups, parts: list[tuple[str, Act]]) -> list[tuple[list[str], _Hit | None]]:
    """Each topic group with its best hit: looked up in the whole question a part belongs to
    ("曼谷进、普吉岛出？" asks entry and exit together)."""
    acts = list({id(act): act for _q, act in parts}.values())
    out = []
    for g in groups:
        hits = [h for act in acts if (h := _hit(g, act.text, act))]
        out.append((g, next((h for h in hits if h.sure), hits[0] if hits else None)))
    return out


def _first_turn(
    params: AskedClarificationParams, ctx: CheckContext
) -> tuple[list[tuple[int, str]], str | None]:
    first_user_seen = False
    texts: list[tuple[int, str]] = []
    for i, m in ctx.live():
        if m.role == "user":
            if first_user_seen and texts:
                break  # the first live turn ends at the next user message that follows a reply
            first_user_seen = True
            continue
        if m.role != "assistant":
            continue
        called = [tc.name for tc in m.tool_calls if params.before_tools and tc.name in params.before_tools]
        if called:
            return texts, called[0]
        if m.content.strip():
            texts.append((i, m.content))
    return texts, None


@check_registry.register("asked_clarification", AskedClarificationParams)
def asked_clarification(params: AskedClarificationParams, ctx: CheckContext) -> Outcome:
    """The first live assistant turn asks enough distinct questions (about the listed topics) before acting."""
    texts, blocked_by = _first_turn(params, ctx)
    parts = [p for _, t in texts for p in _parts(t)]
    sure = [q for q, act in parts if act.sure]
    n, n_sure = len(parts), len(sure)
    evidence = texts[0][0] if texts else None
    shown = "; ".join(f"“{q}”" for q, _a in parts[:8]) + (" …" if n > 8 else "")
    found = f"{n} distinct question(s)" + (f": {shown}" if n else "")
    tool_note = f" before {blocked_by} was called" if blocked_by else ""
    problems: list[str] = []
    doubts: list[str] = []
    cues = list(dict.fromkeys(c.describe() for _q, act in parts for c in act.cues[:2]))
    if n < params.min_questions:
        problems.append(f"needed at least {params.min_questions}")
    elif n_sure < params.min_questions:
        doubts.append(f"only {n_sure} of them surely asked of the user (needed {params.min_questions})")
    if params.max_questions is not None and n_sure > params.max_questions:
        problems.append(f"more than the maximum {params.max_questions}")
    elif params.max_questions is not None and n > params.max_questions:
        doubts.append(f"{n} if every possible question counts (maximum {params.max_questions})")
    topics = _topics(params.about, parts)
    missing = [g for g, h in topics if h is None]
    unsure_topics = [(g, h) for g, h in topics if h is not None and not h.sure]
    asked_groups = [g for g, h in topics if h is not None and h.sure]
    cues += [h.cue for _g, h in topics if h is not None]
    if missing:
        problems.append("did not ask about " + ", ".join("/".join(_shown(g)) for g in missing))
    for g, h in unsure_topics:
        doubts.append(f"{'/'.join(_shown(g))} only unsurely asked: {h.why}")
    for g, h in _topics(params.not_about, parts):
        if h is None:
            continue
        cues.append(h.cue)
        if h.sure:
            problems.append(f"asked about {'/'.join(_shown(g))}, which it must not ask")
        else:
            doubts.append(f"may have asked about {'/'.join(_shown(g))}: {h.why}")
    about_note = ""
    if asked_groups:
        about_note = "; asked about " + ", ".join("/".join(_shown(g)) for g in asked_groups)
    if blocked_by and n < max(params.min_questions, 1):
        problems.insert(0, f"{blocked_by} was called before asking")
    cues = cues[:6]
    if problems:
        return Outcome(
            False,
            f"first turn asked {found}{tool_note} — {'; '.join(problems)}{about_note}",
            evidence_turn=evidence,
            cues=cues,
        )
    if doubts:
        return Outcome.unsure(
            f"first turn asked {found}{tool_note} — {'; '.join(doubts)}{about_note}",
            evidence_turn=evidence,
            cues=cues,
        )
    return Outcome(
        True, f"first turn asked {found}{tool_note}{about_note}", evidence_turn=evidence, cues=cues
    )
