"""The judge step shared by the graph's judge node and rescore: judges read the conversation state,
and a CaseError from the case's own code (a check, judge or tool) ends the conversation as
`case_error` (blame case) with its traceback, instead of becoming a judge error."""

from __future__ import annotations

import traceback as tb
from typing import Any

from usersim.core.errors import CaseError
from usersim.core.events import Stop
from usersim.graphs.context import RunContext
from usersim.graphs.state import ConversationState
from usersim.judges.base import JudgeState, apply_judges


def format_traceback(exc: BaseException) -> str:
    """The exception's traceback with its causes (an adapter's AgentError wraps the agent's own crash)."""
    return "".join(tb.format_exception(type(exc), exc, exc.__traceback__))


def case_stop(exc: CaseError) -> dict[str, Any]:
    """The state update that ends a conversation on the test author's error (blame case)."""
    return {
        "stop": Stop(reason="case_error", detail=str(exc), blame="case"),
        "traceback": exc.traceback or format_traceback(exc),
    }


def judge_state(state: ConversationState, ctx: RunContext) -> JudgeState:
    return state_for_judges(state, ctx.case, persona=ctx.persona, variant=ctx.variant)


def state_for_judges(
    state: ConversationState, case: Any, *, persona: Any, variant: dict[str, Any]
) -> JudgeState:
    """What judges read besides the transcript, from a conversation state (live, or rebuilt by rescore)."""
    history_len = len(case.input.history) if case.mode == "static" else 0
    return JudgeState(
        tool_trace=state.get("tool_trace", []),
        skill_events=state.get("skill_events", []),
        turn_starts=state.get("turn_starts", []),
        history_len=history_len,
        stop=state.get("stop"),
        turns=state.get("turn", 0),
        persona=persona,
        variant=variant,
    )


class _CaseGuard:
    """A judge whose CaseError (the case's check or judge code raised) is kept, not turned into a
    judge error: the conversation then ends as `case_error`, blame case."""

    def __init__(self, judge: Any, caught: list[CaseError]) -> None:
        self.judge = self.__wrapped__ = judge  # __wrapped__: a crash verdict names the judge's own code
        self.name = getattr(judge, "name", type(judge).__name__)
        self.cooperative = getattr(judge, "cooperative", False)
        self.reads_verdicts = getattr(judge, "reads_verdicts", None)  # apply_judges' second round
        self.caught = caught

    @property
    def usage(self) -> Any:
        return getattr(self.judge, "usage", None)

    async def __call__(self, **kwargs: Any) -> list[Any]:
        try:
            return list(await self.judge(**kwargs))
        except CaseError as exc:
            self.caught.append(exc)
            return []


async def run_judges(
    state: ConversationState, case: Any, judges: list[Any], *, persona: Any, variant: dict[str, Any]
) -> dict[str, Any]:
    """The judge node's update (verdicts, usage, and a case_error stop when case code raised); rescore
    calls it on rebuilt states."""
    jstate = state_for_judges(state, case, persona=persona, variant=variant)
    transcript = list(state.get("messages", []))
    caught: list[CaseError] = []
    guarded: list[Any] = [_CaseGuard(j, caught) for j in judges]  # each is a Judge
    verdicts, usage = await apply_judges(guarded, transcript=transcript, case=case, state=jstate)
    out: dict[str, Any] = {"verdicts": verdicts, "usage": {"judge": usage} if usage.calls else {}}
    stop = state.get("stop")
    if caught and not (stop is not None and stop.reason == "case_error"):
        out |= case_stop(caught[0])
    return out
