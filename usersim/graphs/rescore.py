"""Re-score stored transcripts with the current judges (and optionally a judge model) without re-running.

Each stored attempt is rebuilt into a conversation state and goes through the graph's own judge
step (`nodes.run_judges`) and `finalize.finalize`, so status and blame are decided exactly as in
the run; only the verdicts can differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from usersim.cases.loader import find_case
from usersim.core.events import SimEvent, SkillEvent, Stop, ToolEvent
from usersim.core.record import Attempt, RunRecord, TranscriptMessage
from usersim.core.secrets import redact
from usersim.core.verdict import Verdict
from usersim.graphs.finalize import Finalized, deciding_attempt, finalize
from usersim.graphs.judge_step import run_judges
from usersim.graphs.replay import stop_of, to_message
from usersim.graphs.store import RunStore
from usersim.judges.base import JudgeConfig


def _turn_starts(transcript: list[TranscriptMessage]) -> list[int]:
    starts: list[int] = []
    seen: set[int] = set()
    for i, m in enumerate(transcript):
        if m.turn and m.turn not in seen:
            seen.add(m.turn)
            starts.append(i)
    return starts


def _state(
    transcript: list[TranscriptMessage],
    tool_trace: list[ToolEvent],
    skill_events: list[SkillEvent],
    *,
    turns: int,
    stop: Stop | None,
    sim_events: list[SimEvent],
    traceback: str | None,
) -> dict[str, Any]:
    """A finished conversation state rebuilt from what a record stores."""
    return {
        "messages": [to_message(m) for m in transcript],
        "turn": turns,
        "turn_starts": _turn_starts(transcript),
        "tool_trace": tool_trace,
        "skill_events": skill_events,
        "stop": stop,
        # finalize adds the missed scripted events again: keep only what the simulator decided
        "sim_events": [e for e in sim_events if e.kind != "event_missed"],
        "traceback": traceback,
    }


async def rescore_record(
    record: RunRecord, config: JudgeConfig, cases_paths: list[str] | None = None, case_file: str | None = None
) -> RunRecord:
    """The record with fresh verdicts, status and score; transcript and trace untouched. The case is
    read from `case_file` (the file the run used) when it still exists, else found by id in `cases_paths`."""
    from usersim.judges.select import select_judges

    if case_file and Path(case_file).is_file() and not cases_paths:
        case = find_case(case_file)
    else:
        case = find_case(record.case_id, cases_paths)
    persona = None
    if case.persona:
        from usersim.personas.loader import resolve_persona

        persona = resolve_persona(case)
    judges = select_judges(case, config)
    variant = record.variant.model_dump()

    async def decide(state: dict[str, Any], keep: list[Verdict]) -> Finalized:
        state |= await run_judges(state, case, judges, persona=persona, variant=variant)  # type: ignore[arg-type]
        state["verdicts"] = _keep_human_labels(keep, state["verdicts"])
        return finalize(
            state, persona=persona if case.mode == "organic" else None, history_len=record.history_len
        )

    own = _state(
        record.transcript,
        record.tool_trace,
        record.skill_events,
        turns=record.turns,
        stop=stop_of(record),
        sim_events=record.sim_events,
        traceback=record.traceback,
    )
    earlier = [a for a in record.attempts if a.transcript is not None]
    states = [
        _state(
            a.transcript or [],
            a.tool_trace or [],
            a.skill_events or [],
            turns=a.turns,
            stop=a.stop,
            sim_events=a.sim_events,
            traceback=None,
        )
        for a in earlier
    ]
    finals = [await decide(s, a.verdicts) for s, a in zip(states, earlier, strict=True)]
    finals.append(await decide(own, record.verdicts))
    k = deciding_attempt(finals)
    done = finals[k]
    update: dict[str, Any] = {
        "verdicts": done.verdicts,
        "status": done.status,
        "blame": done.blame,
        "simulator_suspect": done.simulator_suspect,
        "suspect_reason": done.suspect_reason,
        "score": done.score,
        "stop": done.stop,
        "stop_reason": done.stop.reason if done.stop else None,
        "stop_detail": done.stop.detail if done.stop else "",
        "traceback": done.traceback,
        "sim_events": done.sim_events if record.mode == "organic" else [],
        "judge_model": redact(config.judge_model) if config.judge_model else None,
    }
    if record.attempts:
        update["attempts"] = _attempts(record, earlier, finals, k)
        if k < len(earlier):  # an earlier attempt is clean under the new judges: it decides now
            a = earlier[k]
            update |= {
                "transcript": a.transcript,
                "tool_trace": a.tool_trace or [],
                "skill_events": a.skill_events or [],
                "turns": a.turns,
            }
    return record.model_copy(update=update)


def _attempts(record: RunRecord, earlier: list[Attempt], finals: list[Finalized], k: int) -> list[Attempt]:
    """The record's attempts with their new decisions; the deciding one gives its transcript to the record."""
    own = next((a for a in record.attempts if a.transcript is None), record.attempts[-1])
    stored = [*earlier, own]
    out = []
    for i, (a, f) in enumerate(zip(stored, finals, strict=True)):
        fields: dict[str, Any] = {
            "status": f.status,
            "blame": f.blame,
            "simulator_suspect": f.simulator_suspect,
            "suspect_reason": f.suspect_reason,
            "verdicts": f.verdicts,
            "sim_events": f.sim_events,
        }
        if i == len(stored) - 1 and k != i:  # the former deciding attempt keeps its own transcript now
            fields |= {
                "transcript": record.transcript,
                "tool_trace": record.tool_trace,
                "skill_events": record.skill_events,
            }
        if i == k:
            fields |= {"transcript": None, "tool_trace": None, "skill_events": None}
        out.append(a.model_copy(update=fields))
    return out


