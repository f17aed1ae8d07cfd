"""Run trials concurrently through the conversation graph and commit each record as it finishes
(one trial, its attempts and its record: graphs.trial_run)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from usersim.cases.schema import Case
from usersim.core.record import RunRecord
from usersim.core.secrets import redact
from usersim.core.turns import Turns
from usersim.graphs.heap import collector_paused, quiet_heap
from usersim.graphs.outputs import Finished, HeldRecords, Progress, write_outputs
from usersim.graphs.plan import RunPlan
from usersim.graphs.records_view import StoredRecords
from usersim.graphs.store import RunStore, check_resume_meta
from usersim.graphs.trials import Trial, plan_trials

if TYPE_CHECKING:
    from usersim.simulator.base import UserSimulator

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
    # with ray: `concurrency` is the total, split across the Ray workers (one per CPU, or N)
    ray_actors: int | None = None
    ray_runtime_env: dict[str, Any] | None = None  # Ray runtime_env of the workers (pip, working_dir)
    resimulate: int = 2  # a simulator-suspect organic conversation is simulated again up to N times
    # OpenTelemetry: export each conversation's trace as it finishes (reports.otel); the endpoint, or
    # None for the standard OTEL_EXPORTER_OTLP_* variables
    otel: bool = False
    otel_endpoint: str | None = None
    # the Python API's agent callable (`usersim.run(..., agent=fn)`); `agent` is then its label callable:NAME
    agent_callable: Callable[..., Any] | None = None
    # a simulator object instead of one loaded from `simulator` (`usersim play`: the person's seat);
    # the record's `simulator` is then its `spec` after the conversation (human, human+rule)
    simulator_instance: UserSimulator | None = None


def trial_plan(cfg: RunConfig) -> RunPlan:
    """The run plan of a config (judge models as a list, personas resolved once per case)."""
    return RunPlan.of(cfg)


def _check_resume(store: RunStore, meta: dict[str, Any]) -> None:
    check_resume_meta(store.path, store.get_meta(), meta)  # same suite, agent, simulator, judge, seed


async def run_trials(
    trials: list[Trial], cfg: RunConfig, out_dir: Path, meta: dict[str, Any]
) -> StoredRecords:
    """Run trials with bounded concurrency; each finished record is committed to SQLite and appended
    to results.jsonl at once. With resume, trials already stored are skipped.

    Memory stays bounded whatever the number of trials: only `concurrency` trials are in flight,
    a finished record is dropped once stored, and the outputs are written by streaming the store.
    Returns the run folder's records as a lazy view (graphs.records_view)."""
    with quiet_heap():  # the collector leaves the pre-run heap alone (graphs.heap)
        return await _run_trials(trials, cfg, out_dir, meta)


