"""The run record: one conversation's result, as stored in SQLite and results.jsonl."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.events import Blame, SimEvent, SkillEvent, Stop, StopReason, ToolEvent, Usage
from usersim.core.messages import Message, ToolCall
from usersim.core.timeline import TimelineSpan
from usersim.core.verdict import Status, Verdict

# 2: blame, simulator_suspect, sim_events; 3: stop (with its blame), traceback, suspect_reason, attempts.
# The timeline (when each step happened) was added in schema 3 with a default.
# 4: a user message's `by` (human | simulator: who played that turn; `usersim play`), the stop
# reason `user_stopped` and the sim event kind `seat`.
# Older records stay readable: every field added since has a default.
RECORD_SCHEMA_VERSION = 4


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Variant(Strict):
    """Which variant of the case this conversation ran."""

    length: Literal["4k", "16k", "32k"] | None = Field(default=None, description="Long-context length.")
    position: Literal["beginning", "middle", "end"] | None = Field(
        default=None, description="Key info position."
    )
    group: Literal["A", "B"] | None = Field(default=None, description="Skill group: A skills off, B on.")
    repeat: int = Field(default=0, description="Repeat index (0-based).")
    persona: str | None = Field(default=None, description="Persona variant id (exploration).")

    def key(self) -> str:
        parts = [f"{k}={v}" for k, v in self.model_dump(exclude={"repeat"}).items() if v is not None]
        parts.append(f"r{self.repeat}")
        return ",".join(parts)


class TranscriptMessage(Strict):
    """A transcript entry as written to results.jsonl."""

    role: str = Field(description="system | user | assistant | tool.")
    content: str = Field(description="Text.")
    tool_calls: list[dict[str, Any]] | None = Field(default=None, description="[{id, name, arguments}].")
    tool_call_id: str | None = Field(default=None, description="For tool results.")
    name: str | None = Field(default=None, description="Tool name for tool results.")
    is_error: bool | None = Field(default=None, description="Tool result was an error.")
    turn: int | None = Field(
        default=None, description="User turn this message belongs to (0 = replayed history)."
    )
    by: Literal["human", "simulator"] | None = Field(
        default=None,
        description="User messages of organic conversations: who played the turn, the person in the user's "
        "seat (`usersim play`) or the simulator; null for replayed history, scripted turns and other roles "
        "(and in records before schema 4).",
    )


class Attempt(Strict):
    """One simulation of an organic conversation. A simulator-suspect attempt is simulated again with
    a derived seed (`--resimulate N`); every attempt is kept. The record's own fields are those of
    its last attempt, the one that decided the status; earlier attempts keep their transcript here."""

    index: int = Field(description="0-based attempt number (0 = the trial's own seed).")
    seed: int = Field(
        description="Seed of this attempt: the trial seed, then sha256 of (trial seed, attempt)."
    )
    status: Status = Field(description="This attempt's status on its own (inconclusive when suspect).")
    blame: Blame = Field(description="This attempt's blame on its own.")
    simulator_suspect: bool = Field(
        default=False, description="A high-precision fidelity violation excused it."
    )
    suspect_reason: str = Field(
        default="", description="Which violation, at which turn, before which failure."
    )
    stop: Stop | None = Field(default=None, description="Why this attempt ended.")
    turns: int = Field(default=0, description="User turns taken.")
    verdicts: list[Verdict] = Field(default_factory=list, description="This attempt's verdicts.")
    sim_events: list[SimEvent] = Field(default_factory=list, description="This attempt's simulator events.")
    transcript: list[TranscriptMessage] | None = Field(
        default=None,
        description="Earlier attempts: their transcript. Null for the deciding attempt (the record's own).",
    )
    tool_trace: list[ToolEvent] | None = Field(
        default=None, description="Earlier attempts: their tool calls. Null for the deciding attempt."
    )
    skill_events: list[SkillEvent] | None = Field(
        default=None, description="Earlier attempts: their skill events. Null for the deciding attempt."
    )


class RunRecord(Strict):
    """One conversation: case, variant, transcript, verdicts, status."""

    schema_version: int = Field(default=RECORD_SCHEMA_VERSION, description="Record format version.")
    id: str = Field(description="Unique in the run: case_id|variant key.")
    run_id: str = Field(description="Run this record belongs to.")
    case_id: str = Field(description="Case id.")
    dimension: str = Field(description="Case dimension.")
    category: str | None = Field(default=None, description="Case category code.")
    difficulty: str | None = Field(default=None, description="Case difficulty.")
    mode: Literal["static", "organic"] = Field(description="static or organic.")
    scoring: str = Field(description="Scoring label, e.g. auto+llm_judge.")
    tags: list[str] = Field(default_factory=list, description="Case tags.")
    steps: int | None = Field(
        default=None, description="The case's task steps (seed 001 complexity curve); null when it sets none."
    )
    variant: Variant = Field(description="Variant of the case.")
    seed: int = Field(description="Per-conversation seed (sha256 of run seed and id).")
    status: Status = Field(
        description="passed | failed | error | unjudged | inconclusive (every attempt was simulator-suspect)."
    )
    score: float | None = Field(default=None, description="0..1 or null when nothing was scored.")
    blame: Blame | None = Field(
        default=None,
        description="Who a non-pass is charged to: agent (its behaviour, or its code crashed), simulator (no "
        "valid user turn, or an unfaithful user in every attempt), infrastructure (endpoint outage, harness "
        "or judge error), case (the test author's tool, check or judge code raised), none (passed or "
        "undecided). Null in records written before schema 2.",
    )
    simulator_suspect: bool = Field(
        default=False,
        description="The deciding attempt failed after a high-precision fidelity violation that could have "
        "caused the failure (at or before the agent's first failing evidence): not charged to the agent.",
    )
    suspect_reason: str = Field(
        default="", description="For a suspect record: the violation, its turn, and the failure it precedes."
    )
    attempts: list[Attempt] = Field(
        default_factory=list,
        description="Organic conversations: every simulation of this conversation, in order (more than one "
        "when an attempt was simulator-suspect and resimulated); the last one decided the status.",
    )
    persona: str | None = Field(default=None, description="Persona id the simulated user played (organic).")
    sim_events: list[SimEvent] = Field(
        default_factory=list,
        description="Organic runs: what the simulator framework decided per turn (retries, rejected outputs, "
        "accepted/refused stops, give_up, scripted events said or missed, guard hits).",
    )
    turns: int = Field(description="User turns taken.")
    stop_reason: StopReason | None = Field(default=None, description="Why the conversation ended.")
    stop_detail: str = Field(default="", description="Stop detail.")
    stop: Stop | None = Field(
        default=None, description="The stop as the graph decided it, with its blame (schema 3; null before)."
    )
    traceback: str | None = Field(
        default=None,
        description="Error records: the traceback of the crash (the agent's code, or the case's tool, check or "
        "judge code), secrets redacted.",
    )
    verdicts: list[Verdict] = Field(default_factory=list, description="All judges' verdicts.")
    transcript: list[TranscriptMessage] = Field(default_factory=list, description="The whole conversation.")
    history_len: int = Field(default=0, description="Messages at the start that were replayed case history.")
    tool_trace: list[ToolEvent] = Field(default_factory=list, description="Tool calls and results.")
    skill_events: list[SkillEvent] = Field(default_factory=list, description="Skills listed / triggered.")
    usage: dict[str, Usage] = Field(default_factory=dict, description="Per role: agent, simulator, judge.")
    context_tokens: list[int] = Field(
        default_factory=list,
        description="Tokens in the agent's context per user turn: the prompt tokens its model reported for "
        "the turn's first request when it made one call that reported usage, else the messages it was "
        "sent counted with tiktoken (the model's own encoding when cached, else cl100k_base).",
    )
    timeline: list[TimelineSpan] = Field(
        default_factory=list,
        description="When each step happened (model calls, tool calls, agent, simulator and judge steps), "
        "seconds from started_at; what `--otel` and `usersim otel export` build traces from.",
    )
    agent: str = Field(description="Agent SPEC.")
    simulator: str | None = Field(
        default=None,
        description="Simulator SPEC (organic). `usersim play`: `human` when the person played every user "
        "turn, `human+SPEC` (e.g. human+rule) when the seat was shared with that simulator; each user "
        "message's `by` says who played it.",
    )
    judge_model: str | None = Field(default=None, description="Judge model SPEC or null.")
    system_config: dict[str, Any] = Field(default_factory=dict, description="Agent configuration under test.")
    branch: dict[str, Any] | None = Field(
        default=None, description="For branched continuations: {parent_id, at_turn, index}."
    )
    error: str | None = Field(default=None, description="Harness error, if the conversation could not run.")
    started_at: str = Field(description="UTC ISO time the conversation started.")
    duration_s: float = Field(description="Wall time in seconds.")


def to_message(m: TranscriptMessage) -> Message:
    """A stored transcript message as the graph's Message."""
    return Message(
        role=m.role,
        content=m.content,
        tool_calls=[
            ToolCall(id=c.get("id", ""), name=c["name"], arguments=c.get("arguments") or {})
            for c in m.tool_calls or []
        ],
        tool_call_id=m.tool_call_id,
        name=m.name,
        is_error=bool(m.is_error),
    )


def messages_of(record: RunRecord) -> list[Message]:
    """A record's whole transcript as graph Messages."""
    return [to_message(m) for m in record.transcript]
