"""The neutral conversation every importer produces: messages in usersim's shape, where it came from."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.messages import Message


class ImportFormatError(ValueError):
    """A file that cannot be read as the format asked for; the message names the file and where."""


class Conversation(BaseModel):
    """One recorded conversation, ready to be drafted into cases."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Id from the source (conversation / thread / trace id) or file:line.")
    source: str = Field(description="The file (and line or run) it was read from.")
    messages: list[Message] = Field(description="system / user / assistant / tool messages, in order.")
    tools: list[dict[str, Any]] = Field(
        default_factory=list, description="Tool schemas the source recorded (OpenAI tools format)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Anything else worth keeping.")

    def user_turns(self) -> list[int]:
        """Indexes of the user messages."""
        return [i for i, m in enumerate(self.messages) if m.role == "user"]


def merge_messages(known: list[Message], more: list[Message]) -> list[Message]:
    """`known` extended by `more`: when `more` repeats `known` as its prefix (a model call sent the
    whole history again) only its new tail is added."""

    def same(a: Message, b: Message) -> bool:
        return (
            a.role == b.role
            and a.content.strip() == b.content.strip()
            and [t.name for t in a.tool_calls] == [t.name for t in b.tool_calls]
        )

    k = 0
    while k < len(known) and k < len(more) and same(known[k], more[k]):
        k += 1
    if k == len(known) or k == len(more):
        return known + more[k:]
    # no common prefix: `more` starts where `known` left off, unless it re-sends the system prompt
    start = 1 if more and more[0].role == "system" and known and known[0].role == "system" else 0
    return known + more[start:]


def pair_tool_results(messages: list[Message]) -> list[Message]:
    """Tool messages named after the call they answer, and call ids filled in when a source left
    them out (answers matched in order)."""
    names: dict[str, str] = {}
    pending: list[str] = []
    out: list[Message] = []
    for i, m in enumerate(messages):
        if m.tool_calls:
            calls = []
            for j, tc in enumerate(m.tool_calls):
                cid = tc.id or f"call_{i}_{j}"
                names[cid] = tc.name
                pending.append(cid)
                calls.append(tc.model_copy(update={"id": cid}))
            m = m.model_copy(update={"tool_calls": calls})
        elif m.role == "tool":
            answer: str | None = m.tool_call_id
            if answer not in names and pending:  # no id, or an id the source rewrote: the oldest open call
                answer = pending[0]
            if answer in pending:
                pending.remove(answer)
            m = m.model_copy(update={"tool_call_id": answer, "name": m.name or names.get(answer or "")})
        out.append(m)
    return out


def day_of(value: Any) -> str | None:
    """YYYY-MM-DD of a timestamp: ISO text, Unix seconds / milliseconds / nanoseconds."""
    import datetime as dt

    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value):
        return value[:10]
    try:
        n = float(value)
    except (TypeError, ValueError):
        return None
    while n > 1e11:  # ms / us / ns
        n /= 1000
    return dt.datetime.fromtimestamp(n, dt.UTC).date().isoformat()
