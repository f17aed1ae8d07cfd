"""The `finalize` node: status, blame and the record's derived fields, from the graph's end state.

The same `finalize` function ends every conversation in the graph and re-decides stored ones in
`usersim rescore`, so a rescored record can only differ where the verdicts differ.

Rules, in order:
1. An error stop decides: `case_error` -> error/case, `simulator_error` -> error/simulator (or
   infrastructure for an outage), `agent_error` -> error/agent (or infrastructure for an outage).
   The verdicts on a cut-short conversation do not turn an error into a failure.
2. Otherwise the deciding verdicts' status (`core.verdict.combine_status`). A failure is the
   agent's unless it is simulator-suspect: a fidelity verdict with `details.precision == "high"`
   and a non-empty `details.caused` (how it could have caused the failure) whose `details.turn` is
   at or before the turn of the agent's first failing evidence (the earliest `evidence_turn` of a
   failing deciding verdict; a failure with no evidence message counts from the last turn). A
   suspect attempt is `inconclusive` with blame `simulator`. Fidelity verdicts without details
   (records written before the fidelity checks declared their precision) are advisory: shown, never
   excusing.
3. A judge error is error/infrastructure; passed and unjudged are blame none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.events import Blame, SimEvent, Stop
from usersim.core.messages import Message
from usersim.core.secrets import redact
from usersim.core.verdict import Status, Verdict, combine_score, combine_status

HIGH_PRECISION = "high"


class Violation(BaseModel):
    """A high-precision fidelity failure that may excuse the agent."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    turn: int
    kind: str = ""
    caused: str = ""
    reason: str = ""


class Decision(BaseModel):
    """Status and blame of one attempt, and why it is (or is not) simulator-suspect."""

    model_config = ConfigDict(extra="forbid")

    status: Status
    blame: Blame
    simulator_suspect: bool = False
    suspect_reason: str = ""


class Finalized(Decision):
    """Everything the record takes from the graph's end state besides the raw transcript and trace."""

    stop: Stop | None = Field(default=None, description="The stop, with its blame, secrets redacted.")
    traceback: str | None = Field(default=None, description="The crash's traceback (error stops).")
    verdicts: list[Verdict] = Field(default_factory=list, description="Verdicts, reasons redacted.")
    sim_events: list[SimEvent] = Field(
        default_factory=list, description="Simulator events plus missed events."
    )
    score: float | None = None


def turn_of(index: int, turn_starts: Sequence[int], history_len: int) -> int:
    """The user turn a transcript index belongs to (0 = replayed history)."""
    if index < history_len:
        return 0
    return sum(1 for s in turn_starts if s <= index)


def first_failing_turn(
    verdicts: Sequence[Verdict], turn_starts: Sequence[int], history_len: int, turns: int
) -> int | None:
    """The turn of the agent's first failing evidence; None when no deciding verdict failed."""
    failing = [v for v in verdicts if v.counts_toward_status and v.verdict == "fail"]
    if not failing:
        return None
    known = [
        turn_of(v.evidence_turn, turn_starts, history_len) for v in failing if v.evidence_turn is not None
    ]
    return min(known) if known else turns  # no evidence message: the failure may come from the end


def high_violations(
    verdicts: Sequence[Verdict], turn_starts: Sequence[int], history_len: int
) -> list[Violation]:
    """Failed fidelity verdicts that declare high precision and how they could cause a failure."""
    out = []
    for v in verdicts:
        if not v.judge.startswith("fidelity") or v.verdict != "fail" or not isinstance(v.details, dict):
            continue
        d = v.details
        if d.get("precision") != HIGH_PRECISION or not str(d.get("caused") or "").strip():
            continue  # advisory, or no causal path to the agent's behaviour: shown, never excusing
        turn = d.get("turn")
        if not isinstance(turn, int) and isinstance(d.get("message_index"), int):
            turn = turn_of(d["message_index"], turn_starts, history_len)
        if not isinstance(turn, int):
            continue  # no place in the conversation: cannot be shown to come first
        out.append(
            Violation(
                judge=v.judge,
                turn=turn,
                kind=str(d.get("kind") or ""),
                caused=str(d["caused"]),
                reason=v.reason,
            )
        )
    return sorted(out, key=lambda x: x.turn)


