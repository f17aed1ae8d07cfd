"""Tool events of an agent that runs a tool loop itself (a LangGraph graph, a deployed graph):
where the sandbox's answers landed in the transcript, and the calls its own tools answered.

An agent that hands its tool calls back (python:, openai:, http:) has every result appended by the
harness at a known index. An agent with its own loop calls the sandbox from inside `respond`, before
its messages exist, so its events are placed afterwards (`place_events`). With its own tools
(`AgentReply.tools_run_by_agent`) the sandbox never sees the calls: they are read from its messages
as ToolEvents with `executed_by="agent"` (`own_events`), so tool checks see them and state checks
can say that they cannot.
"""

from __future__ import annotations

from collections import Counter

from usersim.core.events import ToolEvent
from usersim.core.messages import Message, ToolCall


def place_events(events: list[ToolEvent], messages: list[Message], start: int) -> None:
    """Point each event made during one reply at its tool message: in call order, matched by tool
    name; `start` is the transcript index of `messages[0]`."""
    cursor = 0
    for event in events:
        for j in range(cursor, len(messages)):
            m = messages[j]
            if m.role == "tool" and (m.name in (None, "", event.name)):
                event.message_index = start + j
                cursor = j + 1
                break


def own_events(
    turn_messages: list[Message], first: int, start: int, turn: int, prior: list[ToolEvent]
) -> list[ToolEvent]:
    """The agent's own tool calls answered in `turn_messages[first:]` (a tool result whose call is
    in the turn so far), as ToolEvents executed by the agent. `start` is the transcript index of
    `turn_messages[0]`; `prior` the conversation's events so far (for per-tool call numbers)."""
    calls: dict[str, ToolCall] = {}
    counts = Counter(e.name for e in prior)
    out: list[ToolEvent] = []
    for j, m in enumerate(turn_messages):
        if m.role == "assistant":
            calls.update({c.id: c for c in m.tool_calls})
        if m.role != "tool" or j < first:
            continue
        call = calls.pop(m.tool_call_id or "", None)
        name = call.name if call is not None else (m.name or "unknown")
        counts[name] += 1
        out.append(
            ToolEvent(
                turn=turn,
                message_index=start + j,
                call_number=counts[name],
                name=name,
                arguments=dict(call.arguments) if call is not None else {},
                result=m.content,
                is_error=m.is_error,
                executed_by="agent",
            )
        )
    return out
