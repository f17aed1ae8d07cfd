"""`usersim shrink`: a failing record reduced to the shortest regression case that still fails the
same check (and, with a good agent, still passes with it).

The record's case is rebuilt as a `Draft` (graphs.shrink_units) and searched with ddmin
(graphs.shrink_search). Every candidate runs through the same trial code as `usersim run`, with the
record's agent, simulator and judges and its seed pinned (the simulated user's wording and the
sandbox come out as in the record wherever the candidate does not change them), so a candidate
"holds" only when the SAME check (judge and criterion) fails again; with `against`, it must also
pass with the good agent. At most `budget` conversations run; when the budget runs out first, the
smallest case found so far is written and marked incomplete.

Outputs: TO_DIR/<case>-MIN-<digest>.yaml (a valid case, relative references as `promote` writes
them, `promoted_from.shrink` saying what was dropped) and TO_DIR/shrink.json (one entry per shrunk
record); the entry is also kept in the run's meta (`shrinks`) so RUN/report.html shows the shrunk
case next to its original (reports.html_shrink).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from usersim.cases.loader import find_case
from usersim.cases.schema import Case, PromotedFrom, ShrinkInfo
from usersim.core.record import RunRecord
from usersim.core.verdict import Verdict
from usersim.graphs.promote import failing_verdicts, find_record, record_persona
from usersim.graphs.replay import messages_of
from usersim.graphs.shrink_out import entry_of, save_entry, write_shrunk
from usersim.graphs.shrink_search import BudgetSpent, Search
from usersim.graphs.shrink_units import NOUNS, Draft
from usersim.personas.schema import Persona
from usersim.simulator.base import replay_spec

DEFAULT_BUDGET = 100  # runs; a 9-turn static conversation with a good agent to pass takes ~75


def check_id(v: Verdict) -> str:
    """A check as a user names it: its judge and criterion ('final_state {"expect": ...}')."""
    if not v.criterion:
        return v.judge
    return v.criterion if v.criterion.startswith(v.judge) else f"{v.judge}: {v.criterion}"


def fails_same(record: RunRecord, target: Verdict) -> bool:
    """Whether `record` fails the target check (same judge, same criterion) again."""
    return any(
        v.judge == target.judge and v.criterion == target.criterion and v.verdict == "fail"
        for v in record.verdicts
        if v.counts_toward_status
    )


def target_check(record: RunRecord, check: str | None) -> Verdict:
    """The failing check to keep failing: the one named (judge name or check id), else the first."""
    bad = [v for v in failing_verdicts(record) if v.verdict == "fail"]
    if record.status == "passed" or not bad:
        raise ValueError(f"nothing to shrink: record {record.id} {record.status} (no failing check)")
    if check is None:
        return bad[0]
    picked = [v for v in bad if check in (v.judge, check_id(v))]
    if not picked:
        named = "; ".join(check_id(v) for v in bad)
        raise ValueError(f"record {record.id} does not fail check '{check}'; it fails: {named}")
    return picked[0]


@dataclass
class Shrunk:
    """What a shrink wrote: the case file, its provenance, and the entry for reports."""

    path: Path
    info: ShrinkInfo
    entry: dict[str, Any]


class Runs:
    """Runs candidates with the record's settings and counts them against the budget."""

    def __init__(self, record: RunRecord, meta: dict, target: Verdict, against: str | None, budget: int):
        from usersim.graphs.plan import RunPlan
        from usersim.graphs.runner import RunConfig

        self.record, self.target, self.against, self.budget = record, target, against, budget
        self.used = 0
        self.why = ""  # why the last candidate did not hold
        opts: dict[str, Any] = dict(
            simulator=replay_spec(record.simulator),  # a person's seat plays on as its co-simulator
            judge_model=meta.get("judge_model"),
            judge_samples=int(meta.get("judge_samples") or 1),
            extra_judges=list(meta.get("extra_judges") or []),
            resimulate=0,
            progress=False,
        )
        self.bad_cfg = RunConfig(agent=record.agent, **opts)
        self.good_cfg = RunConfig(agent=against, **opts) if against else None
        self.bad_plan = RunPlan.of(self.bad_cfg)
        self.good_plan = RunPlan.of(self.good_cfg) if self.good_cfg else None

    async def _one(self, case: Case, persona: Persona | None, cfg: Any, plan: Any) -> RunRecord:
        from usersim.graphs.trial_run import run_trial
        from usersim.graphs.trials import Trial

        if self.used >= self.budget:
            raise BudgetSpent
        self.used += 1
        r = self.record
        group = r.variant.group
        trial = Trial(
            id=r.id,
            case=case,
            variant=r.variant,
            seed=r.seed or 0,
            skills_on=None if group is None else group == "B",
            persona=persona,
        )
        return await run_trial(trial, cfg, "shrink", plan)

    async def judge(self, case: Case, persona: Persona | None) -> tuple[bool, RunRecord | None]:
        bad = await self._one(case, persona, self.bad_cfg, self.bad_plan)
        if not fails_same(bad, self.target):
            self.why = f"with {self.record.agent} it {bad.status} ({_reasons(bad) or 'no failing check'})"
            return False, bad
        if self.good_cfg is not None:
            good = await self._one(case, persona, self.good_cfg, self.good_plan)
            if good.status != "passed":
                self.why = f"with {self.against} it {good.status} ({_reasons(good) or good.error or ''})"
                return False, bad
        return True, bad


