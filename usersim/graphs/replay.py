"""Rebuild graph inputs from stored records: transcripts, judge state, checkpoints at turn k."""

from __future__ import annotations

from typing import Any

from usersim.core.events import Stop
from usersim.core.record import RunRecord, messages_of, to_message  # noqa: F401  (re-exported)


def turn_starts_of(record: RunRecord) -> list[int]:
    starts: list[int] = []
    seen: set[int] = set()
    for i, m in enumerate(record.transcript):
        if m.turn and m.turn not in seen:
            seen.add(m.turn)
            starts.append(i)
    return starts


def state_at_turn(record: RunRecord, k: int) -> dict[str, Any]:
    """Graph state after the agent answered user turn k: the checkpoint to branch from."""
    if k < 1 or k > record.turns:
        raise ValueError(f"record {record.id} has {record.turns} user turn(s); cannot branch at turn {k}")
    keep = [i for i, m in enumerate(record.transcript) if (m.turn or 0) <= k]
    cut = keep[-1] + 1 if keep else 0
    starts = [s for s in turn_starts_of(record) if s < cut]
    return {
        "messages": messages_of(record)[:cut],
        "turn": k,
        "turn_starts": starts,
        "tool_trace": [e for e in record.tool_trace if e.turn <= k],
        "skill_events": [e for e in record.skill_events if e.turn <= k],
        "played_by": {m.turn: m.by for m in record.transcript[:cut] if m.role == "user" and m.turn and m.by},
    }


def stop_of(record: RunRecord) -> Stop | None:
    """The record's stop with its blame; records before schema 3 stored only reason and detail, so
    the blame is read back from the record's (an outage stays an outage, a case error the case's)."""
    if record.stop is not None:
        return record.stop
    if not record.stop_reason:
        return None
    blame = None
    if record.stop_reason in ("agent_error", "simulator_error", "case_error"):
        blame = record.blame if record.blame in ("infrastructure", "case", "agent", "simulator") else None
    return Stop(reason=record.stop_reason, detail=record.stop_detail, blame=blame)
