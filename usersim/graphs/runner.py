"""Run trials concurrently through the conversation graph and commit each record as it finishes."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from usersim.adapters.base import load_agent
from usersim.cases.schema import Case
from usersim.core.events import Blame, SimEvent, Stop
from usersim.core.record import RunRecord, TranscriptMessage
from usersim.core.secrets import redact
from usersim.core.turns import Turns
from usersim.core.verdict import Status, Verdict, combine_score, combine_status
from usersim.graphs.context import RunContext
from usersim.graphs.conversation import graph
from usersim.graphs.outputs import Progress, write_outputs
from usersim.graphs.store import RunStore, check_resume_meta
from usersim.graphs.trials import Trial, plan_trials
from usersim.judges.base import JudgeConfig

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


async def run_trial(trial: Trial, cfg: RunConfig, run_id: str) -> RunRecord:
    """One conversation start to finish. Harness failures become an `error` record, never a crash."""
    from usersim.judges.select import select_judges
    from usersim.sandbox.base import open_sandbox

    case = trial.case
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    agent = None
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
        judge_model=redact(cfg.judge_model) if cfg.judge_model else None,
        started_at=started.isoformat(timespec="seconds"),
        branch=trial.branch,
    )
    try:
        agent = load_agent(cfg.agent)
        simulator = persona = None
        if case.persona:  # organic cases, and regression cases promoted from them (judges read the goal)
            from usersim.personas.loader import resolve_persona

            persona = trial.persona or resolve_persona(case)
        if case.mode == "organic":
            from usersim.simulator.base import load_simulator

            simulator = load_simulator(cfg.simulator)
        sandbox = open_sandbox(case, seed=trial.seed, skills_on=trial.skills_on)
        if trial.initial_state:  # a branch: per-conversation call counts continue from the checkpoint
            sandbox.restore(trial.initial_state.get("tool_trace", []))
        ctx = RunContext(
            case=case,
            agent=agent,
            sandbox=sandbox,
            judges=select_judges(
                case,
                JudgeConfig(
                    judge_model=cfg.judge_model,
                    judge_samples=cfg.judge_samples,
                    extra_judges=cfg.extra_judges,
                ),
            ),
            simulator=simulator,
            persona=persona,
            seed=trial.seed,
            variant=trial.variant.model_dump(),
            max_tool_rounds=cfg.max_tool_rounds,
            count_tokens=_count_tokens_fn(),
        )
        max_turns = case.max_turns or len(case.input.script) + 1
        final = await graph.ainvoke(
            dict(trial.initial_state or {}), context=ctx, config={"recursion_limit": 4 * max_turns + 20}
        )
    except Exception as exc:  # the harness itself failed for this trial: keep going with the others
        log.exception("trial %s failed", trial.id)
        return RunRecord(
            **base,
            status="error",
            blame="infrastructure",
            turns=0,
            error=redact(f"{type(exc).__name__}: {exc}"),
            system_config=_describe(agent),
            duration_s=round(time.perf_counter() - t0, 3),
        )
    verdicts = final.get("verdicts", [])
    for v in verdicts:
        v.reason = redact(v.reason)
    stop = final.get("stop")
    history_len = len(case.input.history) if case.mode == "static" else 0
    status, blame, suspect = decide_status(verdicts, stop)
    return RunRecord(
        **base,
        status=status,
        blame=blame,
        simulator_suspect=suspect,
        sim_events=_sim_events(case, persona, final) if case.mode == "organic" else [],
        persona=getattr(persona, "id", None) if case.mode == "organic" else None,
        score=combine_score(verdicts),
        turns=final.get("turn", 0),
        stop_reason=stop.reason if stop else None,
        stop_detail=redact(stop.detail) if stop else "",
        verdicts=verdicts,
        transcript=_transcript(final.get("messages", []), final.get("turn_starts", []), history_len),
        history_len=history_len,
        tool_trace=final.get("tool_trace", []),
        skill_events=final.get("skill_events", []),
        usage=final.get("usage", {}),
        context_tokens=final.get("context_tokens", []),
        system_config=_describe(agent),
        duration_s=round(time.perf_counter() - t0, 3),
    )


def decide_status(verdicts: list[Verdict], stop: Stop | None) -> tuple[Status, Blame, bool]:
    """(status, blame, simulator_suspect) of a finished conversation.

    `failed` is for the agent's behaviour only. A simulator that produced no valid turn, or an
    agent endpoint that stayed down (timeout, 5xx, connection), makes the conversation `error`
    whatever the rule checks say about the truncated transcript. A failed fidelity verdict of high
    precision (details.precision, judges/fidelity_evidence.py) marks the record simulator-suspect:
    its failure is charged to the simulator, not the agent; advisory ones never excuse the agent.
    """
    status = combine_status(verdicts)
    suspect = any(
        v.judge.startswith("fidelity")
        and v.verdict == "fail"
        and (v.details or {}).get("precision") == "high"
        for v in verdicts
    )
    if stop is not None and stop.reason == "simulator_error":  # its endpoint down: infrastructure
        return "error", "infrastructure" if stop.blame == "infrastructure" else "simulator", suspect
    if stop is not None and stop.reason == "agent_error":
        if stop.blame == "infrastructure":
            return "error", "infrastructure", suspect
        return (status if status == "failed" else "error"), "agent", suspect
    if status == "failed":
        return status, "simulator" if suspect else "agent", suspect
    if status == "error":  # a judge that crashed or gave no usable answer
        return status, "infrastructure", suspect
    return status, "none", suspect


def _sim_events(case: Case, persona: Any, final: dict[str, Any]) -> list[SimEvent]:
    """The simulator's trace plus, at the end, every scripted event that was never said or reached."""
    events = [
        SimEvent.model_validate(e).model_copy(update={"detail": redact(SimEvent.model_validate(e).detail)})
        if isinstance(e, dict)
        else e.model_copy(update={"detail": redact(e.detail)})
        for e in final.get("sim_events", [])
    ]
    if persona is None or not getattr(persona, "events", None):
        return events
    from usersim.simulator.scripted import event_progress

    turns = final.get("turn", 0)
    for status in event_progress(persona, final.get("messages", []), turns):
        if status.said_at is not None:
            continue
        if status.due is None or status.due > turns:
            when = f"due turn {status.due}" if status.due else "its trigger never happened"
            detail = f"{status.describe()} never reached ({when}; conversation ended at turn {turns})"
        else:
            detail = f"{status.describe()} due turn {status.due} but never said: its change is not applied"
        events.append(SimEvent(turn=turns, kind="event_missed", detail=redact(detail)))
    return events


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
        personas: dict[int, Any] = {}  # a case's resolved persona, once per run (by case object)

        def with_persona(trial: Trial) -> Trial:
            """The trial with its own copy of its case's persona, resolved once per run (a persona
            that does not resolve is left to run_trial, which records the error)."""
            case = trial.case
            if trial.persona is not None or not case.persona:
                return trial
            if id(case) not in personas:
                from usersim.personas.loader import resolve_persona

                try:
                    personas[id(case)] = resolve_persona(case)
                except Exception:  # noqa: BLE001 - run_trial resolves it again and records why
                    personas[id(case)] = None
            persona = personas[id(case)]
            return trial if persona is None else replace(trial, persona=persona.model_copy(deep=True))

        async def one(ordinal: int, trial: Trial) -> None:
            async with sem:
                trial = with_persona(trial)
                if cfg.ray:
                    from usersim.graphs.distributed import run_trial_remote

                    record = RunRecord.model_validate_json(await run_trial_remote(trial, cfg, meta["run_id"]))
                else:
                    async with turns.conversation():
                        record = await run_trial(trial, cfg, meta["run_id"])
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
    """Fail fast on a bad agent, simulator or judge name instead of recording one error per conversation."""
    from usersim.adapters.base import AgentError
    from usersim.core.registry import UnknownNameError
    from usersim.judges.base import judge_registry
    from usersim.judges.llm import judge_specs, parse_judge_spec
    from usersim.simulator.base import load_simulator

    try:
        for name in cfg.extra_judges:
            judge_registry.get(name)
        for spec in judge_specs(cfg.judge_model):
            parse_judge_spec(spec)  # unknown ?options and bad sizes, before any conversation runs
        load_agent(cfg.agent)
        if any(c.mode == "organic" for c in cases):
            load_simulator(cfg.simulator)
    except (AgentError, UnknownNameError, ValueError) as exc:
        raise SpecError(redact(str(exc))) from None


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
