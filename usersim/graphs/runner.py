"""Run trials concurrently through the conversation graph and commit each record as it finishes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from usersim.cases.schema import Case
from usersim.core.errors import CaseError
from usersim.core.events import SimEvent, Stop, Usage
from usersim.core.record import Attempt, RunRecord, TranscriptMessage
from usersim.core.secrets import redact
from usersim.core.turns import Turns
from usersim.graphs.context import RunContext
from usersim.graphs.conversation import graph
from usersim.graphs.finalize import Finalized
from usersim.graphs.outputs import Progress, write_outputs
from usersim.graphs.plan import RunPlan
from usersim.graphs.store import RunStore, check_resume_meta
from usersim.graphs.trials import Trial, plan_trials

log = logging.getLogger(__name__)


@dataclass
class RunConfig:
    """Everything `usersim run` was asked to do."""

    agent: str = "reference"
    simulator: str = "rule"
    judge_model: str | None = None  # several comma-joined: a judge ensemble
    judge_samples: int = 1  # samples per criterion and judge model (majority verdict)
    repeats: int = 1
    lengths: list[str] | None = None
    positions: list[str] | None = None
    concurrency: int = 4
    resume: bool = False
    seed: int = 0
    max_tool_rounds: int = 8
    extra_judges: list[str] = field(default_factory=list)
    progress: bool = True
    ray: str | None = None  # Ray address ("local", "auto", "ray://host:10001"); None = this process
    resimulate: int = 2  # a simulator-suspect organic conversation is simulated again up to N times
    # the Python API's agent callable (`usersim.run(..., agent=fn)`); `agent` is then its label callable:NAME
    agent_callable: Callable[..., Any] | None = None


def trial_plan(cfg: RunConfig) -> RunPlan:
    """The run plan of a config (judge models as a list, personas resolved once per case)."""
    return RunPlan.from_options(
        cfg.judge_model,
        cfg.judge_samples,
        cfg.extra_judges,
        agent=cfg.agent,
        agent_callable=cfg.agent_callable,
    )


def _transcript(messages: list[Any], turn_starts: list[int], history_len: int) -> list[TranscriptMessage]:
    out = []
    for i, m in enumerate(messages):
        turn = 0 if i < history_len else sum(1 for s in turn_starts if s <= i)
        out.append(
            TranscriptMessage(
                role=m.role,
                content=redact(m.content),
                tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
                or None,
                tool_call_id=m.tool_call_id,
                name=m.name,
                is_error=m.is_error if m.role == "tool" else None,
                turn=turn,
            )
        )
    return out


def _count_tokens_fn():
    from usersim.cases.tokens import count_tokens

    return lambda msgs: count_tokens(msgs)


def attempt_seed(trial_seed: int, attempt: int) -> int:
    """Seed of a resimulation: the trial seed for attempt 0, then sha256 of (trial seed, attempt)."""
    if attempt == 0:
        return trial_seed
    return int(hashlib.sha256(f"{trial_seed}:resimulate:{attempt}".encode()).hexdigest()[:12], 16)


async def run_trial(trial: Trial, cfg: RunConfig, run_id: str, plan: RunPlan | None = None) -> RunRecord:
    """One conversation start to finish. Harness failures become an `error` record, never a crash.

    An organic conversation whose attempt is simulator-suspect (see graphs.finalize) is simulated
    again with a derived seed, up to `cfg.resimulate` more times; every attempt is kept in the
    record, and the first clean attempt decides (all suspect: inconclusive, blame simulator)."""
    from usersim.judges.select import select_judges
    from usersim.sandbox.base import open_sandbox

    case = trial.case
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    agent = None
    plan = plan or trial_plan(cfg)
    base: dict[str, Any] = dict(
        id=trial.id,
        run_id=run_id,
        case_id=case.id,
        dimension=case.dimension,
        category=case.category,
        difficulty=case.difficulty,
        mode=case.mode,
        scoring=case.scoring_label,
        tags=case.tags,
        variant=trial.variant,
        seed=trial.seed,
        agent=redact(cfg.agent),
        simulator=redact(cfg.simulator) if case.mode == "organic" else None,
        judge_model=plan.judge_model_label,
        started_at=started.isoformat(timespec="seconds"),
        branch=trial.branch,
    )
    history_len = len(case.input.history) if case.mode == "static" else 0
    attempts: list[tuple[int, dict[str, Any], Finalized]] = []
    try:
        agent = plan.load_agent()
        simulator = persona = None
        if case.persona:  # organic cases, and regression cases promoted from them (judges read the goal)
            persona = trial.persona or plan.persona(case)
        if case.mode == "organic":
            from usersim.simulator.base import load_simulator

            simulator = load_simulator(cfg.simulator)
        tries = 1 + (max(0, cfg.resimulate) if case.mode == "organic" else 0)
        for attempt in range(tries):
            seed = attempt_seed(trial.seed, attempt)
            # the same world every attempt (sandbox seeded by the trial); only the simulated user differs
            sandbox = open_sandbox(case, seed=trial.seed, skills_on=trial.skills_on)
            if trial.initial_state:  # a branch: per-conversation call counts continue from the checkpoint
                sandbox.restore(trial.initial_state.get("tool_trace", []))
            ctx = RunContext(
                case=case,
                agent=agent,
                sandbox=sandbox,
                judges=select_judges(case, plan.judge_config),
                simulator=simulator,
                persona=persona.model_copy(deep=True) if persona is not None and attempt else persona,
                seed=seed,
                variant=trial.variant.model_dump(),
                max_tool_rounds=cfg.max_tool_rounds,
                count_tokens=_count_tokens_fn(),
            )
            start = dict(trial.initial_state or {})
            if attempts:
                start["sim_events"] = list(start.get("sim_events", [])) + [
                    _resimulated(attempts, attempt, tries, seed)
                ]
            max_turns = case.max_turns or len(case.input.script) + 1
            final = await graph.ainvoke(start, context=ctx, config={"recursion_limit": 4 * max_turns + 20})
            attempts.append((seed, final, final["final"]))
            if not final["final"].simulator_suspect:
                break
    except Exception as exc:  # the harness itself failed for this trial: keep going with the others
        return _harness_error(trial, base, agent, exc, t0)
    seed, final, done = attempts[-1]
    return RunRecord(
        **base,
        status=done.status,
        blame=done.blame,
        simulator_suspect=done.simulator_suspect,
        suspect_reason=done.suspect_reason,
        sim_events=done.sim_events if case.mode == "organic" else [],
        attempts=[
            _attempt(i, s, f, d, last=i == len(attempts) - 1, history_len=history_len)
            for i, (s, f, d) in enumerate(attempts)
        ]
        if case.mode == "organic"
        else [],
        persona=getattr(persona, "id", None) if case.mode == "organic" else None,
        score=done.score,
        turns=final.get("turn", 0),
        stop_reason=done.stop.reason if done.stop else None,
        stop_detail=done.stop.detail if done.stop else "",
        stop=done.stop,
        traceback=done.traceback,
        verdicts=done.verdicts,
        transcript=_transcript(final.get("messages", []), final.get("turn_starts", []), history_len),
        history_len=history_len,
        tool_trace=final.get("tool_trace", []),
        skill_events=final.get("skill_events", []),
        usage=_total_usage(f for _, f, _ in attempts),
        context_tokens=final.get("context_tokens", []),
        system_config=_describe(agent),
        duration_s=round(time.perf_counter() - t0, 3),
    )


def _resimulated(
    attempts: list[tuple[int, dict[str, Any], Finalized]], attempt: int, tries: int, seed: int
) -> SimEvent:
    why = attempts[-1][2].suspect_reason
    return SimEvent(
        turn=0,
        kind="resimulated",
        detail=redact(
            f"attempt {attempt + 1} of {tries} (seed {seed}): attempt {attempt} was simulator-suspect: {why}"
        ),
    )


def _attempt(
    index: int, seed: int, final: dict[str, Any], done: Finalized, *, last: bool, history_len: int
) -> Attempt:
    """One attempt for the record; earlier ones keep their own transcript and trace (the last is the record's)."""
    return Attempt(
        index=index,
        seed=seed,
        status=done.status,
        blame=done.blame,
        simulator_suspect=done.simulator_suspect,
        suspect_reason=done.suspect_reason,
        stop=done.stop,
        turns=final.get("turn", 0),
        verdicts=done.verdicts,
        sim_events=done.sim_events,
        transcript=None
        if last
        else _transcript(final.get("messages", []), final.get("turn_starts", []), history_len),
        tool_trace=None if last else final.get("tool_trace", []),
        skill_events=None if last else final.get("skill_events", []),
    )


def _total_usage(finals: Any) -> dict[str, Usage]:
    """Tokens spent by every attempt of the conversation, per role."""
    out: dict[str, Usage] = {}
    for f in finals:
        for role, u in (f.get("usage") or {}).items():
            out[role] = out.get(role, Usage()).add(u)
    return out


def _harness_error(trial: Trial, base: dict[str, Any], agent: Any, exc: Exception, t0: float) -> RunRecord:
    """The record of a trial the harness could not run: the case's fault for a CaseError (a tools file
    that does not load), else infrastructure."""
    from usersim.graphs.nodes import format_traceback

    if isinstance(exc, CaseError):
        stop = Stop(reason="case_error", detail=redact(str(exc)), blame="case")
        trace = exc.traceback or format_traceback(exc)
        return RunRecord(
            **base,
            status="error",
            blame="case",
            turns=0,
            stop_reason="case_error",
            stop_detail=stop.detail,
            stop=stop,
            traceback=redact(trace),
            error=redact(str(exc)),
            system_config=_describe(agent),
            duration_s=round(time.perf_counter() - t0, 3),
        )
    log.exception("trial %s failed", trial.id)
    return RunRecord(
        **base,
        status="error",
        blame="infrastructure",
        turns=0,
        error=redact(f"{type(exc).__name__}: {exc}"),
        traceback=redact(format_traceback(exc)),
        system_config=_describe(agent),
        duration_s=round(time.perf_counter() - t0, 3),
    )


def _describe(agent: Any) -> dict[str, Any]:
    if agent is None or not hasattr(agent, "describe"):
        return {}
    try:
        return json.loads(redact(json.dumps(agent.describe(), ensure_ascii=False, default=str)))
    except Exception as exc:
        return {"describe_error": f"{type(exc).__name__}: {exc}"}


def _check_resume(store: RunStore, meta: dict[str, Any]) -> None:
    check_resume_meta(store.path, store.get_meta(), meta)  # same suite, agent, simulator, judge, seed


async def run_trials(
    trials: list[Trial], cfg: RunConfig, out_dir: Path, meta: dict[str, Any]
) -> list[RunRecord]:
    """Run trials with bounded concurrency; each finished record is committed to SQLite and appended
    to results.jsonl at once. With resume, trials already stored are skipped."""
    out_dir.mkdir(parents=True, exist_ok=True)
    store = RunStore(out_dir / "results.sqlite")
    try:
        if cfg.resume:
            _check_resume(store, meta)
            done = store.done_ids()
        else:
            if store.done_ids():
                raise ValueError(
                    f"{out_dir} already holds results; pass --resume to continue that run or choose a new --out"
                )
            done = set()
        store.set_meta(meta)
        todo = [(i, t) for i, t in enumerate(trials) if t.id not in done]
        sem = asyncio.Semaphore(max(1, cfg.concurrency))
        jsonl = (out_dir / "results.jsonl").open("a", encoding="utf-8")
        progress = Progress(len(todo), enabled=cfg.progress)
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="usersim-store")

        if cfg.ray:
            from usersim.graphs.distributed import ensure_ray

            ensure_ray(cfg.ray)

        turns = Turns()  # conversations compute one at a time, wait on models all at once
        plan = trial_plan(cfg)  # one plan for the run: each case's persona resolved once

        async def one(ordinal: int, trial: Trial) -> None:
            async with sem:
                if cfg.ray:
                    from usersim.graphs.distributed import run_trial_remote

                    record = RunRecord.model_validate_json(await run_trial_remote(trial, cfg, meta["run_id"]))
                else:
                    async with turns.conversation():
                        record = await run_trial(trial, cfg, meta["run_id"], plan)
            # SQLite commit and JSONL append off the event loop, one writer thread in finishing order
            await asyncio.get_running_loop().run_in_executor(writer, persist, record, ordinal)
            progress.advance(record)

        finished: list[tuple[int, RunRecord]] = []

        def persist(record: RunRecord, ordinal: int) -> None:
            text = record.model_dump_json()
            store.put(record, ordinal, text)
            jsonl.write(text + "\n")
            jsonl.flush()
            finished.append((ordinal, record))

        try:
            await asyncio.gather(*(one(i, t) for i, t in todo))
        finally:
            writer.shutdown(wait=True)
            jsonl.close()
            progress.close()
            from usersim.llm.client import aclose_clients

            await aclose_clients()
        # a fresh run has every record in hand (in the store's order); a resumed one also has the stored
        records = store.records() if done else [r for _, r in sorted(finished, key=lambda x: (x[0], x[1].id))]
    finally:
        store.close()
    await asyncio.to_thread(write_outputs, out_dir, records, meta)  # the report, off the event loop
    return records


