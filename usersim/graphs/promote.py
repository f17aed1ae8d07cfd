"""Promote a run record (typically a failing organic conversation) to a static regression case."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from usersim.cases.loader import find_case, load_case
from usersim.cases.schema import Case, CaseInput, PromotedFrom
from usersim.core.record import RunRecord
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.graphs.replay import messages_of
from usersim.graphs.store import RunStore


def find_record(run_dir: Path, record_id: str) -> tuple[RunRecord, dict]:
    store = RunStore(run_dir / "results.sqlite")
    try:
        records, meta = store.records(), store.get_meta()
    finally:
        store.close()
    by_id = {r.id: r for r in records}
    if record_id in by_id:
        return by_id[record_id], meta
    matches = [r for r in records if r.case_id == record_id]
    if len(matches) == 1:
        return matches[0], meta
    hint = did_you_mean(record_id, set(by_id))
    raise UnknownNameError(
        f"No record '{record_id}' in {run_dir}.{hint} Records: {', '.join(sorted(by_id)[:10])}"
    )


def promoted_case(record: RunRecord, case: Case, meta: dict) -> Case:
    """A static case that replays the record's user turns; the agent answers each live, and the recorded
    replies are kept as `reference_transcript` so replays report where they diverge."""
    messages = messages_of(record)
    history, live = messages[: record.history_len], messages[record.history_len :]
    users = [m.content for m in live if m.role == "user"]
    if not users:
        raise ValueError(f"record {record.id} has no user turn to replay")
    digest = hashlib.sha256(record.id.encode()).hexdigest()[:6]
    skills = case.skills.model_copy(deep=True)
    if record.variant.group is not None:
        skills.skill_enabled, skills.groups = record.variant.group == "B", []
    return case.model_copy(
        deep=True,
        update={
            "id": f"{case.id}-REG-{digest}",
            "title": f"{case.title}（回归：{record.status}，来自 {record.id}）",
            "mode": "static",
            "input": CaseInput(history=history, message=users[0], script=users[1:]),
            "max_turns": None,
            "long_context": None,  # the history is already the expanded variant
            "skills": skills,
            "tags": sorted(set(case.tags) | {"regression"}),
            "promoted_from": PromotedFrom(
                run_id=str(meta.get("run_id", "")),
                record_id=record.id,
                case_id=case.id,
                agent=record.agent,
                simulator=record.simulator,
                status=record.status,
            ),
            "reference_transcript": live,
        },
    )


def promote(run_dir: Path, record_id: str, to_dir: Path, cases_paths: list[str] | None = None) -> Path:
    """Write the promoted case to TO_DIR/<id>.yaml, re-load it to prove it is valid, return its path."""
    record, meta = find_record(run_dir, record_id)
    if record.error:
        raise ValueError(f"record {record.id} did not run ({record.error}); nothing to promote")
    case = find_case(record.case_id, cases_paths)
    new = promoted_case(record, case, meta)
    to_dir.mkdir(parents=True, exist_ok=True)
    path = to_dir / f"{new.id}.yaml"
    data = new.model_dump(mode="json", exclude_defaults=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100), encoding="utf-8")
    load_case(path)
    return path