async def _run_trials(
    trials: list[Trial], cfg: RunConfig, out_dir: Path, meta: dict[str, Any]
) -> StoredRecords:
    out_dir.mkdir(parents=True, exist_ok=True)
    store = RunStore(out_dir / "results.sqlite")
    try:
        if cfg.resume:
            _check_resume(store, meta)
            done = store.done_ids()
        else:
            if store.has_records():
                raise ValueError(
                    f"{out_dir} already holds results; pass --resume to continue that run or choose a new --out"
                )
            done = set()
        store.set_meta(meta)
        todo = [(i, t) for i, t in enumerate(trials) if t.id not in done]
        plan = trial_plan(cfg)  # one plan for the run: each case's persona resolved once
        await _load_graph(todo, cfg, plan)
        jsonl = (out_dir / "results.jsonl").open("a", encoding="utf-8")
        progress = Progress(len(todo), enabled=cfg.progress)
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="usersim-store")
        traces = _trace_export(cfg)
        new_ids: set[str] = set()  # the records this invocation ran (their traces go out after a re-check)
        kept = HeldRecords(len(todo), stored_before=len(done))  # a small run's records stay in hand

        def persist(done: Finished) -> None:
            record = done.record
            text = done.text if done.text is not None else record.model_dump_json()
            store.put(record, done.ordinal, text)
            jsonl.write(text + "\n")
            jsonl.flush()
            new_ids.add(record.id)
            kept.add(record, text, done.section)
            # after the store: a receiver that is down never loses a record. With a judge model the
            # re-check below may still add verdicts: those traces are sent after it
            if traces is not None and not plan.judge_models:
                traces.export(record)

        try:
            loop = asyncio.get_running_loop()
            async with contextlib.aclosing(_finished(todo, cfg, meta, plan, kept)) as finished:
                async for done in finished:
                    # SQLite commit and JSONL append off the event loop, one writer thread in finishing order
                    await loop.run_in_executor(writer, persist, done)
                    progress.advance(done.record)
                    del done  # stored: nothing of it stays in memory but what `kept` holds (bounded)
            if cfg.ray:
                store.set_meta(meta)  # with meta["ray"]: workers, lost, retried
        finally:
            writer.shutdown(wait=True)
            jsonl.close()
            progress.close()
            from usersim.llm import ahead
            from usersim.llm.client import aclose_clients

            ahead.discard()  # a first request sent ahead that no conversation asked for
            await aclose_clients()
        records: list[RunRecord] | None = None
        try:
            if plan.judge_models:  # seed 003's 20% rule-to-LLM re-check, over the run's conversations
                # the one step that holds every record at once: the sample is drawn over the whole run
                stored = kept.records(store.briefs()) or store.records()
                records = await _recheck(stored, trials, plan, cfg.seed, store, meta)
                if traces is not None:
                    held = records
                    await asyncio.to_thread(lambda: [traces.export(r) for r in held if r.id in new_ids])
        finally:
            if traces is not None:
                print(traces.close().line(), file=sys.stderr)
        # results.jsonl in plan order, summary.json and report.html, streamed from the store off the
        # loop (the re-checked records, as the store holds them, are not parsed again)
        return await asyncio.to_thread(lambda: write_outputs(out_dir, store, meta, parsed=records, kept=kept))
    finally:
        from usersim.llm import ahead

        ahead.discard()  # when the run failed before its conversations started
        store.close()


def _finished(
    todo: list[tuple[int, Trial]], cfg: RunConfig, meta: dict[str, Any], plan: RunPlan, kept: HeldRecords
) -> AsyncIterator[Finished]:
    """The run's finished conversations in finishing order, from this process or from Ray workers
    (graphs.distributed: they render a record's transcript section while `kept` holds sections; at
    the end `meta["ray"]` says what the pool did)."""
    if cfg.ray:
        from usersim.graphs.distributed import remote_records

        return remote_records(todo, cfg, meta, sections=lambda: kept.on)
    from usersim.graphs.trial_run import run_trial

    turns = Turns()  # conversations compute one at a time, wait on models all at once

    async def local(trial: Trial) -> RunRecord:
        async with turns.conversation():
            return await run_trial(trial, cfg, meta["run_id"], plan)

    async def finished() -> AsyncIterator[Finished]:
        async with contextlib.aclosing(bounded_pool(todo, cfg.concurrency, local)) as pool:
            async for ordinal, record in pool:
                yield Finished(ordinal, record)

    return finished()


GRAPH = "usersim.graphs.trial_run"  # the conversation graph and what plays it (imports langgraph)
# Event-loop iterations given to the request sent ahead before the import starts: its session, the
# connection and the write. Measured against a local endpoint: with none, aiohttp's own import and
# the connection competed with the graph's import for the GIL and the request left 0.7-1.4 s late;
# with one, 2-8 ms after the import started; with 8, before it.
_SEND_STEPS = 8


async def _load_graph(todo: list[tuple[int, Trial]], cfg: RunConfig, plan: RunPlan) -> None:
    """Import the conversation graph (langgraph and langchain-core: about a second of CPU) while
    the first conversation's first model request is on its way, when that request is known before
    the graph runs (graphs.opening: sent ahead, and handed to the graph's node when it asks); else
    before the first conversation starts. With Ray the workers import it."""
    if cfg.ray or not todo or GRAPH in sys.modules:
        return
    from usersim.graphs.opening import send_first_request

    if await send_first_request(todo[0][1], cfg, plan):
        for _ in range(_SEND_STEPS):  # the request out of the door before the import takes the CPU
            await asyncio.sleep(0)
        # the import holds the GIL; the loop (this thread) gets it back at each switch interval to
        # read the reply, so the import's CPU and the model's latency overlap
        await asyncio.to_thread(_import_graph)
    else:
        _import_graph()
    # imported inside quiet_heap (run_trials): the graph's modules join the frozen pre-run heap, or
    # every full collection of the run walks them (graphs.heap; about 0.5 s of CPU in a short run)
    gc.freeze()