def decide(
    verdicts: Sequence[Verdict],
    stop: Stop | None,
    *,
    turn_starts: Sequence[int] = (),
    history_len: int = 0,
    turns: int = 0,
) -> Decision:
    """Status and blame of one finished attempt (the module docstring's rules)."""
    if stop is not None and stop.reason == "case_error":
        return Decision(status="error", blame="case")
    if stop is not None and stop.reason in ("simulator_error", "agent_error"):
        who: Blame = "simulator" if stop.reason == "simulator_error" else "agent"
        return Decision(status="error", blame="infrastructure" if stop.blame == "infrastructure" else who)
    status = combine_status(list(verdicts))
    if status == "failed":
        at = first_failing_turn(verdicts, turn_starts, history_len, turns)
        before = [
            x for x in high_violations(verdicts, turn_starts, history_len) if at is not None and x.turn <= at
        ]
        if before:
            x = before[0]
            why = (
                f"{x.judge} at user turn {x.turn} (high precision: {x.kind or 'violation'}) came at or before "
                f"the agent's first failing evidence (turn {at}) and could have caused it: {x.caused}"
            )
            return Decision(
                status="inconclusive", blame="simulator", simulator_suspect=True, suspect_reason=why
            )
        return Decision(status="failed", blame="agent")
    if status == "error":  # a judge that crashed or gave no usable answer
        return Decision(status="error", blame="infrastructure")
    return Decision(status=status, blame="none")


def finalize(state: Mapping[str, Any], *, persona: Any = None, history_len: int = 0) -> Finalized:
    """The record fields of a finished conversation state (graph end state, or rebuilt from a record)."""
    verdicts = [_redacted(v) for v in state.get("verdicts", [])]
    stop: Stop | None = state.get("stop")
    decision = decide(
        verdicts,
        stop,
        turn_starts=state.get("turn_starts", []),
        history_len=history_len,
        turns=state.get("turn", 0),
    )
    trace = state.get("traceback")
    return Finalized(
        **decision.model_dump(),
        stop=stop.model_copy(update={"detail": redact(stop.detail)}) if stop else None,
        traceback=redact(trace) if trace else None,
        verdicts=verdicts,
        sim_events=sim_events_of(persona, state) if persona is not None or state.get("sim_events") else [],
        score=combine_score(verdicts),
    )


def _redacted(v: Verdict) -> Verdict:
    """The verdict with its reason redacted (the same verdict when there is nothing to redact)."""
    reason = redact(v.reason)
    return v if reason == v.reason else v.model_copy(update={"reason": reason})


def sim_events_of(persona: Any, state: Mapping[str, Any]) -> list[SimEvent]:
    """The simulator's trace plus, at the end, every scripted event that was never said or reached."""
    events = [
        (SimEvent.model_validate(e) if isinstance(e, dict) else e).model_copy(
            update={"detail": redact((SimEvent.model_validate(e) if isinstance(e, dict) else e).detail)}
        )
        for e in state.get("sim_events", [])
    ]
    if persona is None or not getattr(persona, "events", None):
        return events
    from usersim.simulator.scripted import event_progress

    turns = state.get("turn", 0)
    messages: list[Message] = state.get("messages", [])
    for status in event_progress(persona, messages, turns):
        if status.said_at is not None:
            continue
        if status.due is None or status.due > turns:
            when = f"due turn {status.due}" if status.due else "its trigger never happened"
            detail = f"{status.describe()} never reached ({when}; conversation ended at turn {turns})"
        else:
            detail = f"{status.describe()} due turn {status.due} but never said: its change is not applied"
        events.append(SimEvent(turn=turns, kind="event_missed", detail=redact(detail)))
    return events


def deciding_attempt(decisions: Sequence[Decision]) -> int:
    """Which attempt decides a conversation: the first that is not simulator-suspect, else the last
    (every attempt suspect: the conversation is inconclusive, blame simulator)."""
    return next((i for i, d in enumerate(decisions) if not d.simulator_suspect), len(decisions) - 1)
