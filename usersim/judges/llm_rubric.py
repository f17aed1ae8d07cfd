"""The LLM rubric judge: one verdict per criterion (pass / fail / inconclusive), plus seed 004's
C1 0-5 skill rubric (informational) for skill-compliance cases.

Every answer is a list of per-criterion objects in the order evidence (turn numbers and short
quotes) -> reasoning -> verdict. Cited turns must exist and every quote must occur in the
transcript (whitespace normalised, an elided "A … B" found piece by piece); a false quote, or a
missing, extra or duplicated criterion id, is repaired once and then becomes an `error` verdict
(never last-wins). Criteria carry their
polarity: a requirement passes when it holds, a failure event passes when it did NOT happen.

`samples` (--judge-samples K) asks each judge model K times per criterion (each sample its own
cache key); with several judge models (an ensemble) all votes are pooled. The verdict is the
strict majority of the votes, else `inconclusive`; the agreement is kept in the verdict's details.

The transcript is rendered within the judge model's context (`openai:MODEL?context=16k`); what had
to be shortened is marked in the prompt and reported in the verdict's details.

Without a judge model every criterion is `unjudged` — a criterion that needs an LLM is never
passed by default.
"""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from usersim.cases.schema import Case, Criterion
from usersim.core.events import Usage
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.llm import (
    Complete,
    JudgeModelError,
    JudgeSpec,
    ModelComplete,
    ask_structured,
    judge_specs,
    parse_judge_spec,
    prompt,
)
from usersim.judges.render import Rendered, render_for_judge, render_in_full
from usersim.sandbox.skills.loader import SKILLS_DIR

NO_MODEL = "needs an LLM judge; none configured (pass --judge-model openai:MODEL)"
C1_CRITERION = "C1 skill rubric (seed 004): trigger 0-1, process 0-2, constraints 0-1, output contract 0-1, anti-pattern 0/-1"
# Seed 004 defines the five dimensions and a 0-5 total but no pass line: the score is reported
# (informational) and the case's own Pass/Fail criteria decide the case.
C1_DIMENSIONS: dict[str, tuple[int, int]] = {
    "trigger": (0, 1),
    "process": (0, 2),
    "constraints": (0, 1),
    "output_contract": (0, 1),
    "anti_pattern": (-1, 0),
}
PROMPT_MARGIN = 0.04  # share of the context kept free for tokenizer differences between models


class Evidence(BaseModel):
    """One piece of evidence: a transcript index and a short quote from that message."""

    model_config = ConfigDict(extra="ignore")

    turn: int = Field(description="Transcript index (the number in brackets).")
    quote: str = Field(default="", description="A short quote from that message.")


class CriterionResult(BaseModel):
    """One criterion as the judge model answers it (extra keys ignored: models add them)."""

    model_config = ConfigDict(extra="ignore")

    criterion_id: int = Field(description="1-based id of the criterion in the prompt.")
    evidence: list[Evidence] = Field(default_factory=list, description="Turns and quotes, first.")
    reasoning: str = Field(
        min_length=1,
        validation_alias=AliasChoices("reasoning", "reason"),
        description="Why the evidence decides it, second.",
    )
    verdict: Literal["pass", "fail", "inconclusive"] = Field(description="The decision, last.")


class RubricOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[CriterionResult] = Field(description="One result per criterion.")


class C1Item(BaseModel):
    """One dimension of seed 004's 0-5 rubric."""

    model_config = ConfigDict(extra="ignore")

    criterion_id: str = Field(description="trigger / process / constraints / output_contract / anti_pattern.")
    evidence: list[Evidence] = Field(default_factory=list, description="Turns and quotes, first.")
    reasoning: str = Field(
        min_length=1, validation_alias=AliasChoices("reasoning", "reason"), description="Why, second."
    )
    score: int = Field(description="The dimension's score, last.")


