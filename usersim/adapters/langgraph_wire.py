"""Messages as LangGraph Server's JSON carries them (serialised LangChain messages) and back."""

from __future__ import annotations

from typing import Any

from usersim.core.events import Usage
from usersim.core.messages import Message, ToolCall

_TYPE = {"system": "system", "user": "human", "assistant": "ai", "tool": "tool"}


def to_wire(m: Message, mid: str) -> dict[str, Any]:
    """Our message as a thread message dict, with id `mid` so it is told apart from the graph's."""
    out: dict[str, Any] = {"type": _TYPE[m.role], "content": m.content, "id": mid}
    if m.role == "assistant" and m.tool_calls:
        out["tool_calls"] = [
            {"name": c.name, "args": c.arguments, "id": c.id, "type": "tool_call"} for c in m.tool_calls
        ]
    if m.role == "tool":
        out |= {
            "tool_call_id": m.tool_call_id or "",
            "name": m.name,
            "status": "error" if m.is_error else "success",
        }
    return out


def _text(content: Any) -> str:
    if isinstance(content, list):  # content blocks: keep the text ones
        return "".join(
            p if isinstance(p, str) else str(p.get("text", "")) for p in content if isinstance(p, (str, dict))
        )
    return "" if content is None else str(content)


def from_wire(d: dict[str, Any]) -> Message | None:
    """A thread message the graph produced as our Message (None for human/system echoes)."""
    kind = d.get("type") or d.get("role")
    if kind in ("ai", "assistant", "AIMessageChunk"):
        calls = [
            ToolCall(
                id=str(c.get("id") or f"call_{i}"), name=str(c["name"]), arguments=dict(c.get("args") or {})
            )
            for i, c in enumerate(d.get("tool_calls") or [])
        ]
        return Message(role="assistant", content=_text(d.get("content")), tool_calls=calls)
    if kind == "tool":
        return Message(
            role="tool",
            content=_text(d.get("content")),
            tool_call_id=d.get("tool_call_id"),
            name=d.get("name"),
            is_error=d.get("status") == "error",
        )
    return None


def wire_usage(messages: list[dict[str, Any]]) -> Usage | None:
    """Token usage of the AI messages (their `usage_metadata`), or None when none reports any."""
    metas = [m["usage_metadata"] for m in messages if isinstance(m.get("usage_metadata"), dict)]
    if not metas:
        return None
    return Usage(
        calls=len(metas),
        prompt_tokens=sum(int(u.get("input_tokens", 0)) for u in metas),
        completion_tokens=sum(int(u.get("output_tokens", 0)) for u in metas),
    )
