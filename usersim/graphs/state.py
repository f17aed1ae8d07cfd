"""State types of the conversation graph."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict, get_type_hints

from usersim.core.events import SimEvent, SkillEvent, Stop, ToolEvent, Usage
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.graphs.finalize import Finalized


def _merge_usage(a: dict[str, Usage], b: dict[str, Usage]) -> dict[str, Usage]:
    out = dict(a)
    for role, u in b.items():
        out[role] = out.get(role, Usage()).add(u)
    return out


def _merge_played(a: dict[int, str], b: dict[int, str]) -> dict[int, str]:
    return {**a, **b}


class ConversationState(TypedDict, total=False):
    """The graph state. Nodes return only the keys they change; lists append."""

    messages: Annotated[list[Message], operator.add]
    turn: int  # user turns taken so far
    turn_starts: Annotated[list[int], operator.add]  # transcript index where each user turn starts
    tool_trace: Annotated[list[ToolEvent], operator.add]
    skill_events: Annotated[list[SkillEvent], operator.add]
    stop: Stop | None
    verdicts: Annotated[list[Verdict], operator.add]
    usage: Annotated[dict[str, Usage], _merge_usage]
    context_tokens: Annotated[list[int], operator.add]  # prompt tokens the agent saw, per user turn
    sim_events: Annotated[list[SimEvent], operator.add]  # what the simulator framework decided, per turn
    # user turn -> who played it ("human" | "simulator"; `usersim play` shares the seat); keyed by turn,
    # so a conversation branched from a checkpoint keeps the marks of the turns it starts with
    played_by: Annotated[dict[int, str], _merge_played]
    traceback: str | None  # the crash behind an error stop (agent code, or the case's tool/check/judge code)
    final: Finalized | None  # set by the finalize node: status, blame and the record's derived fields


# the reducer of each list or merged key (what the graph's channels apply to a node's update)
REDUCERS = {
    key: hint.__metadata__[0]
    for key, hint in get_type_hints(ConversationState, include_extras=True).items()
    if hasattr(hint, "__metadata__")
}