def run_meta(cfg: RunConfig, out_dir: Path, case_ids: list[str]) -> dict[str, Any]:
    return {
        "run_id": out_dir.name + "-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S"),
        "agent": redact(cfg.agent),
        "simulator": redact(cfg.simulator),
        "judge_model": redact(cfg.judge_model) if cfg.judge_model else None,
        "judge_samples": cfg.judge_samples,
        "extra_judges": list(cfg.extra_judges),  # rescore runs the same judges
        "resimulate": cfg.resimulate,
        "seed": cfg.seed,
        "repeats": cfg.repeats,
        "lengths": cfg.lengths,
        "positions": cfg.positions,
        "case_ids": case_ids,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class SpecError(ValueError):
    """A bad agent, simulator or judge SPEC, found before any conversation runs."""


def check_specs(cases: list[Case], cfg: RunConfig) -> None:
    """Fail fast on a bad agent, simulator or judge name, or a misconfigured adapter (a LangGraph
    `mode=thread` graph without a checkpointer), instead of recording one error per conversation."""
    from usersim.adapters.base import AgentError
    from usersim.core.registry import UnknownNameError
    from usersim.judges.base import judge_registry
    from usersim.simulator.base import load_simulator

    try:
        for name in cfg.extra_judges:
            judge_registry.get(name)
        plan = trial_plan(cfg)  # judge SPECs: unknown ?options and bad sizes, before any conversation runs
        agent = plan.load_agent()
        check_mode = getattr(agent, "check_mode", None)
        if check_mode is not None and cases:
            check_mode(_tool_schemas(cases[0]))
        if any(c.mode == "organic" for c in cases):
            load_simulator(cfg.simulator)
    except (AgentError, UnknownNameError, ValueError) as exc:
        raise SpecError(redact(str(exc))) from None