class C1Output(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[C1Item] = Field(description="One item per dimension.")


def judged_criteria(case: Case) -> list[Criterion]:
    """The criteria judged, with polarity: the case's rubric; else its pass criteria (or expected
    behaviour) as requirements plus its fail criteria as failure events."""
    if case.judging.rubric:
        return list(case.judging.rubric)
    reqs = case.judging.pass_criteria or case.judging.expected_behavior
    return [Criterion(text=t) for t in reqs] + [
        Criterion(text=t, polarity="failure") for t in case.judging.fail_criteria
    ]


def rubric_criteria(case: Case) -> list[str]:
    """The texts of `judged_criteria` (what verdicts name as their criterion)."""
    return [c.text for c in judged_criteria(case)]


def uses_c1_rubric(case: Case, state: JudgeState) -> bool:
    """Skill-compliance (C1) cases with skills on (not a Group A skills-off run)."""
    skills_on = (
        case.skills.skill_enabled and bool(case.skills.active_skills) and state.variant.get("group") != "A"
    )
    return case.dimension.upper() == "C1" and skills_on


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {x}" for x in items) or "- (none given)"


def _skill_text(name: str) -> str:
    """The SKILL.md the agent was given (found by folder or frontmatter name under sandbox/skills)."""
    for path in sorted(SKILLS_DIR.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        front = re.search(r"^---\s*\n(.*?)\n---", text, re.DOTALL)
        declared = re.search(r"^name:\s*(\S+)", front.group(1), re.MULTILINE) if front else None
        if path.parent.name == name or path.stem == name or (declared and declared.group(1) == name):
            return text
    return f"(skill {name}: specification not available)"


def _context(case: Case) -> str:
    ctx = case.context
    parts = [f"current date {ctx.current_date}" if ctx.current_date else ""]
    parts += [f"memory: {m}" for m in ctx.memory]
    parts += [f"image: {img.caption}" for img in ctx.images]
    return "; ".join(p for p in parts if p) or "none"


def _criteria_list(criteria: list[Criterion]) -> str:
    lines = []
    for i, c in enumerate(criteria, 1):
        if c.polarity == "failure":
            tag = "[FAILURE EVENT — must NOT happen: verdict pass if it did not happen, fail if it happened]"
        else:
            tag = "[REQUIREMENT — must hold: verdict pass if it holds, fail if it does not]"
        lines.append(f"{i}. {tag} {c.text}")
    return "\n".join(lines)


def _norm(text: str) -> str:
    return re.sub(r"[\s\"'“”‘’「」`*]+", "", text).lower()


def _evidence(items: list[Evidence], transcript: list[Message]) -> list[dict[str, Any]]:
    """Evidence for the details, each with whether its quote was found in the cited message."""
    out = []
    for e in items:
        m = transcript[e.turn] if 0 <= e.turn < len(transcript) else None
        text = (m.content + " " + " ".join(str(tc.arguments) for tc in m.tool_calls)) if m else ""
        found = bool(e.quote) and _norm(e.quote[:80]) in _norm(text)
        out.append({"turn": e.turn, "quote": e.quote[:200], "quote_found": found})
    return out


_QUOTE_MARKS = "\"'“”‘’「」『』`*"
_ELLIPSIS = re.compile(r"\.{3,}|…+")


def _squash(text: str) -> str:
    """Text with whitespace normalised away (NFKC, no whitespace): how quotes are looked up."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def transcript_corpus(transcript: list[Message]) -> str:
    """Everything a judge can quote: message texts, tool call names and arguments, squashed."""
    parts = []
    for m in transcript:
        parts.append(m.content)
        parts += [f"{tc.name} {json.dumps(tc.arguments, ensure_ascii=False)}" for tc in m.tool_calls]
        parts += [f"{k}: {v}" for tc in m.tool_calls for k, v in tc.arguments.items()]
    return _squash("\n".join(parts))


def quote_found(quote: str, corpus: str) -> bool:
    """Whether a judge's quote occurs in the transcript corpus: whitespace-insensitive, outer
    quotation marks dropped, and the pieces of an elided quote ("A … B") found in order."""
    pieces = [_squash(p).strip(_QUOTE_MARKS) for p in _ELLIPSIS.split(quote.strip().strip(_QUOTE_MARKS))]
    pos = 0
    for piece in (p for p in pieces if p):
        at = corpus.find(piece, pos)
        if at < 0:
            return False
        pos = at + len(piece)
    return True


def _false_quotes(results: list[Any], corpus: str | None) -> dict[Any, list[str]]:
    """criterion id -> its evidence quotes that do not occur in the transcript."""
    if corpus is None:
        return {}
    bad: dict[Any, list[str]] = {}
    for r in results:
        wrong = [e.quote for e in r.evidence if e.quote.strip() and not quote_found(e.quote, corpus)]
        if wrong:
            bad[r.criterion_id] = wrong
    return bad


def _quotes_text(quotes: list[str]) -> str:
    return ", ".join(repr(q[:120]) for q in quotes)


def _id_problems(ids: list[Any], expected: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """(missing, duplicated, extra) criterion ids of an answer."""
    counts = Counter(ids)
    missing = [i for i in expected if counts[i] == 0]
    duplicated = [i for i in expected if counts[i] > 1]
    extra = sorted({i for i in ids if i not in expected}, key=str)
    return missing, duplicated, extra


def _bad_turns(results: list[Any], n_messages: int) -> dict[Any, list[int]]:
    bad: dict[Any, list[int]] = {}
    for r in results:
        wrong = [e.turn for e in r.evidence if not 0 <= e.turn < n_messages]
        if wrong:
            bad[r.criterion_id] = wrong
    return bad


def _gaps(results: list[Any], expected: list[Any], n_messages: int, corpus: str | None = None) -> str | None:
    """The problems a repair is asked for (None when the answer is complete and consistent)."""
    missing, duplicated, extra = _id_problems([r.criterion_id for r in results], expected)
    bad = _bad_turns(results, n_messages)
    false_quotes = _false_quotes(results, corpus)
    parts = []
    if missing:
        parts.append(f"results missing for criterion id(s) {missing}")
    if duplicated:
        parts.append(f"criterion id(s) {duplicated} answered more than once — give exactly one result each")
    if extra:
        parts.append(f"criterion id(s) {extra} do not exist")
    if bad:
        parts.append(
            "evidence cites turns that do not exist in the transcript (valid: 0.."
            f"{n_messages - 1}): " + "; ".join(f"criterion {k}: {v}" for k, v in bad.items())
        )
    if false_quotes:
        parts.append(
            "evidence quote not found in transcript (quote the messages word for word, or leave the "
            "quote empty): " + "; ".join(f"criterion {k}: {_quotes_text(v)}" for k, v in false_quotes.items())
        )
    return "; ".join(parts) or None


class Vote(BaseModel):
    """One sample's answer on one criterion."""

    model_config = ConfigDict(extra="forbid")

    model: str
    sample: int
    verdict: Literal["pass", "fail", "inconclusive", "error"]
    reasoning: str
    evidence: list[Evidence] = Field(default_factory=list)
    score: int | None = None  # C1: the 0-5 total
    scores: dict[str, int] | None = None  # C1: per dimension


def tally(votes: list[Vote], key: Callable[[Vote], Any] = lambda v: v.verdict) -> tuple[Any, float, dict]:
    """(strict-majority value or None, agreement of the most common value, counts)."""
    counts = Counter(key(v) for v in votes)
    if not counts:
        return None, 0.0, {}
    top, n = counts.most_common(1)[0]
    agreement = round(n / len(votes), 4)
    return (top if n * 2 > len(votes) else None), agreement, {str(k): c for k, c in counts.items()}


class LLMRubricJudge:
    """Judges rubric criteria with one or more models, K samples each; `complete` is injectable
    for tests (then it answers every model and sample)."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "llm_rubric"

    def __init__(
        self,
        judge_model: str | None,
        complete: Complete | None = None,
        *,
        samples: int = 1,
        informational: bool = False,
    ) -> None:
        self.judge_model = judge_model
        self.models = judge_specs(judge_model)
        self.specs: dict[str, JudgeSpec] = {m: parse_judge_spec(m) for m in self.models}
        self.samples = max(1, samples)
        self.informational = informational
        self._injected = complete
        self._completes: dict[tuple[str, int], Complete] = {}

    def complete_for(self, model: str, sample: int) -> Complete:
        if self._injected is not None:
            return self._injected
        key = (model, sample)
        if key not in self._completes:
            self._completes[key] = ModelComplete(model, sample=sample, samples=self.samples)
        return self._completes[key]

    @property
    def usage(self) -> Usage | None:
        """Judge-model tokens spent by this judge (None with an injected `complete`)."""
        if self._injected is not None:
            return getattr(self._injected, "usage", None)
        total = Usage()
        for c in self._completes.values():
            total = total.add(c.usage)  # type: ignore[attr-defined]
        return total

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        criteria = judged_criteria(case)
        c1 = uses_c1_rubric(case, state) and not self.informational
        if not self.models:
            items = [c.text for c in criteria] + ([C1_CRITERION] if c1 else [])
            verdicts = [
                Verdict(judge=self.name, verdict="unjudged", reason=NO_MODEL, criterion=c) for c in items
            ]
            return self._finish(verdicts)
        jobs = [self._criteria(criteria, transcript, case, state)] if criteria else []
        if c1:
            jobs.append(self._c1(transcript, case, state))
        groups = await asyncio.gather(*jobs)  # independent prompts: ask in parallel
        return self._finish([v for g in groups for v in g])

    async def judge_criteria(
        self, criteria: list[Criterion], *, transcript: list[Message], case: Case, state: JudgeState
    ) -> list[Verdict]:
        """Judge the given criteria (not the case's own) in one prompt: used to escalate rule checks
        whose reading was uncertain. Without a model every criterion is `unjudged`."""
        if not self.models:
            return [
                Verdict(judge=self.name, verdict="unjudged", reason=NO_MODEL, criterion=c.text)
                for c in criteria
            ]
        return await self._criteria(criteria, transcript, case, state)

    def _finish(self, verdicts: list[Verdict]) -> list[Verdict]:
        if not self.informational:
            return verdicts
        return [
            v.model_copy(
                update={
                    "counts_toward_status": False,
                    "details": {**(v.details or {}), "recheck": True},
                    "reason": "rule-to-LLM re-check (seed 003, informational): " + v.reason,
                }
            )
            for v in verdicts
        ]

    # --- prompts within the budget ----------------------------------------------------------
    def _fit(
        self, model: str, build: Callable[[str, str], str], transcript: list[Message], state: JudgeState
    ):
        """The prompt for `model` with the transcript rendered within what its context leaves."""
        from usersim.cases.tokens import text_tokens

        spec = self.specs[model]
        room = int(spec.context * (1 - PROMPT_MARGIN)) - spec.answer_reserve
        whole = render_in_full(transcript, state.history_len, room=room, build=build)
        if whole is not None:  # fits by its bytes: nothing to count
            return whole
        # the prompt without the transcript, with the shortening notice at its longest: the same text
        # for every conversation of a case, so its count is remembered
        overhead = text_tokens(build("", "NOTE: " + "x " * 250))
        budget = room - overhead
        rendered = render_for_judge(transcript, state.history_len, budget=max(256, budget))
        return build(rendered.text, rendered.notice()), rendered

    async def _ask_all(
        self, build: Callable[[str, str], str], transcript: list[Message], state: JudgeState, run_one
    ) -> tuple[list[list[Vote]], dict[str, Rendered]]:
        """run_one(model, sample, text) -> list[Vote] per criterion, for every model and sample."""
        prompts = {m: self._fit(m, build, transcript, state) for m in self.models}
        jobs = [run_one(m, s, prompts[m][0]) for m in self.models for s in range(self.samples)]
        answers = await asyncio.gather(*jobs)
        return list(answers), {m: prompts[m][1] for m in self.models}

    # --- the case's criteria ----------------------------------------------------------------
    async def _criteria(
        self, criteria: list[Criterion], transcript: list[Message], case: Case, state: JudgeState
    ) -> list[Verdict]:
        skills = ""
        if case.skills.skill_enabled and case.skills.active_skills:
            skills = "Skills available to the assistant: " + ", ".join(case.skills.active_skills)
        guidance = case.judging.fail_criteria if case.judging.rubric else []

        def build(rendered: str, notice: str) -> str:
            return prompt(
                "rubric",
                title=f"{case.id} · {case.title}",
                context=_context(case),
                expected=_bullets(case.judging.expected_behavior),
                fail_conditions=_bullets(guidance),
                skills=skills,
                transcript=rendered,
                notice=notice,
                criteria=_criteria_list(criteria),
            )

        expected = list(range(1, len(criteria) + 1))
        n_msgs = len(transcript)
        corpus = transcript_corpus(transcript)

        async def run_one(model: str, sample: int, text: str) -> list[Vote]:
            def err(reason: str) -> Vote:
                return Vote(model=model, sample=sample, verdict="error", reasoning=reason)

            try:
                out = await ask_structured(
                    self.complete_for(model, sample),
                    [{"role": "user", "content": text}],
                    RubricOutput,  # type: ignore[arg-type]
                    judge_model=model,
                    check=lambda o: _gaps(o.results, expected, n_msgs, corpus),
                )
            except JudgeModelError as exc:
                return [err(str(exc)) for _ in criteria]
            missing, duplicated, extra = _id_problems([r.criterion_id for r in out.results], expected)
            if extra:
                return [
                    err(
                        f"judge model {model} answered criterion id(s) {extra} that do not exist, after repair"
                    )
                    for _ in criteria
                ]
            bad = _bad_turns(out.results, n_msgs)
            false_quotes = _false_quotes(out.results, corpus)
            by_id = {r.criterion_id: r for r in out.results}
            votes = []
            for i in expected:
                if i in missing:
                    votes.append(err(f"judge model {model} gave no verdict for this criterion after repair"))
                elif i in duplicated:
                    given = [r.verdict for r in out.results if r.criterion_id == i]
                    votes.append(
                        err(
                            f"judge model {model} answered this criterion {len(given)} times ({', '.join(given)}) after repair; no answer is taken"
                        )
                    )
                elif i in bad:
                    votes.append(
                        err(
                            f"judge model {model} cites turn(s) {bad[i]} that do not exist (transcript has {n_msgs} messages), after repair"
                        )
                    )
                elif i in false_quotes:
                    votes.append(
                        err(
                            f"evidence quote not found in transcript: {_quotes_text(false_quotes[i])} "
                            f"(judge model {model}, after repair)"
                        )
                    )
                else:
                    r = by_id[i]
                    votes.append(
                        Vote(
                            model=model,
                            sample=sample,
                            verdict=r.verdict,
                            reasoning=r.reasoning,
                            evidence=r.evidence,
                        )
                    )
            return votes

        answers, rendered = await self._ask_all(build, transcript, state, run_one)
        verdicts = []
        for k, c in enumerate(criteria):
            votes = [a[k] for a in answers]
            verdicts.append(self._combine(votes, c.text, transcript, rendered, polarity=c.polarity))
        return verdicts

    def _combine(
        self,
        votes: list[Vote],
        criterion: str,
        transcript: list[Message],
        rendered: dict[str, Rendered],
        *,
        polarity: str | None = None,
        key: Callable[[Vote], Any] = lambda v: v.verdict,
    ) -> Verdict:
        majority, agreement, counts = tally(votes, key)
        if majority is None:
            verdict = "inconclusive"
            chosen = votes[0]
        else:
            chosen = next(v for v in votes if key(v) == majority)
            verdict = chosen.verdict
        per_model = {}
        for m in self.models:
            mv = [v for v in votes if v.model == m]
            m_major, m_agree, m_counts = tally(mv, key)
            per_model[m] = {"majority": m_major, "agreement": m_agree, "votes": m_counts}
        n = len(votes)
        reason = chosen.reasoning
        if majority is None:
            reason = f"no majority among {n} judge votes ({_counts_text(counts)}); e.g.: {chosen.reasoning}"
        elif n > 1:
            reason = f"{reason} [judge votes: {_counts_text(counts)}; agreement {counts[str(majority)]}/{n}]"
        one = next(iter(rendered.values())) if rendered else None
        left_out = max((r.left_out for r in rendered.values()), default=0)
        if left_out:
            full = max(r.full_tokens or 0 for r in rendered.values())
            reason += f" (judged on a shortened transcript: ~{left_out} of {full} tokens left out)"
        details: dict[str, Any] = {
            "evidence": _evidence(chosen.evidence, transcript),
            "samples": self.samples,
            "models": list(self.models),
            "votes": counts,
            "agreement": agreement,
            "per_model": per_model,
        }
        if polarity:
            details["polarity"] = polarity
        if one is not None:
            details["transcript"] = (
                one.summary() if len(rendered) == 1 else {m: r.summary() for m, r in rendered.items()}
            )
        return Verdict(
            judge=self.name,
            verdict=verdict,
            reason=reason,
            criterion=criterion,
            evidence_turn=chosen.evidence[0].turn if chosen.evidence and majority is not None else None,
            details=details,
        )

    # --- seed 004's 0-5 rubric (informational) ----------------------------------------------
    async def _c1(self, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        task = case.input.message or next((m.content for m in transcript if m.role == "user"), "")
        skills = "\n\n".join(_skill_text(s) for s in case.skills.active_skills)

        def build(rendered: str, notice: str) -> str:
            return prompt(
                "c1_rubric",
                skills=skills,
                task=task,
                expected=_bullets(case.judging.expected_behavior),
                transcript=rendered,
                notice=notice,
            )

        dims = list(C1_DIMENSIONS)
        n_msgs = len(transcript)
        corpus = transcript_corpus(transcript)

        def gaps(out: C1Output) -> str | None:
            problem = _gaps(out.results, dims, n_msgs, corpus)
            wrong = [
                f"{r.criterion_id}={r.score} (allowed {C1_DIMENSIONS[r.criterion_id][0]}..{C1_DIMENSIONS[r.criterion_id][1]})"
                for r in out.results
                if r.criterion_id in C1_DIMENSIONS
                and not C1_DIMENSIONS[r.criterion_id][0] <= r.score <= C1_DIMENSIONS[r.criterion_id][1]
            ]
            if wrong:
                problem = "; ".join(filter(None, [problem, "scores out of range: " + ", ".join(wrong)]))
            return problem

        async def run_one(model: str, sample: int, text: str) -> list[Vote]:
            try:
                out = await ask_structured(
                    self.complete_for(model, sample),
                    [{"role": "user", "content": text}],
                    C1Output,  # type: ignore[arg-type]
                    judge_model=model,
                    check=gaps,
                )
            except JudgeModelError as exc:
                return [Vote(model=model, sample=sample, verdict="error", reasoning=str(exc))]
            problem = gaps(out)
            if problem:
                return [
                    Vote(
                        model=model,
                        sample=sample,
                        verdict="error",
                        reasoning=f"judge model {model}: {problem}, after repair",
                    )
                ]
            scores = {r.criterion_id: r.score for r in out.results}
            total = max(0, sum(scores.values()))
            reasoning = "; ".join(f"{r.criterion_id}: {r.reasoning}" for r in out.results)
            evidence = [e for r in out.results for e in r.evidence]
            return [
                Vote(
                    model=model,
                    sample=sample,
                    verdict="inconclusive",
                    reasoning=reasoning,
                    evidence=evidence,
                    score=total,
                    scores=scores,
                )
            ]

        answers, rendered = await self._ask_all(build, transcript, state, run_one)
        votes = [a[0] for a in answers]
        scored = [v for v in votes if v.score is not None]
        if not scored:
            v = self._combine(votes, C1_CRITERION, transcript, rendered)
            return [v.model_copy(update={"verdict": "error", "counts_toward_status": False})]
        verdict = self._combine(
            votes,
            C1_CRITERION,
            transcript,
            rendered,
            key=lambda v: v.score if v.score is not None else "error",
        )
        totals = sorted(v.score for v in scored)  # type: ignore[misc]
        majority = (verdict.details or {}).get("votes", {})
        top = max(majority, key=lambda k: majority[k])
        total = int(top) if top != "error" and majority[top] * 2 > len(votes) else totals[len(totals) // 2]
        chosen = next(v for v in scored if v.score == total)
        s = chosen.scores or {}
        parts = ", ".join(f"{d} {s.get(d)}/{hi if hi > 0 else lo}" for d, (lo, hi) in C1_DIMENSIONS.items())
        spread = f"; sample totals {totals}" if len(votes) > 1 else ""
        details = {**(verdict.details or {}), "total": total, "dimensions": s, "sample_totals": totals}
        return [
            verdict.model_copy(
                update={
                    "verdict": "inconclusive",
                    "score": round(total / 5, 4),
                    "counts_toward_status": False,
                    "reason": f"C1 rubric {total}/5 ({parts}){spread}; informational — seed 004 sets no pass line, "
                    f"the case's own criteria decide: {chosen.reasoning}",
                    "details": details,
                }
            )
        ]


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


@judge_registry.register("llm_rubric")
def make_llm_rubric(config: JudgeConfig) -> LLMRubricJudge:
    """LLM judge per rubric criterion (+ C1 0-5 skill rubric); unjudged without --judge-model."""
    return LLMRubricJudge(config.judge_model, samples=config.judge_samples)
