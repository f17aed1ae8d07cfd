"""When each part of a conversation happened: model calls, tool calls, agent and judge steps.

A conversation's timeline is collected while it runs (one per trial, every attempt in it) and kept
in its record, so a trace can be built from the record alone — at the end of a run, or later from
results.jsonl (`usersim otel export`). Times are offsets in seconds from the conversation's start
(the record's `started_at`), measured with a monotonic clock.

Collection is by context variable: code that calls a model or a tool does not need to know whether
anyone is collecting; outside a collecting conversation `span()` costs one lookup.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SpanKind = Literal["chat", "tool", "agent", "simulator", "judge"]


class TimelineSpan(BaseModel):
    """One timed step of a conversation."""

    model_config = ConfigDict(extra="forbid")

    kind: SpanKind = Field(
        description="chat (one model call) | tool (one sandbox call) | agent | simulator | judge (one step)."
    )
    name: str = Field(description="Model name for chat, tool name for tool, the step's name otherwise.")
    start_s: float = Field(description="Seconds from the conversation's start.")
    duration_s: float = Field(description="Wall time in seconds.")
    turn: int = Field(default=0, description="User turn (0: before the first, or not tied to one).")
    attempt: int = Field(default=0, description="Attempt of the conversation (resimulations count up).")
    attrs: dict[str, Any] = Field(
        default_factory=dict,
        description="What else is known: role, tokens, cached, error for chat; call_number, intercepted, "
        "is_error for tool.",
    )


class Timeline:
    """The spans of one conversation, in the order they ended."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.wall0 = time.time()  # the same instant on the wall clock
        self.spans: list[TimelineSpan] = []
        self.turn = 0
        self.attempt = 0

    def add(self, kind: SpanKind, name: str, start: float, end: float, **attrs: Any) -> None:
        # built without validation: every field is computed here from usersim's own values (about
        # two dozen spans per conversation; validating each cost more than timing the step)
        self.spans.append(
            TimelineSpan.model_construct(
                kind=kind,
                name=name,
                start_s=round(start - self.t0, 6),
                duration_s=round(max(0.0, end - start), 6),
                turn=self.turn,
                attempt=self.attempt,
                attrs={k: v for k, v in attrs.items() if v is not None},
            )
        )

    def shifted(self, seconds: float, rename: Callable[[str], str]) -> list[TimelineSpan]:
        """The spans with `seconds` added to every start and every name passed through `rename`
        (once per distinct name: a conversation's spans share a few model, tool and step names)."""
        names = {name: rename(name) for name in {s.name for s in self.spans}}
        return [
            s.model_copy(update={"start_s": round(s.start_s + seconds, 6), "name": names[s.name]})
            for s in self.spans
        ]


_current: ContextVar[Timeline | None] = ContextVar("usersim_timeline", default=None)


@contextlib.contextmanager
def collecting() -> Iterator[Timeline]:
    """Collect the spans of everything run inside (one conversation)."""
    timeline = Timeline()
    token = _current.set(timeline)
    try:
        yield timeline
    finally:
        _current.reset(token)


def current() -> Timeline | None:
    """The timeline being collected, if any."""
    return _current.get()


@contextlib.contextmanager
def span(kind: SpanKind, name: str, **attrs: Any) -> Iterator[dict[str, Any]]:
    """Time the block as one span; the yielded dict takes attributes known only at the end (tokens,
    an error). An exception still ends the span, marked with its type, and propagates."""
    timeline = _current.get()
    extra: dict[str, Any] = {}
    if timeline is None:
        yield extra
        return
    start = time.perf_counter()
    try:
        yield extra
    except BaseException as exc:
        extra.setdefault("error", type(exc).__name__)
        raise
    finally:
        timeline.add(kind, name, start, time.perf_counter(), **attrs, **extra)


def at_turn(turn: int, attempt: int | None = None) -> None:
    """Spans from now on belong to this user turn (and attempt)."""
    timeline = _current.get()
    if timeline is not None:
        timeline.turn = turn
        if attempt is not None:
            timeline.attempt = attempt