def _import_graph() -> None:
    with collector_paused():  # see graphs.heap
        importlib.import_module(GRAPH)


_END = object()


async def bounded_pool(
    todo: Iterable[tuple[int, Trial]], concurrency: int, run_one: Callable[[Trial], Awaitable[RunRecord]]
) -> AsyncIterator[tuple[int, RunRecord]]:
    """Run `run_one` over `todo` with `concurrency` workers, yielding (ordinal, record) as each
    finishes. A worker takes the next trial only when it is free, so at most `concurrency` trials
    exist as coroutines at any time (10,000 pending trials are 10,000 list items, not 10,000 tasks),
    and at most `concurrency` finished records wait for the consumer. A worker's exception is raised
    to the consumer; closing the iterator cancels the workers."""
    pending = iter(todo)
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=max(1, concurrency))
    live = 0

    async def worker() -> None:
        nonlocal live
        try:
            for ordinal, trial in pending:  # one shared iterator: each free worker takes the next trial
                record = await run_one(trial)
                await queue.put((ordinal, record))
        except Exception as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            await queue.put(exc)
            return
        live -= 1
        if not live:
            await queue.put(_END)

    workers = []
    for _ in range(max(1, concurrency)):
        live += 1
        workers.append(asyncio.create_task(worker()))
    try:
        while (item := await queue.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


def _trace_export(cfg: RunConfig) -> Any:
    if not cfg.otel:
        return None
    from usersim.reports.otel import TraceExport

    return TraceExport(cfg.otel_endpoint)


async def _recheck(
    records: list[RunRecord],
    trials: list[Trial],
    plan: RunPlan,
    seed: int,
    store: RunStore,
    meta: dict[str, Any],
) -> list[RunRecord]:
    """Re-check the seeded 20% of the rule-passed auto-only conversations (graphs.recheck); the
    changed records are stored again and the sample goes into the run meta."""
    from usersim.graphs.recheck import recheck_run
    from usersim.llm.client import aclose_clients

    cases = {t.case.id: t.case for t in trials}
    ordinals = {t.id: i for i, t in enumerate(trials)}
    try:
        records, sample, changed = await recheck_run(
            records, cases.get, plan.judge_config, seed=seed, persona_of=plan.persona
        )
    finally:
        await aclose_clients()  # the judge model's pooled HTTP clients belong to this event loop
    for i in changed:
        text = records[i].model_dump_json()
        store.put(records[i], ordinals.get(records[i].id, i), text)
        records[i] = RunRecord.model_validate_json(text)  # as the store gives it back to its readers
    meta["recheck"] = sample.model_dump()
    store.set_meta(meta)
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
        "started_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
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
        if any(c.mode == "organic" for c in cases) and cfg.simulator_instance is None:
            load_simulator(cfg.simulator)
        if cfg.otel:  # a missing extra or a bad endpoint, before any conversation runs
            from usersim.reports.otel import OtelUnavailable, TraceExport

            try:
                TraceExport(cfg.otel_endpoint).close()
            except OtelUnavailable as exc:
                raise SpecError(str(exc)) from None
    except (AgentError, UnknownNameError, ValueError) as exc:
        raise SpecError(redact(str(exc))) from None


def _tool_schemas(case: Case) -> list[dict[str, Any]]:
    """The tools a case offers the agent (what an agent factory is built with)."""
    from usersim.sandbox.base import open_sandbox

    try:
        return open_sandbox(case, seed=0).tool_schemas()
    except Exception:  # noqa: BLE001 - a case whose sandbox does not open is recorded per conversation
        return []


async def run_suite(cases: list[Case], cfg: RunConfig, out_dir: str | Path) -> StoredRecords:
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


async def run_cases(cases: list[Case], *, out_dir: str | Path, **options: Any) -> StoredRecords:
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