def _tool_schemas(case: Case) -> list[dict[str, Any]]:
    """The tools a case offers the agent (what an agent factory is built with)."""
    from usersim.sandbox.base import open_sandbox

    try:
        return open_sandbox(case, seed=0).tool_schemas()
    except Exception:  # noqa: BLE001 - a case whose sandbox does not open is recorded per conversation
        return []


async def run_suite(cases: list[Case], cfg: RunConfig, out_dir: str | Path) -> list[RunRecord]:
    """The one entry every run goes through (CLI, Python API, pytest plugin): check the specs, plan
    the trials, run and store them; returns every record of the run directory."""
    check_specs(cases, cfg)
    out = Path(out_dir)
    trials = plan_trials(
        cases, repeats=cfg.repeats, lengths=cfg.lengths, positions=cfg.positions, seed=cfg.seed
    )
    meta = run_meta(cfg, out, [c.id for c in cases])
    meta["case_files"] = {c.id: str(c.file.resolve()) for c in cases if c.file}  # rescore finds them again
    if cfg.resume and (out / "results.sqlite").is_file():
        old = RunStore(out / "results.sqlite")
        meta["run_id"] = old.get_meta().get("run_id", meta["run_id"])
        old.close()
    return await run_trials(trials, cfg, out, meta)


async def run_cases(cases: list[Case], *, out_dir: str | Path, **options: Any) -> list[RunRecord]:
    """`run_suite` with RunConfig fields as keywords (agent=..., simulator=..., repeats=...)."""
    return await run_suite(cases, make_config(**options), out_dir)


def make_config(**options: Any) -> RunConfig:
    """A RunConfig from keywords; an unknown option is a TypeError with did-you-mean."""
    from dataclasses import fields

    from usersim.core.registry import did_you_mean

    known = {f.name for f in fields(RunConfig)}
    for name in options:
        if name not in known:
            raise TypeError(
                f"unknown run option '{name}'.{did_you_mean(name, known)} Options: {', '.join(sorted(known))}"
            )
    return RunConfig(**options)
