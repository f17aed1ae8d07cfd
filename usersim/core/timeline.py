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
        # (kind, name, start_s, duration_s, turn, attempt, attrs) per span, in the order they ended
        self.spans: list[tuple[SpanKind, str, float, float, int, int, dict[str, Any]]] = []
        self.turn = 0
        self.attempt = 0

    def add(self, kind: SpanKind, name: str, start: float, end: float, **attrs: Any) -> None:
        # kept as a plain tuple: the span is built once, in `shifted`, when the record is made
        # (about two dozen spans per conversation; building and then copying each model cost more
        # than timing the step)
        self.spans.append(
            (
                kind,
                name,
                round(start - self.t0, 6),
                round(max(0.0, end - start), 6),
                self.turn,
                self.attempt,
                {k: v for k, v in attrs.items() if v is not None},
            )
        )

    def shifted(self, seconds: float, rename: Callable[[str], str]) -> list[TimelineSpan]:
        """The spans with `seconds` added to every start and every name passed through `rename`
        (once per distinct name: a conversation's spans share a few model, tool and step names)."""
        names = {name: rename(name) for name in {s[1] for s in self.spans}}
        # validated: pydantic-core checks these seven plain fields in about half the time
        # model_construct takes to skip the checks in Python
        build = TimelineSpan
        return [
            build(
                kind=kind,
                name=names[name],
                start_s=round(start_s + seconds, 6),
                duration_s=duration_s,
                turn=turn,
                attempt=attempt,
                attrs=attrs,
            )
            for kind, name, start_s, duration_s, turn, attempt, attrs in self.spans
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


class _Span:
    """The context manager `span()` returns (a class, not a generator: a model call, a tool call
    and every step open one, and a generator's context machinery cost several times as much)."""

    __slots__ = ("timeline", "kind", "name", "attrs", "extra", "start")

    def __init__(self, timeline: Timeline | None, kind: SpanKind, name: str, attrs: dict[str, Any]) -> None:
        self.timeline = timeline
        self.kind = kind
        self.name = name
        self.attrs = attrs
        self.extra: dict[str, Any] = {}

    def __enter__(self) -> dict[str, Any]:
        if self.timeline is not None:
            self.start = time.perf_counter()
        return self.extra

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        if exc_type is not None:
            self.extra.setdefault("error", exc_type.__name__)
        timeline.add(self.kind, self.name, self.start, time.perf_counter(), **self.attrs, **self.extra)


def span(kind: SpanKind, name: str, **attrs: Any) -> contextlib.AbstractContextManager[dict[str, Any]]:
    """Time the block as one span; the yielded dict takes attributes known only at the end (tokens,
    an error). An exception still ends the span, marked with its type, and propagates."""
    return _Span(_current.get(), kind, name, attrs)


def at_turn(turn: int, attempt: int | None = None) -> None:
    """Spans from now on belong to this user turn (and attempt)."""
    timeline = _current.get()
    if timeline is not None:
        timeline.turn = turn
        if attempt is not None:
            timeline.attempt = attempt
