"""One trial start to finish: its attempts (a simulator-suspect organic conversation is simulated
again with a derived seed), and the record built from the finalize node's decision."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from usersim.core import timeline
from usersim.core.errors import CaseError
from usersim.core.events import SimEvent, Stop, Usage
from usersim.core.record import Attempt, RunRecord, TranscriptMessage
from usersim.core.secrets import redact
from usersim.graphs.context import RunContext
from usersim.graphs.conversation import graph
from usersim.graphs.finalize import Finalized
from usersim.graphs.plan import RunPlan
from usersim.graphs.trials import Trial

if TYPE_CHECKING:
    from usersim.graphs.runner import RunConfig

log = logging.getLogger(__name__)


def _transcript(final: dict[str, Any], history_len: int) -> list[TranscriptMessage]:
    """The end state's messages as stored; a user message carries who played its turn (`by`)."""
    turn_starts: list[int] = final.get("turn_starts", [])
    played_by: dict[int, str] = final.get("played_by", {})
    out = []
    for i, m in enumerate(final.get("messages", [])):
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
                by=played_by.get(turn) if m.role == "user" and turn else None,
            )
        )
    return out


def _count_tokens_fn():
    from usersim.cases.tokens import count_tokens

    return lambda msgs: count_tokens(msgs)


def _judges(case: Any, plan: RunPlan) -> list[Any]:
    """The case's judges; their modules (~0.5 s of imports) load when the judge node runs, not
    before the conversation's first model request."""
    from usersim.judges.select import select_judges

    return select_judges(case, plan.judge_config)


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
    case = trial.case
    now = datetime.now(UTC)
    started = now.replace(microsecond=now.microsecond // 1000 * 1000)  # as written: milliseconds
    t0 = time.perf_counter()
    plan = plan or RunPlan.of(cfg)
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
        steps=case.steps,
        variant=trial.variant,
        seed=trial.seed,
        agent=redact(cfg.agent),
        simulator=redact(cfg.simulator) if case.mode == "organic" else None,
        judge_model=plan.judge_model_label,
        started_at=started.isoformat(timespec="milliseconds"),
        branch=trial.branch,
    )
    history_len = len(case.input.history) if case.mode == "static" else 0
    attempts: list[tuple[int, dict[str, Any], Finalized]] = []
    with timeline.collecting() as spans:
        record = await _run_attempts(trial, cfg, plan, base, attempts, history_len, t0)
    # offsets from started_at as written (milliseconds), names redacted (SPECs may carry a key)
    shift = spans.wall0 - started.timestamp()
    return record.model_copy(update={"timeline": spans.shifted(shift, redact)})


async def _run_attempts(
    trial: Trial,
    cfg: RunConfig,
    plan: RunPlan,
    base: dict[str, Any],
    attempts: list[tuple[int, dict[str, Any], Finalized]],
    history_len: int,
    t0: float,
) -> RunRecord:
    from usersim.sandbox.base import open_sandbox

    case = trial.case
    agent = None
    try:
        agent = plan.load_agent()
        simulator = persona = None
        if case.persona:  # organic cases, and regression cases promoted from them (judges read the goal)
            persona = trial.persona or plan.persona(case)
        if case.mode == "organic":
            from usersim.simulator.base import load_simulator

            simulator = cfg.simulator_instance or load_simulator(cfg.simulator)
        origin = case.promoted_from
        pinned = origin is not None and origin.seed is not None  # the simulator replays the original seed
        tries = 1 + (max(0, cfg.resimulate) if case.mode == "organic" and not pinned else 0)
        for attempt in range(tries):
            seed = attempt_seed(trial.seed, attempt)
            timeline.at_turn(0, attempt)
            # the same world every attempt (sandbox seeded by the trial); only the simulated user differs
            sandbox = open_sandbox(case, seed=trial.seed, skills_on=trial.skills_on)
            if trial.initial_state:  # a branch: per-conversation call counts continue from the checkpoint
                sandbox.restore(trial.initial_state.get("tool_trace", []))
            ctx = RunContext(
                case=case,
                agent=agent,
                sandbox=sandbox,
                judges=lambda: _judges(case, plan),
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
            final = await graph.ainvoke(  # type: ignore[call-overload]  # langgraph types a dict start poorly
                start, context=ctx, config={"recursion_limit": 4 * max_turns + 20}
            )
            attempts.append((seed, final, final["final"]))
            if not final["final"].simulator_suspect:
                break
    except Exception as exc:  # the harness itself failed for this trial: keep going with the others
        return _harness_error(trial, base, agent, exc, t0)
    seed, final, done = attempts[-1]
    if cfg.simulator_instance is not None and case.mode == "organic":  # who played, once it has played
        base["simulator"] = redact(cfg.simulator_instance.spec)
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
        transcript=_transcript(final, history_len),
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
        transcript=None if last else _transcript(final, history_len),
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
    from usersim.graphs.judge_step import format_traceback

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
