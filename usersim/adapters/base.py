"""The agent-under-test role: one protocol, one registry of SPEC schemes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from usersim.cases.schema import Case
from usersim.core import registry as registries
from usersim.core.events import Usage
from usersim.core.messages import Message
from usersim.core.registry import Registry

# Runs one sandbox tool for an agent that drives its own tool loop (LangGraph adapter):
# (name, arguments) -> Message(role="tool", ...). The call is recorded in the tool trace.
ToolRunner = Callable[[str, dict[str, Any]], Awaitable[Message]]


@dataclass
class AgentInput:
    """Everything the agent under test receives for one step."""

    messages: list[Message]  # system message (case context) first, then the conversation so far
    tools: list[dict[str, Any]]  # OpenAI tool schemas of the sandbox tools available
    case: Case
    run_tool: ToolRunner
    seed: int = 0
    turn: int = 1  # current user turn (1-based)


@dataclass
class AgentReply:
    """Messages the agent produced in this step, in order.

    If the last message is an assistant message with tool calls that have no tool result yet, the
    harness executes them through the sandbox, appends the results and calls the agent again.
    """

    messages: list[Message]
    usage: Usage | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The tool results in `messages` came from the agent's own tools, not the sandbox: the harness
    # records them as the agent's own tool events (ToolEvent.executed_by="agent").
    tools_run_by_agent: bool = False


class AgentError(RuntimeError):
    """The agent under test failed in a way that ends the conversation (reported as agent_error)."""


class AgentEndpointError(AgentError):
    """The agent's endpoint failed after retries (timeout, 5xx, connection): an infrastructure
    outage, recorded as status error with blame infrastructure, never as the agent's failure."""


class AgentUnderTest(Protocol):
    spec: str

    async def respond(self, inp: AgentInput) -> AgentReply: ...

    def describe(self) -> dict[str, Any]:
        """The system configuration under test (context window, profile injection, temperature ...)."""
        ...


# scheme ("reference", "openai", "python", "http", "langgraph") -> factory(spec) -> AgentUnderTest
agent_registry: Registry[Callable[[str], AgentUnderTest]] = registries.agents


def load_agent(spec: str) -> AgentUnderTest:
    """Resolve an agent SPEC such as `reference`, `reference:window-10`, `openai:gpt-4o`,
    `python:pkg.mod:func`, `http://host/chat`."""
    scheme = "http" if spec.startswith(("http://", "https://")) else spec.split(":", 1)[0]
    return agent_registry.get(scheme)(spec)
