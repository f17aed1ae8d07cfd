"""What a rule check reads: the live part of the transcript, text scopes, the tool trace, prefixes."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from usersim.judges.checks.normalize import parse_today

if TYPE_CHECKING:  # annotations only: a check's params validate without the judge layer's models
    from usersim.cases.schema import Case
    from usersim.core.messages import Message
    from usersim.judges.base import JudgeState

Scope = Literal["final", "assistant", "first"]


@dataclass
class Call:
    """One tool call the agent made in the live conversation."""

    name: str
    arguments: dict[str, Any]
    turn: int
    index: int  # transcript index of the call (or of its result), -1 when unknown
    is_error: bool = False
    result: str = ""  # what the tool answered (its error text when is_error)


@dataclass
class CheckContext:
    """A finished (or truncated) conversation as the rule checks see it."""

    transcript: list[Message]
    case: Case
    state: JudgeState
    # Read tool calls from the transcript when the run recorded no trace at all (a transcript
    # re-scored from results.jsonl); decided once, so a prefix with no calls yet stays empty.
    calls_from_transcript: bool | None = None
    today: date | None = field(init=False)

    def __post_init__(self) -> None:
        self.today = parse_today(self.case.context.current_date)
        if self.calls_from_transcript is None:
            self.calls_from_transcript = not self.state.tool_trace

    @property
    def history_len(self) -> int:
        return min(self.state.history_len, len(self.transcript))

    def live(self) -> list[tuple[int, Message]]:
        """(transcript index, message) of the messages produced in this run."""
        return [(i, m) for i, m in enumerate(self.transcript) if i >= self.history_len]

    def turn_of(self, index: int) -> int:
        """User turn (1-based) a transcript index belongs to; 0 for replayed history."""
        if index < self.history_len:
            return 0
        starts = self.state.turn_starts
        if not starts:
            return sum(1 for i, m in self.live() if m.role == "user" and i <= index) or 1
        return max(1, bisect.bisect_right(starts, index))

    def texts(self, scope: Scope) -> list[tuple[int, str]]:
        """Assistant texts in scope: final (last reply), assistant (every live reply), first."""
        replies = [(i, m.content) for i, m in self.live() if m.role == "assistant" and m.content.strip()]
        if not replies:
            return []
        if scope == "final":
            return [replies[-1]]
        if scope == "first":
            return [replies[0]]
        return replies

    def text(self, scope: Scope) -> str:
        return "\n".join(t for _, t in self.texts(scope))

    def calls(self) -> list[Call]:
        """Live tool calls: the graph's tool trace, or the transcript's tool calls when no trace
        was recorded (a transcript re-scored from results.jsonl)."""
        if not self.calls_from_transcript:
            return [
                Call(e.name, dict(e.arguments), e.turn, e.message_index, e.is_error, e.result)
                for e in self.state.tool_trace
            ]
        out: list[Call] = []
        waiting: dict[str, Call] = {}  # call id -> the call its next tool message answers
        for i, m in self.live():
            if m.role == "tool" and m.tool_call_id in waiting:
                call = waiting.pop(m.tool_call_id)
                call.is_error, call.result = m.is_error, m.content
            for tc in m.tool_calls:
                out.append(Call(tc.name, dict(tc.arguments), self.turn_of(i), i))
                waiting[tc.id] = out[-1]
        return out

    def skills_triggered(self) -> list[tuple[str, int]]:
        """(skill, turn) for every skill the agent loaded."""
        found = [(e.skill, e.turn) for e in self.state.skill_events if e.kind == "triggered"]
        if not found:  # a re-scored transcript has no skill events: load_skill calls show them
            found = [
                (str(c.arguments.get("name", "")), c.turn) for c in self.calls() if c.name == "load_skill"
            ]
        return found

    def prefix(self, end: int) -> CheckContext:
        """The conversation as it stood after transcript[:end] (for milestones' first-reached turn)."""
        end = max(end, 0)
        last_turn = self.turn_of(end - 1) if end > self.history_len else 0
        trace = [
            e
            for e in self.state.tool_trace
            if (e.message_index >= 0 and e.message_index < end)
            or (e.message_index < 0 and e.turn <= last_turn)
        ]
        state = self.state.model_copy(
            update={
                "tool_trace": trace,
                "skill_events": [e for e in self.state.skill_events if e.turn <= last_turn],
                "turn_starts": [s for s in self.state.turn_starts if s < end],
                "turns": min(self.state.turns, last_turn),
                "stop": self.state.stop if end >= len(self.transcript) else None,
            }
        )
        return CheckContext(self.transcript[:end], self.case, state, self.calls_from_transcript)
