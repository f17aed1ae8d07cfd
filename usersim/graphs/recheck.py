"""Seed 003's rule-to-LLM re-check over a run's conversations: "规则评分通过后，随机抽取 20% 的样本用
LLM Judge 复核，对比两者一致性。如果偏差超过 10%，需要检查规则是否过于粗放。"

After every conversation of a run has been judged (the runner, after its trials; rescore, after
re-judging), the conversations the rules passed whose case is auto-only (`select.recheck_eligible`)
are the eligible set. Exactly ceil(20%) of them are sampled, apportioned over the dimensions
(`calibration.stratified_sample`: each dimension gets floor or ceil of its 20%, the overall count is
exact), seeded by the run seed, so the same run — fresh, resumed or rescored — samples the same
conversations. Each sampled conversation gets the informational LLM rubric verdicts
(`details.recheck`, never counted toward the status); one already re-checked keeps its verdicts
(resume asks no judge twice), and a conversation no longer in the sample loses them. The plan
(eligible and sampled per dimension, the ids) is the run meta's `recheck`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import Case
from usersim.core.record import RunRecord
from usersim.core.verdict import Verdict
from usersim.graphs.judge_step import run_judges
from usersim.graphs.replay import stop_of
from usersim.graphs.rescore import _state as rebuilt_state
from usersim.judges.base import JudgeConfig
from usersim.judges.calibration import is_recheck, rule_decision, stratified_sample
from usersim.judges.select import RECHECK_RATE, RECHECK_SALT, recheck_eligible, recheck_judge


class RecheckPlan(BaseModel):
    """Which conversations the re-check sampled (run meta `recheck`, summary.json `recheck`)."""

    model_config = ConfigDict(extra="forbid")

    rate: float = Field(description="Share sampled (seed 003: 0.2).")
    seed: int = Field(description="Run seed the sample is drawn with.")
    eligible: dict[str, int] = Field(description="Dimension -> rule-passed auto-only conversations.")
    sampled: dict[str, int] = Field(description="Dimension -> conversations re-checked.")
    ids: list[str] = Field(description="Record ids re-checked, in run order.")


def eligible_ids(records: list[RunRecord], case_of: Callable[[str], Case | None]) -> dict[str, list[str]]:
    """Dimension -> ids of the rule-passed conversations of auto-only cases, in run order."""
    groups: dict[str, list[str]] = {}
    for r in records:
        if r.error or r.status == "error":
            continue
        case = case_of(r.case_id)
        if case is None or not recheck_eligible(case):
            continue
        if rule_decision([v for v in r.verdicts if not is_recheck(v)]) == "pass":
            groups.setdefault(r.dimension, []).append(r.id)
    return dict(sorted(groups.items()))


def plan(records: list[RunRecord], case_of: Callable[[str], Case | None], seed: int) -> RecheckPlan:
    """The seeded sample of the run (ceil(20%) overall, within one of 20% per dimension)."""
    groups = eligible_ids(records, case_of)
    picked = stratified_sample(groups, rate=RECHECK_RATE, salt=f"{RECHECK_SALT}|{seed}")
    chosen = {i for ids in picked.values() for i in ids}
    return RecheckPlan(
        rate=RECHECK_RATE,
        seed=seed,
        eligible={d: len(ids) for d, ids in groups.items()},
        sampled={d: len(ids) for d, ids in picked.items()},
        ids=[r.id for r in records if r.id in chosen],
    )


async def _recheck_one(record: RunRecord, case: Case, config: JudgeConfig, persona: Any) -> list[Verdict]:
    state = rebuilt_state(
        record.transcript,
        record.tool_trace,
        record.skill_events,
        turns=record.turns,
        stop=stop_of(record),
        sim_events=record.sim_events,
        traceback=record.traceback,
    )
    out = await run_judges(
        state,  # type: ignore[arg-type]
        case,
        [recheck_judge(config)],
        persona=persona,
        variant=record.variant.model_dump(),
    )
    return list(out["verdicts"])


async def recheck_run(
    records: list[RunRecord],
    case_of: Callable[[str], Case | None],
    config: JudgeConfig,
    *,
    seed: int,
    persona_of: Callable[[Case], Any] | None = None,
) -> tuple[list[RunRecord], RecheckPlan, list[int]]:
    """(the records with the sample re-checked, the plan, indexes of the records that changed)."""
    sample = plan(records, case_of, seed)
    chosen = set(sample.ids)
    out, changed = [], []
    for i, r in enumerate(records):
        had = [v for v in r.verdicts if is_recheck(v)]
        if r.id in chosen and not had:
            case = case_of(r.case_id)
            assert case is not None  # eligible records have their case
            persona = persona_of(case) if persona_of and case.persona else None
            r = r.model_copy(
                update={"verdicts": [*r.verdicts, *await _recheck_one(r, case, config, persona)]}
            )
            changed.append(i)
        elif r.id not in chosen and had:  # sampled before (another run's rules), not now
            r = r.model_copy(update={"verdicts": [v for v in r.verdicts if not is_recheck(v)]})
            changed.append(i)
        out.append(r)
    return out, sample, changed
