"""The judge role: one protocol, one registry."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import Case
from usersim.core import registry as registries
from usersim.core.errors import CaseError
from usersim.core.events import SkillEvent, Stop, ToolEvent, Usage
from usersim.core.messages import Message
from usersim.core.registry import Registry
from usersim.core.turns import away_unless
from usersim.core.verdict import Verdict
from usersim.judges.faults import crash_verdict

log = logging.getLogger(__name__)


class JudgeState(BaseModel):
    """What judges may read besides the transcript: the graph's end state."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    tool_trace: list[ToolEvent] = Field(default_factory=list, description="Every tool call with its turn.")
    skill_events: list[SkillEvent] = Field(default_factory=list, description="Skills listed / triggered.")
    turn_starts: list[int] = Field(
        default_factory=list, description="Transcript index where each user turn starts."
    )
    history_len: int = Field(default=0, description="Messages replayed from the case history (static).")
    stop: Stop | None = Field(default=None, description="Why the conversation ended.")
    turns: int = Field(default=0, description="User turns taken.")
    persona: Any = Field(default=None, description="The resolved Persona (organic) or None.")
    variant: dict[str, Any] = Field(default_factory=dict, description="length / position / group / repeat.")


class Judge(Protocol):
    """Scores a finished conversation. Never raises for bad model output: returns `error` verdicts."""

    name: str

    async def __call__(
        self, *, transcript: list[Message], case: Case, state: JudgeState
    ) -> list[Verdict]: ...


# Judge factories take the JudgeConfig below and return a Judge.
judge_registry: Registry[Any] = registries.judges


class JudgeConfig(BaseModel):
    """How judges are configured for a run."""

    model_config = ConfigDict(extra="forbid")

    judge_model: str | None = Field(
        default=None,
        description="SPEC of the LLM judge (openai:MODEL?context=32k) or None; several comma-joined form an ensemble.",
    )
    judge_samples: int = Field(
        default=1,
        ge=1,
        description="Samples per criterion and judge model (--judge-samples); verdict by majority.",
    )
    extra_judges: list[str] = Field(default_factory=list, description="Additional judge names to run.")


async def apply_judges(
    judges: list[Judge], *, transcript: list[Message], case: Case, state: JudgeState
) -> tuple[list[Verdict], Usage]:
    """Run the judges of one conversation concurrently (LLM judges wait on the network, not on each
    other); verdicts keep the judges' order. A judge that raises yields an `error` verdict naming it,
    never a crash, with details {fault, where, traceback}: fault `case` when the judge is a plugin's
    (its code is not usersim's) or a CaseError, `infrastructure` for a built-in judge's bug.
    Returns the verdicts and the judges' summed token usage."""

    async def one(j: Judge) -> list[Verdict]:
        name = getattr(j, "name", type(j).__name__)
        try:
            async with away_unless(j):
                return list(await j(transcript=transcript, case=case, state=state))
        except CaseError as exc:  # the test author's files (e.g. a user tool replayed by a judge)
            return [crash_verdict(name, exc, j, reason=f"case error: {exc}")]
        except Exception as exc:
            log.exception("judge %s failed", name)
            return [crash_verdict(name, exc, j, reason=f"judge crashed: {type(exc).__name__}: {exc}")]

    results = await asyncio.gather(*(one(j) for j in judges))
    usage = Usage()
    for j in judges:
        spent = getattr(j, "usage", None)  # LLM judges count their tokens
        if isinstance(spent, Usage):
            usage = usage.add(spent)
    return [v for vs in results for v in vs], usage
