"""LangChain messages in the shapes LangSmith runs and LangGraph checkpoints store them, read once
for both importers: serialized (`{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
"kwargs": {...}}`), `messages_to_dict` (`{"type": "human", "data": {...}}`), the plain dict of a
message (`{"type": "human", "content": ..., "id": ...}`, what the LangGraph server returns) and
OpenAI chat dicts (`{"role": "user"}`). Each becomes an `LcMessage`: its id (when the source gave
one) and an OpenAI chat dict; a RemoveMessage is kept as a removal of its id.

`add_messages` folds a list into a history the way LangGraph's reducer of the same name does: a
message whose id is already there replaces it in place, a RemoveMessage removes its id
(`__remove_all__` clears everything before it), anything else is appended.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_ROLES = {
    "human": "user",
    "HumanMessage": "user",
    "HumanMessageChunk": "user",
    "user": "user",
    "ai": "assistant",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "assistant": "assistant",
    "tool": "tool",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessage": "system",
    "developer": "system",
}
_REMOVE = {"remove", "RemoveMessage"}
REMOVE_ALL = "__remove_all__"  # langgraph.graph.message.REMOVE_ALL_MESSAGES


@dataclass(frozen=True)
class LcMessage:
    """One message: its id (None when the source has none), and the OpenAI chat dict, or None for
    a RemoveMessage of `id`."""

    id: str | None
    chat: dict[str, Any] | None

    @property
    def removes(self) -> bool:
        return self.chat is None

    def same_as(self, other: LcMessage) -> bool:
        """Same role, text and tool calls (for messages without ids)."""
        a, b = self.chat or {}, other.chat or {}

        def key(m: dict[str, Any]) -> tuple[Any, ...]:
            calls = [
                c.get("name") or (c.get("function") or {}).get("name") for c in m.get("tool_calls") or []
            ]
            return m.get("role"), _plain(m.get("content")), calls, m.get("tool_call_id")

        return key(a) == key(b)


def _plain(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    return json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)


def _kind_and_body(m: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if m.get("lc") and isinstance(m.get("kwargs"), dict):  # serialized: {lc, type: constructor, id, kwargs}
        return str((m.get("id") or ["?"])[-1]), m["kwargs"]
    if isinstance(m.get("data"), dict) and "type" in m:  # messages_to_dict: {type, data}
        return str(m["type"]), m["data"]
    if "role" in m:
        return str(m["role"]), m
    return str(m.get("type", "")), m


def _calls(body: dict[str, Any]) -> list[dict[str, Any]]:
    calls = body.get("tool_calls") or (body.get("additional_kwargs") or {}).get("tool_calls") or []
    return [
        c
        if "function" in c
        else {"id": c.get("id") or "", "name": c.get("name"), "arguments": c.get("args") or {}}
        for c in calls
        if isinstance(c, dict)
    ]


def lc_message(m: Any, where: str) -> LcMessage:
    """One message in any of the shapes above; ValueError naming `where` for anything else."""
    if not isinstance(m, dict):
        raise ValueError(f"{where}: a message must be an object, got {type(m).__name__}")
    kind, body = _kind_and_body(m)
    mid = body.get("id") if isinstance(body.get("id"), str) and body.get("id") else None
    if kind in _REMOVE:
        if mid is None:
            raise ValueError(f"{where}: a RemoveMessage must name the id it removes")
        return LcMessage(mid, None)
    role = _ROLES.get(kind)
    if role is None:
        raise ValueError(f"{where}: unknown message type {kind!r} (human, ai, tool, system or remove)")
    if body is m and "role" in m:  # already an OpenAI chat dict
        return LcMessage(mid, {**{k: v for k, v in m.items() if k != "id"}, "role": role})
    chat: dict[str, Any] = {"role": role, "content": body.get("content")}
    if calls := _calls(body):
        chat["tool_calls"] = calls
    if role == "tool":
        chat["tool_call_id"] = body.get("tool_call_id")
        chat["is_error"] = body.get("status") == "error"
        if body.get("name"):
            chat["name"] = body["name"]
    return LcMessage(mid, chat)


def lc_messages(raw: Any, where: str) -> list[LcMessage]:
    """A list of messages (`where`, message N named in errors)."""
    if not isinstance(raw, list):
        raise ValueError(f"{where}: `messages` must be a list, got {type(raw).__name__}")
    return [lc_message(m, f"{where}: message {i}") for i, m in enumerate(raw)]


def add_messages(history: list[LcMessage], more: list[LcMessage]) -> list[LcMessage]:
    """`history` with `more` folded in by id (LangGraph's add_messages reducer)."""
    out = list(history)
    for m in more:
        if m.removes and m.id == REMOVE_ALL:
            out = []
            continue
        at = next((i for i, x in enumerate(out) if m.id is not None and x.id == m.id), None)
        if m.removes:
            if at is not None:
                del out[at]
        elif at is not None:
            out[at] = m
        else:
            out.append(m)
    return out


def merge(history: list[LcMessage], more: list[LcMessage]) -> list[LcMessage]:
    """`history` extended by `more` from another run: by id when every message has one; else by
    content: `more` holding all of `history` (a run's output repeating the whole state) replaces
    it, `more` repeating the tail of `history` (a model call sent the history again) adds what
    follows."""
    if all(m.id for m in [*history, *more]):
        return add_messages(history, more)
    more = [m for m in more if not m.removes]
    n = len(history)

    def same(a: list[LcMessage], b: list[LcMessage]) -> bool:
        return len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b, strict=True))

    if n and any(same(more[i : i + n], history) for i in range(len(more) - n + 1)):
        return more
    overlap = next((k for k in range(min(n, len(more)), 0, -1) if same(history[n - k :], more[:k])), 0)
    if overlap:
        return history + more[overlap:]
    # nothing shared: `more` starts where `history` left off, unless it re-sends the system prompt
    system = [m for m in (history[:1] + more[:1]) if (m.chat or {}).get("role") == "system"]
    return history + more[1 if len(system) == 2 else 0 :]


def chats(history: list[LcMessage]) -> list[dict[str, Any]]:
    """The OpenAI chat dicts of a history (removals dropped)."""
    return [m.chat for m in history if m.chat is not None]
