"""The LLM rubric judge: one verdict per criterion (pass / fail / inconclusive with reason and
evidence turn), plus seed 004's C1 0-5 skill rubric for skill-compliance cases.

Without a judge model every criterion is `unjudged` — a criterion that needs an LLM is never
passed by default. Malformed model output is repaired, then reported as an `error` verdict.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import Case
from usersim.core.events import Usage
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.llm import Complete, JudgeModelError, ask_structured, model_complete, prompt
from usersim.judges.render import render_transcript

NO_MODEL = "needs an LLM judge; none configured (pass --judge-model openai:MODEL)"
C1_CRITERION = "C1 skill rubric (seed 004): trigger 0-1, process 0-2, constraints 0-1, output contract 0-1, anti-pattern 0/-1"
# Seed 004 scores 0-5 but names no pass line; we use the seeds' dimension pass line (seed 002:
# 各维度 ≥ 70%), i.e. a normalised score of at least 0.7 (4/5 and above pass, 3/5 fails).
C1_PASS_THRESHOLD = 0.7


class CriterionResult(BaseModel):
    """One criterion as the judge model answers it (extra keys ignored: models add them)."""

    model_config = ConfigDict(extra="ignore")

    criterion_id: int = Field(description="1-based id of the criterion in the prompt.")
    criterion: str = Field(default="", description="The criterion text, echoed.")
    verdict: Literal["pass", "fail", "inconclusive"] = Field(description="The decision.")
    reason: str = Field(min_length=1, description="What in the transcript decided it.")
    evidence_turn: int | None = Field(default=None, description="Transcript index of the deciding message.")


class RubricOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[CriterionResult] = Field(description="One result per criterion.")


class C1Output(BaseModel):
    """Seed 004's 0-5 rubric."""

    model_config = ConfigDict(extra="ignore")

    trigger: int = Field(ge=0, le=1, description="触发判断 0-1.")
    process: int = Field(ge=0, le=2, description="流程遵从 0-2.")
    constraints: int = Field(ge=0, le=1, description="约束遵守 0-1.")
    output_contract: int = Field(ge=0, le=1, description="输出完整 0-1.")
    anti_pattern: int = Field(ge=-1, le=0, description="反模式 0 or -1.")
    reason: str = Field(min_length=1, description="评分理由.")
    evidence_turn: int | None = Field(default=None, description="Most telling message index.")

    @property
    def total(self) -> int:
        return max(
            0, self.trigger + self.process + self.constraints + self.output_contract + self.anti_pattern
        )


def rubric_criteria(case: Case) -> list[str]:
    """The criteria judged: the case's rubric, else its pass criteria, else its expected behaviour."""
    rubric = [c.text for c in case.judging.rubric]
    return rubric or list(case.judging.pass_criteria or case.judging.expected_behavior)


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
    try:
        from usersim import sandbox
    except ImportError:
        return f"(skill {name}: specification not available)"
    root = Path(sandbox.__file__).parent / "skills"
    for path in sorted(root.rglob("*.md")):
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


