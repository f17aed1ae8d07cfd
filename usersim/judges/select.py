"""Which judges score a case (docs/design.md "Judges selection").

rules            always (the case's checks)
milestones       when the case has milestones or minefields
llm_rubric       when scoring includes llm_judge (`unjudged` without a judge model)
human            when the case has 人工 criteria
task_completion  organic cases
fidelity         organic cases (informational: grades the simulated user)
drift            on request (JudgeConfig.extra_judges) or when the case sets a drift threshold
divergence       promoted regression cases (compares the replay with the recorded transcript)

Seed 003's rule-to-LLM re-check ("规则评分通过后，随机抽取 20% 的样本用 LLM Judge 复核") is not
chosen here, per case: it samples the run's conversations once the rules have passed them
(graphs/recheck.py), from the conversations whose case `recheck_eligible` says is auto-only, and
gives each sampled one the informational judge of `recheck_judge`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges import completion, divergence, drift, human, llm_rubric, milestones, rules  # noqa: F401  register judges
from usersim.judges.base import Judge, JudgeConfig, JudgeState, judge_registry
from usersim.judges.fidelity import judge_fidelity


class FidelityJudge:
    """Simulator fidelity (judges.fidelity.judge_fidelity), with the judge model when one is given."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "fidelity"

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.usage: Any = None  # the judge model's usage when the LLM fidelity check ran

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        from usersim.judges.llm import judge_specs, model_complete

        models = judge_specs(self.config.judge_model) or [None]  # with judge models the LLM checks run too

        async def one(model: str | None) -> tuple[list[Verdict], Any]:
            complete = model_complete(model) if model else None
            out = judge_fidelity(
                transcript=transcript, case=case, state=state, judge_model=model, complete=complete
            )
            if hasattr(out, "__await__"):
                out = await out
            return (out if isinstance(out, list) else [out]), getattr(complete, "usage", None)

        runs = await asyncio.gather(*(one(m) for m in models))
        spent = [u for _, u in runs if u is not None]
        self.usage = None
        for u in spent:
            self.usage = u if self.usage is None else self.usage.add(u)
        verdicts = runs[0][0] if len(runs) == 1 else ensemble_fidelity([v for v, _ in runs], models)
        # Simulator fidelity grades the simulated user, never the agent under test.
        return [v.model_copy(update={"counts_toward_status": False}) for v in verdicts]


def ensemble_fidelity(runs: list[list[Verdict]], models: list[Any]) -> list[Verdict]:
    """One verdict per fidelity check from every judge model's run (an ensemble): the majority of the
    pass/fail votes decides (a tie is inconclusive); `details.votes` names each model's verdict."""
    by_model = [{v.judge: v for v in run} for run in runs]
    out = []
    for first in runs[0]:
        votes = [m.get(first.judge) for m in by_model]
        named = {str(model): v.verdict for model, v in zip(models, votes, strict=True) if v is not None}
        fails = [v for v in votes if v is not None and v.verdict == "fail"]
        passes = [v for v in votes if v is not None and v.verdict == "pass"]
        if len(fails) > len(passes):
            chosen = fails[0]
        elif len(passes) > len(fails):
            chosen = passes[0]
        elif not fails:  # no pass/fail vote at all: every model errored or was inconclusive
            chosen = first
        else:
            chosen = first.model_copy(
                update={"verdict": "inconclusive", "reason": f"judge models disagree: {named}"}
            )
        out.append(chosen.model_copy(update={"details": {**(chosen.details or {}), "votes": named}}))
    return out


@judge_registry.register("fidelity")
def make_fidelity(config: JudgeConfig) -> FidelityJudge:
    """Simulator fidelity (leaks, character breaks, early stops); informational."""
    return FidelityJudge(config)


RECHECK_RATE = 0.20  # seed 003: 抽样 20% 用 LLM-Judge 复核
RECHECK_SALT = "rule-llm-recheck"


def recheck_eligible(case: Case) -> bool:
    """Whether a case's conversations may enter the rule-to-LLM re-check: scored by rules only
    (`auto`) and with criteria an LLM judge can read."""
    return set(case.judging.scoring.methods) == {"auto"} and bool(llm_rubric.judged_criteria(case))


def recheck_judge(config: JudgeConfig) -> Judge:
    """The re-check's judge: the LLM rubric on the case's criteria, informational (never decides)."""
    return llm_rubric.LLMRubricJudge(config.judge_model, samples=config.judge_samples, informational=True)


def select_judges(case: Case, config: JudgeConfig) -> list[Judge]:
    """The judges for one case; unknown names in config.extra_judges raise with did-you-mean."""
    names = ["rules"]
    j = case.judging
    if j.milestones or j.minefields:
        names.append("milestones")
    if "llm_judge" in j.scoring.methods or j.rubric:
        names.append("llm_rubric")
    if human.human_criteria(case):
        names.append("human")
    if case.mode == "organic":
        names.extend(["task_completion", "fidelity"])
    if drift.drift_threshold(case) is not None:
        names.append("drift")
    if case.reference_transcript:
        names.append("divergence")
    for extra in config.extra_judges:
        judge_registry.get(extra)  # fail fast with "Unknown judge 'x'. Did you mean ...?"
        if extra not in names:
            names.append(extra)
    return [judge_registry.get(n)(config) for n in names]
