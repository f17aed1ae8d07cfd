"""Re-score stored transcripts with the current judges (and optionally a judge model) without re-running."""

from __future__ import annotations

from pathlib import Path

from usersim.cases.loader import find_case
from usersim.core.record import RunRecord
from usersim.core.secrets import redact
from usersim.core.verdict import Verdict, combine_score
from usersim.graphs.replay import messages_of, stop_of, turn_starts_of
from usersim.graphs.store import RunStore
from usersim.judges.base import JudgeConfig, JudgeState, apply_judges


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
    if case.mode == "organic":
        from usersim.personas.loader import resolve_persona

        persona = resolve_persona(case)
    state = JudgeState(
        tool_trace=record.tool_trace,
        skill_events=record.skill_events,
        turn_starts=turn_starts_of(record),
        history_len=record.history_len,
        stop=stop_of(record),
        turns=record.turns,
        persona=persona,
        variant=record.variant.model_dump(),
    )
    transcript = messages_of(record)
    verdicts, _ = await apply_judges(
        select_judges(case, config), transcript=transcript, case=case, state=state
    )
    verdicts = _keep_human_labels(record, verdicts)
    for v in verdicts:
        v.reason = redact(v.reason)
    from usersim.graphs.runner import decide_status

    stop = stop_of(record)
    if (
        stop is not None
        and stop.reason in ("agent_error", "simulator_error")
        and record.blame == "infrastructure"
    ):
        stop = stop.model_copy(update={"blame": "infrastructure"})  # an outage stays an outage
    status, blame, suspect = decide_status(verdicts, stop)
    return record.model_copy(
        update={
            "verdicts": verdicts,
            "status": status,
            "blame": blame,
            "simulator_suspect": suspect,
            "score": combine_score(verdicts),
            "judge_model": redact(config.judge_model) if config.judge_model else None,
        }
    )


def _keep_human_labels(record: RunRecord, verdicts: list[Verdict]) -> list[Verdict]:
    """Human labels already imported for a criterion survive re-scoring (people are not re-asked)."""
    labelled = {v.criterion: v for v in record.verdicts if v.judge == "human" and v.verdict != "unjudged"}
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
    meta["judge_model"] = redact(config.judge_model) if config.judge_model else None
    meta["judge_samples"] = config.judge_samples
    meta["rescored"] = True
    dst.set_meta(meta)
    dst.close()
    write_outputs(target, new, meta)
    return new