def _reasons(record: RunRecord) -> str:
    return "; ".join(f"{v.judge}: {v.reason[:80]}" for v in failing_verdicts(record)[:2])


def _pin(record: RunRecord, case: Case, meta: dict) -> PromotedFrom:
    """The record's origin with the seed the simulator used (the deciding attempt's), so a candidate
    replays the recorded wording; a promoted source keeps its own pin."""
    src = case.promoted_from
    seed = record.attempts[-1].seed if record.attempts else record.seed
    return PromotedFrom(
        run_id=str(meta.get("run_id") or record.run_id or ""),
        record_id=record.id,
        case_id=src.case_id if src else case.id,
        agent=record.agent,
        simulator=record.simulator,
        status=record.status,
        failing=[f"{v.judge}: {v.reason}" for v in failing_verdicts(record)],
        persona=record.variant.persona or case.persona,
        seed=src.seed if src and src.seed is not None else seed,
    )


def size_line(sizes: dict[str, tuple[int, int]]) -> str:
    """'9 turns → 3, 12 facts → 2' for every dimension that had something to drop."""
    return ", ".join(f"{a} {NOUNS[d]} → {b}" for d, (a, b) in sizes.items()) or "nothing to drop"


async def shrink(
    run_dir: Path,
    record_id: str,
    to_dir: Path,
    *,
    against: str | None = None,
    budget: int = DEFAULT_BUDGET,
    check: str | None = None,
    cases_paths: list[str] | None = None,
) -> Shrunk:
    """Shrink RECORD_ID of RUN_DIR; write the case and TO_DIR/shrink.json; return what was written."""
    if not (run_dir / "results.sqlite").is_file():
        raise ValueError(f"{run_dir} is not a run folder (no results.sqlite): point RUN at a --out folder")
    record, meta = find_record(run_dir, record_id)
    if (record.simulator or "").split("+", 1)[0] == "human":
        raise ValueError(
            f"record {record.id} was played by a person (simulator {record.simulator}): their turns cannot be "
            f"played again with the seed pinned; promote it first (usersim promote {run_dir} '{record.id}' "
            "--to DIR: the case replays their turns), run that case, and shrink its record"
        )
    if record.error:
        raise ValueError(f"record {record.id} did not run ({record.error}); nothing to shrink")
    target = target_check(record, check)
    need = 2 if against else 1
    if budget < need:
        raise ValueError(f"--budget {budget} is too small: re-running the original takes {need} run(s)")
    try:
        case = find_case(record.case_id, cases_paths or (meta.get("explore") or {}).get("cases") or None)
    except KeyError as exc:  # the run's cases came from a folder of the user's
        raise ValueError(f"{exc} Pass --cases FOLDER: where the case of record {record.id} is.") from None
    persona = record_persona(record, case, meta) if case.mode == "organic" else None
    pinned = case.model_copy(update={"promoted_from": _pin(record, case, meta), "reference_transcript": []})
    draft = Draft.of(pinned, persona, messages_of(record)[: record.history_len])
    runs = Runs(record, meta, target, against, budget)
    search = Search(draft, runs.judge)
    full = draft.everything()
    if not await search.attempt(full):
        raise ValueError(
            f"record {record.id} does not fail the same way again with its seed pinned: {runs.why}; "
            f"check: {check_id(target)}"
        )
    kept, complete = await search.run(full)
    best = (await search.outcome(kept))[1]
    assert best is not None  # a selection that held was run
    sizes = draft.sizes(kept)
    info = ShrinkInfo(
        shrunk=size_line(sizes),
        check=check_id(target),
        against=against,
        sizes={d: list(v) for d, v in sizes.items()},
        runs_used=runs.used,
        budget=budget,
        complete=complete,
    )
    path = write_shrunk(draft, kept, case, record, pinned.promoted_from, info, best, to_dir)
    entry = entry_of(run_dir, record, case, path, info, best)
    save_entry(to_dir / "shrink.json", entry)
    return Shrunk(path=path, info=info, entry=entry)
