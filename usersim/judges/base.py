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
    verdicts: dict[str, list[Verdict]] = Field(
        default_factory=dict,
        description="Verdicts of the judges that ran before, by judge name: filled only for a judge "
        "that declares `reads_verdicts` (it runs after every judge that does not; see apply_judges).",
    )


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
    Returns the verdicts and the judges' summed token usage.

    Two rounds: a judge with a `reads_verdicts` attribute (the judge names it reads, e.g.
    task_completion reads rules and milestones) runs after every judge without one, and finds their
    verdicts in `state.verdicts` by judge name; such judges never read each other."""

    async def one(j: Judge, st: JudgeState) -> list[Verdict]:
        name = getattr(j, "name", type(j).__name__)
        try:
            async with away_unless(j):
                return list(await j(transcript=transcript, case=case, state=st))
        except CaseError as exc:  # the test author's files (e.g. a user tool replayed by a judge)
            return [crash_verdict(name, exc, getattr(j, "__wrapped__", j), reason=f"case error: {exc}")]
        except Exception as exc:
            log.exception("judge %s failed", name)
            owner = getattr(j, "__wrapped__", j)  # a wrapper (graphs.judge_step) names the judge's own code
            return [crash_verdict(name, exc, owner, reason=f"judge crashed: {type(exc).__name__}: {exc}")]

    later = [i for i, j in enumerate(judges) if getattr(j, "reads_verdicts", None)]
    first = [i for i in range(len(judges)) if i not in later]
    results: dict[int, list[Verdict]] = dict(
        zip(first, await asyncio.gather(*(one(judges[i], state) for i in first)), strict=True)
    )
    if later:
        earlier: dict[str, list[Verdict]] = {}
        for i in first:
            earlier.setdefault(getattr(judges[i], "name", type(judges[i]).__name__), []).extend(results[i])
        st = state.model_copy(update={"verdicts": earlier})
        results |= dict(zip(later, await asyncio.gather(*(one(judges[i], st) for i in later)), strict=True))
    usage = Usage()
    for j in judges:
        spent = getattr(j, "usage", None)  # LLM judges count their tokens
        if isinstance(spent, Usage):
            usage = usage.add(spent)
    return [v for i in range(len(judges)) for v in results[i]], usage
