"""Builders for judge tests: cases, transcripts and judge state, made directly (no case library)."""

from __future__ import annotations

from typing import Any

from usersim.cases.schema import Case
from usersim.core.events import SkillEvent, Stop, ToolEvent
from usersim.core.messages import Message, ToolCall
from usersim.judges.base import JudgeState


def case(
    *,
    checks: list[dict] | None = None,
    current_date: str | None = "2026-04-07",
    mode: str = "static",
    methods: tuple[str, ...] = ("auto",),
    **judging: Any,
) -> Case:
    data: dict[str, Any] = {
        "id": "T-01",
        "dimension": judging.pop("dimension", "B1"),
        "title": "test case",
        "mode": mode,
        "context": {"current_date": current_date},
        "input": {"message": "帮我订机票"},
        "judging": {"scoring": {"methods": list(methods)}, "checks": checks or [], **judging},
    }
    if mode == "organic":
        data.update(persona="p1", max_turns=10)
    for key in ("skills", "tags", "goal"):
        if key in data["judging"]:
            data[key] = data["judging"].pop(key)
    return Case.model_validate(data)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def bot(text: str = "", *calls: tuple[str, dict]) -> Message:
    return Message(
        role="assistant",
        content=text,
        tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)],
    )


def tool(name: str, result: str = "{}") -> Message:
    return Message(role="tool", name=name, content=result, tool_call_id="c0")


def trace_from(transcript: list[Message], history_len: int = 0) -> list[ToolEvent]:
    """The tool trace the graph would have recorded for the live part of a transcript."""
    events, turn, counts = [], 0, {}
    for i, m in enumerate(transcript):
        if i < history_len:
            continue
        if m.role == "user":
            turn += 1
        for tc in m.tool_calls:
            counts[tc.name] = counts.get(tc.name, 0) + 1
            events.append(
                ToolEvent(
                    turn=turn,
                    message_index=i + 1,
                    call_number=counts[tc.name],
                    name=tc.name,
                    arguments=tc.arguments,
                    result="{}",
                )
            )
    return events


def state(
    transcript: list[Message],
    *,
    history_len: int = 0,
    stop: str | None = "replay_complete",
    skills: list[tuple[str, int]] = (),
    use_trace: bool = True,
    **extra: Any,
) -> JudgeState:
    starts = [i for i, m in enumerate(transcript) if m.role == "user" and i >= history_len]
    return JudgeState(
        tool_trace=trace_from(transcript, history_len) if use_trace else [],
        skill_events=[SkillEvent(turn=t, skill=s, kind="triggered") for s, t in skills],
        turn_starts=starts,
        history_len=history_len,
        stop=Stop(reason=stop) if stop else None,
        turns=len(starts),
        **extra,
    )
