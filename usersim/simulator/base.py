"""The user-simulator role: one protocol, one registry of SPEC schemes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from usersim.core import registry as registries
from usersim.core.events import SimEvent, ToolEvent, Usage
from usersim.core.messages import Message
from usersim.core.registry import Registry
from usersim.personas.schema import Persona


class SimulatorView(BaseModel):
    """What the simulated user may see: never the judges' criteria, never tool results."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="Case being run.")
    persona: Persona = Field(description="The persona, with the case's overrides applied.")
    goal: str | None = Field(default=None, description="The case's task goal (任务目标).")
    opening_message: str | None = Field(default=None, description="The case's initial message.")
    transcript: list[Message] = Field(
        default_factory=list, description="User and assistant text messages so far (no tool messages)."
    )
    turn: int = Field(description="The user turn about to be produced (1-based).")
    max_turns: int = Field(description="Turn budget.")
    seed: int = Field(default=0, description="Per-conversation seed.")


class SimulatorTurn(BaseModel):
    """The simulated user's next move."""

    model_config = ConfigDict(extra="forbid")

    message: str | None = Field(default=None, description="What the user says (None when stopping silently).")
    stop: Literal["goal_met", "gave_up", "transfer", "out_of_scope", "user_stopped"] | None = Field(
        default=None,
        description="Ends the conversation (the simulated user's decision; user_stopped: a person in the "
        "seat stopped, `usersim play`).",
    )
    closing: bool = Field(
        default=False,
        description="On a stop: `message` is the user's last words and goes into the transcript "
        "(the LLM simulator's closing text before ###STOP###); otherwise a stop's message is not shown.",
    )
    reason: str = Field(default="", description="Why (for stops and the fidelity judge).")
    usage: Usage | None = Field(default=None, description="Model usage, if any.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Simulator internals (agenda state ...).")
    events: list[SimEvent] = Field(
        default_factory=list, description="What the framework decided this turn (retries, guards, stops ...)."
    )
    by: Literal["human", "simulator"] = Field(
        default="simulator",
        description="Who played the turn: a simulator, or a person in the user's seat (`usersim play`); "
        "the record marks the user message with it.",
    )


class SimulatorError(RuntimeError):
    """The simulator could not produce a valid turn (reported as simulator_error, blame simulator).

    `events` holds what was tried (retries and rejected outputs) so the record keeps the trace;
    `outage` marks a simulator endpoint that stayed down (blame infrastructure, not simulator)."""

    def __init__(self, message: str, events: list[SimEvent] | None = None, *, outage: bool = False) -> None:
        super().__init__(message)
        self.events = list(events or [])
        self.outage = outage


class UserSimulator(Protocol):
    spec: str

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn: ...


class Observed(BaseModel):
    """What a person in the user's seat is shown beyond the SimulatorView (`usersim play`): the whole
    conversation with tool calls and results, the tool trace, and the domain state as it stands.
    A simulated user never gets it (simulator.human is the only observer)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[Message] = Field(description="Every message so far, tool calls and results included.")
    tool_trace: list[ToolEvent] = Field(description="Every tool call so far, as the sandbox answered it.")
    state: dict[str, list[dict[str, Any]]] | None = Field(
        description="The case environment's tables now (None: the case has no environment)."
    )


class ObservingSimulator(UserSimulator, Protocol):
    """A simulator that is shown what the tools did before each turn (the graph calls `observe`
    right before `next_turn` when the simulator has it)."""

    def observe(self, seen: Observed) -> None: ...


simulator_registry: Registry[Callable[[str], UserSimulator]] = registries.simulators


def replay_spec(recorded: str | None) -> str:
    """The SPEC that plays a stored conversation on (promote, shrink re-run its case): the record's
    simulator, except a person's seat (`usersim play`), which no one can play again: `human` goes on
    as the rule simulator, `human+SPEC` as SPEC."""
    if not recorded:
        return "rule"
    if recorded == "human" or recorded.startswith("human+"):
        return recorded.removeprefix("human").removeprefix("+") or "rule"
    return recorded


def load_simulator(spec: str) -> UserSimulator:
    """Resolve a simulator SPEC: `rule`, `rule:SEEDSALT`, `openai:MODEL`."""
    return simulator_registry.get(spec.split(":", 1)[0])(spec)
