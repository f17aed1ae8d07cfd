"""Shared event types: tool calls as the sandbox answered them, skill disclosure, stops, usage."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

StopReason = Literal[
    "goal_met",
    "gave_up",
    "transfer",
    "out_of_scope",
    "max_turns",
    "agent_error",
    "simulator_error",
    "replay_complete",
    "case_error",
    "user_stopped",  # a person in the user's seat ended it (`usersim play`: /stop, end of input, Ctrl-C)
]
# Who a non-passing conversation is charged to: the agent's behaviour, the simulated user (an
# invalid or unfaithful user), the infrastructure (endpoint outage, harness or judge error), the
# case (the test author's files or code: a crashing user tool, check or judge; a check naming a table
# that does not exist), or none.
Blame = Literal["agent", "simulator", "infrastructure", "case", "none"]
SimEventKind = Literal[
    "retry",
    "rejected",
    "stop_accepted",
    "stop_refused",
    "give_up",
    "event_said",
    "event_missed",
    "event_reminded",
    "guard",
    "resimulated",
    "proposal_accepted",
    "proposal_refused",
    "tactic",  # a manipulative user's push (simulator/adversary.py): the tactic and the reply before it
    "seat",  # `usersim play`: the person took the user's seat, or handed it back to the simulator
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InterceptHit(Strict):
    """Which of a case's tool_intercepts fired on a call, and what it did."""

    index: int = Field(description="Position of the intercept in the case's `tool_intercepts`.")
    kind: Literal["result", "instruction", "timeout", "latency"] = Field(
        description="result: the result was replaced; instruction: text was inserted into the real "
        "result (prompt injection); timeout; latency only."
    )
    template: str | None = Field(default=None, description="Injection: the template name ('' for a text).")
    position: str | None = Field(default=None, description="Injection: start / end / field (the field path).")
    disguise: str | None = Field(default=None, description="Injection: how the text was dressed.")
    text: str | None = Field(default=None, description="Injection: the instruction text inserted.")


class ToolEvent(Strict):
    """One tool call and its result, as the sandbox answered it (or the agent's own tool did)."""

    turn: int = Field(description="User turn (1-based) during which the call happened.")
    message_index: int = Field(default=-1, description="Transcript index of the tool result message.")
    call_number: int = Field(description="1-based count of calls to this tool in the conversation.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments as called.")
    result: str = Field(description="Result text returned to the agent.")
    is_error: bool = Field(default=False, description="Whether the result is an error.")
    intercepted: bool = Field(default=False, description="Whether a tool_intercept replaced the result.")
    latency_s: float = Field(default=0.0, description="Simulated latency.")
    intercept: InterceptHit | None = Field(
        default=None, description="The tool_intercept that fired on this call, if any (also latency only)."
    )
    executed_by: Literal["sandbox", "agent"] = Field(
        default="sandbox",
        description="Who ran the call: usersim's sandbox, or the agent itself with its own tools (a "
        "LangGraph graph with ?tools=own, a deployed graph): recorded from the agent's messages, and "
        "invisible to the sandbox state (state checks say so, unjudged).",
    )


class SkillEvent(Strict):
    """A skill disclosed to the agent (listed) or loaded by it (triggered)."""

    turn: int = Field(description="User turn of the event.")
    skill: str = Field(description="Skill name.")
    kind: Literal["listed", "triggered"] = Field(description="listed up front, or triggered (body loaded).")


class Stop(Strict):
    """Why the conversation ended."""

    reason: StopReason = Field(description="Typed stop reason.")
    detail: str = Field(default="", description="Human-readable detail (error text, simulator reason).")
    blame: Blame | None = Field(
        default=None,
        description="For error stops: who caused it (agent_error: agent, or infrastructure for an endpoint "
        "outage; simulator_error: simulator, or infrastructure; case_error: case).",
    )


class SimEvent(Strict):
    """One thing the simulator framework decided about the simulated user's output."""

    turn: int = Field(description="User turn (1-based) the event belongs to.")
    kind: SimEventKind = Field(
        description="retry | rejected (an output was regenerated) | stop_accepted | stop_refused | give_up | "
        "event_said | event_missed | event_reminded | guard (leak, character, language, length) | "
        "resimulated (an earlier attempt was simulator-suspect: this conversation was simulated again) | "
        "proposal_accepted / proposal_refused (the user's verdict on an offer or confirmation request, "
        "with the constraints it met or the one it broke) | tactic (a manipulative user's push: the tactic "
        "played and how the agent answered the push before it)."
    )
    detail: str = Field(default="", description="Why, in words a user can check against the transcript.")


class Usage(Strict):
    """Token and cost accounting for one role."""

    calls: int = Field(default=0, description="Model calls.")
    prompt_tokens: int = Field(default=0, description="Prompt tokens.")
    completion_tokens: int = Field(default=0, description="Completion tokens.")
    cached_calls: int = Field(default=0, description="Calls answered from the LLM cache.")
    cost_usd: float = Field(default=0.0, description="Estimated cost.")

    def add(self, other: Usage | None) -> Usage:
        if other is None:
            return self
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_calls=self.cached_calls + other.cached_calls,
            cost_usd=round(self.cost_usd + other.cost_usd, 6),
        )