async def _recheck(
    records: list[RunRecord],
    meta: dict[str, Any],
    config: JudgeConfig,
    cases_paths: list[str] | None,
    dst: RunStore,
) -> list[RunRecord]:
    """graphs.recheck over the rescored records (the same seed samples the same conversations)."""
    from usersim.graphs.recheck import recheck_run
    from usersim.llm.client import aclose_clients

    files = meta.get("case_files") or {}
    found: dict[str, Any] = {}

    def case_of(case_id: str) -> Any:
        if case_id not in found:
            file = files.get(case_id)
            try:
                if file and Path(file).is_file() and not cases_paths:
                    found[case_id] = find_case(file)
                else:
                    found[case_id] = find_case(case_id, cases_paths)
            except (ValueError, KeyError, OSError):  # UnknownNameError is a KeyError
                found[case_id] = None  # a case no longer found is not re-checked
        return found[case_id]

    def persona_of(case: Any) -> Any:
        from usersim.personas.loader import resolve_persona

        return resolve_persona(case)

    try:
        records, sample, changed = await recheck_run(
            records, case_of, config, seed=int(meta.get("seed") or 0), persona_of=persona_of
        )
    finally:
        await aclose_clients()
    for i in changed:
        dst.put(records[i], i)
    meta["recheck"] = sample.model_dump()
    return records


def _keep_human_labels(before: list[Verdict], verdicts: list[Verdict]) -> list[Verdict]:
    """Human labels already imported for a criterion survive re-scoring (people are not re-asked)."""
    labelled = {v.criterion: v for v in before if v.judge == "human" and v.verdict != "unjudged"}
    return [labelled.get(v.criterion, v) if v.judge == "human" else v for v in verdicts]


async def rescore_run(
    run_dir: Path, config: JudgeConfig, out_dir: Path | None = None, cases_paths: list[str] | None = None
) -> list[RunRecord]:
    """Re-score every record of RUN_DIR; writes to OUT_DIR (default: RUN_DIR in place). Cases come
    from the files the run used (its meta), or from `cases_paths` when given."""
    from usersim.graphs.outputs import write_outputs

    src = RunStore(run_dir / "results.sqlite")
    meta, records = src.get_meta(), src.records()
    src.close()
    if not records:
        raise ValueError(f"{run_dir} holds no stored records (results.sqlite)")
    if not config.extra_judges and meta.get("extra_judges"):  # the run's own extra judges (--judge)
        config = config.model_copy(update={"extra_judges": list(meta["extra_judges"])})
    target = out_dir or run_dir
    dst = RunStore(target / "results.sqlite")
    new = []
    try:
        for ordinal, record in enumerate(records):
            if record.error:  # nothing ran, nothing to judge
                new.append(record)
            else:
                case_file = (meta.get("case_files") or {}).get(record.case_id)
                new.append(await rescore_record(record, config, cases_paths, case_file))
            dst.put(new[-1], ordinal)
    finally:
        from usersim.llm.client import aclose_clients

        await aclose_clients()  # the judge model's pooled HTTP clients belong to this event loop
    meta.pop("recheck", None)
    if config.judge_model:  # seed 003's re-check over the re-judged run, with the run's own seed
        new = await _recheck(new, meta, config, cases_paths, dst)
    meta["judge_model"] = redact(config.judge_model) if config.judge_model else None
    meta["judge_samples"] = config.judge_samples
    meta["rescored"] = True
    dst.set_meta(meta)
    dst.close()
    write_outputs(target, new, meta)
    return new
