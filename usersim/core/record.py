"""The run record: one conversation's result, as stored in SQLite and results.jsonl."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.events import Blame, SimEvent, SkillEvent, StopReason, ToolEvent, Usage
from usersim.core.verdict import Status, Verdict

RECORD_SCHEMA_VERSION = 2  # 2: blame, simulator_suspect, sim_events


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
    variant: Variant = Field(description="Variant of the case.")
    seed: int = Field(description="Per-conversation seed (sha256 of run seed and id).")
    status: Status = Field(description="passed | failed | error | unjudged.")
    score: float | None = Field(default=None, description="0..1 or null when nothing was scored.")
    blame: Blame | None = Field(
        default=None,
        description="Who a non-pass is charged to: agent (its behaviour), simulator (no valid user turn, or "
        "an unfaithful user), infrastructure (endpoint outage, harness or judge error), none (passed or "
        "undecided). Null in records written before schema 2.",
    )
    simulator_suspect: bool = Field(
        default=False,
        description="A fidelity verdict failed: the simulated user misbehaved, so a failure is not the agent's.",
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
    verdicts: list[Verdict] = Field(default_factory=list, description="All judges' verdicts.")
    transcript: list[TranscriptMessage] = Field(default_factory=list, description="The whole conversation.")
    history_len: int = Field(default=0, description="Messages at the start that were replayed case history.")
    tool_trace: list[ToolEvent] = Field(default_factory=list, description="Tool calls and results.")
    skill_events: list[SkillEvent] = Field(default_factory=list, description="Skills listed / triggered.")
    usage: dict[str, Usage] = Field(default_factory=dict, description="Per role: agent, simulator, judge.")
    context_tokens: list[int] = Field(
        default_factory=list, description="Tokens in the agent's context per turn."
    )
    agent: str = Field(description="Agent SPEC.")
    simulator: str | None = Field(default=None, description="Simulator SPEC (organic).")
    judge_model: str | None = Field(default=None, description="Judge model SPEC or null.")
    system_config: dict[str, Any] = Field(default_factory=dict, description="Agent configuration under test.")
    branch: dict[str, Any] | None = Field(
        default=None, description="For branched continuations: {parent_id, at_turn, index}."
    )
    error: str | None = Field(default=None, description="Harness error, if the conversation could not run.")
    started_at: str = Field(description="UTC ISO time the conversation started.")
    duration_s: float = Field(description="Wall time in seconds.")