class LLMRubricJudge:
    """Judges rubric criteria with a model; `complete` is injectable for tests."""

    name = "llm_rubric"

    def __init__(self, judge_model: str | None, complete: Complete | None = None) -> None:
        self.judge_model = judge_model
        self.complete = complete or (model_complete(judge_model) if judge_model else None)

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        criteria = rubric_criteria(case)
        c1 = uses_c1_rubric(case, state)
        if self.complete is None or self.judge_model is None:
            items = criteria + ([C1_CRITERION] if c1 else [])
            return [Verdict(judge=self.name, verdict="unjudged", reason=NO_MODEL, criterion=c) for c in items]
        rendered = render_transcript(transcript, state.history_len)
        jobs = [self._criteria(criteria, rendered, case)] if criteria else []
        if c1:
            jobs.append(self._c1(rendered, case, transcript))
        results = await asyncio.gather(*jobs)  # the two prompts are independent: ask in parallel
        verdicts = [v for group in results for v in (group if isinstance(group, list) else [group])]
        # A model may cite an index that does not exist; never point the report at nothing.
        return [
            v
            if v.evidence_turn is None or 0 <= v.evidence_turn < len(transcript)
            else v.model_copy(update={"evidence_turn": None})
            for v in verdicts
        ]

    @property
    def usage(self) -> Usage | None:
        """Judge-model tokens spent by this judge (None with an injected `complete`)."""
        return getattr(self.complete, "usage", None)

    async def _criteria(self, criteria: list[str], rendered: str, case: Case) -> list[Verdict]:
        skills = ""
        if case.skills.skill_enabled and case.skills.active_skills:
            skills = "Skills available to the assistant: " + ", ".join(case.skills.active_skills)
        text = prompt(
            "rubric",
            title=f"{case.id} · {case.title}",
            context=_context(case),
            expected=_bullets(case.judging.expected_behavior),
            fail_conditions=_bullets(case.judging.fail_criteria),
            skills=skills,
            transcript=rendered,
            criteria="\n".join(f"{i}. {c}" for i, c in enumerate(criteria, 1)),
        )
        ids = set(range(1, len(criteria) + 1))

        def gaps(out: RubricOutput) -> str | None:
            missing = sorted(ids - {r.criterion_id for r in out.results})
            return f"results missing for criterion id(s) {missing}" if missing else None

        try:
            out = await ask_structured(
                self.complete,
                [{"role": "user", "content": text}],
                RubricOutput,  # type: ignore[arg-type]
                judge_model=str(self.judge_model),
                check=gaps,
            )
        except JudgeModelError as exc:
            return [Verdict(judge=self.name, verdict="error", reason=str(exc), criterion=c) for c in criteria]
        by_id = {r.criterion_id: r for r in out.results if r.criterion_id in ids}
        verdicts = []
        for i, c in enumerate(criteria, 1):
            r = by_id.get(i)
            if r is None:
                verdicts.append(
                    Verdict(
                        judge=self.name,
                        verdict="error",
                        criterion=c,
                        reason=f"judge model {self.judge_model} gave no verdict for this criterion after repair",
                    )
                )
                continue
            verdicts.append(
                Verdict(
                    judge=self.name,
                    verdict=r.verdict,
                    reason=r.reason,
                    criterion=c,
                    evidence_turn=r.evidence_turn,
                )
            )
        return verdicts

    async def _c1(self, rendered: str, case: Case, transcript: list[Message]) -> Verdict:
        task = case.input.message or next((m.content for m in transcript if m.role == "user"), "")
        text = prompt(
            "c1_rubric",
            skills="\n\n".join(_skill_text(s) for s in case.skills.active_skills),
            task=task,
            expected=_bullets(case.judging.expected_behavior),
            transcript=rendered,
        )
        try:
            out = await ask_structured(
                self.complete,
                [{"role": "user", "content": text}],
                C1Output,  # type: ignore[arg-type]
                judge_model=str(self.judge_model),
            )
        except JudgeModelError as exc:
            return Verdict(judge=self.name, verdict="error", reason=str(exc), criterion=C1_CRITERION)
        score = round(out.total / 5, 4)
        parts = (
            f"trigger {out.trigger}/1, process {out.process}/2, constraints {out.constraints}/1, "
            f"output contract {out.output_contract}/1, anti-pattern {out.anti_pattern}"
        )
        ok = score >= C1_PASS_THRESHOLD
        return Verdict(
            judge=self.name,
            verdict="pass" if ok else "fail",
            reason=f"C1 rubric {out.total}/5 ({parts}); pass line {C1_PASS_THRESHOLD:.0%}: {out.reason}",
            criterion=C1_CRITERION,
            score=score,
            evidence_turn=out.evidence_turn,
            details=out.model_dump(),
        )


@judge_registry.register("llm_rubric")
def make_llm_rubric(config: JudgeConfig) -> LLMRubricJudge:
    """LLM judge per rubric criterion (+ C1 0-5 skill rubric); unjudged without --judge-model."""
    return LLMRubricJudge(config.judge_model)
