"""What a conversation run needs besides its state: the case and the role implementations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from usersim.adapters.base import AgentUnderTest
from usersim.cases.schema import Case
from usersim.judges.base import Judge
from usersim.personas.schema import Persona
from usersim.simulator.base import UserSimulator


@dataclass
class RunContext:
    """LangGraph runtime context of one conversation (never part of the checkpointed state)."""

    case: Case
    agent: AgentUnderTest
    sandbox: Any  # sandbox.base.Sandbox for this conversation
    # the judges, or a factory called when the judge node first runs (so the judge modules are not
    # imported before the conversation's first model request)
    judges: list[Judge] | Callable[[], list[Judge]]
    simulator: UserSimulator | None = None
    persona: Persona | None = None
    seed: int = 0
    variant: dict[str, Any] = field(default_factory=dict)
    max_tool_rounds: int = 8  # agent steps with tool calls per user turn before we stop the loop
    count_tokens: Any = None  # callable(list[Message]) -> int, for per-turn context growth

    def judge_list(self) -> list[Judge]:
        """The judges of this conversation (a factory is called once)."""
        if callable(self.judges):
            self.judges = self.judges()
        return self.judges
