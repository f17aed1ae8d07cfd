"""Chat message types shared by case files, transcripts and adapters (OpenAI chat shape)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One tool call requested by the assistant."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default="", description="Call id that the matching tool message refers to.")
    name: str = Field(description="Tool name, e.g. search_flights.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="Parsed arguments (a JSON string is parsed on load)."
    )

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse_json_arguments(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip()
            if not v:
                return {}
            try:
                return json.loads(v)
            except json.JSONDecodeError as exc:
                raise ValueError(f"tool call arguments are not valid JSON: {exc.msg}") from exc
        return v

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


class Message(BaseModel):
    """One chat message. Tool results are `role: tool` messages with `tool_call_id`."""

    model_config = ConfigDict(extra="forbid")

    role: Role = Field(description="system | user | assistant | tool.")
    content: str = Field(default="", description="Text content.")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Assistant tool calls.")
    tool_call_id: str | None = Field(default=None, description="For tool messages: the call answered.")
    name: str | None = Field(default=None, description="For tool messages: the tool name.")
    is_error: bool = Field(default=False, description="For tool messages: the tool returned an error.")

    def to_openai(self) -> dict[str, Any]:
        """This message in OpenAI chat-completions request format."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.role == "assistant" and self.tool_calls:
            out["tool_calls"] = [tc.to_openai() for tc in self.tool_calls]
            if not self.content:
                out["content"] = None
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id or ""
        return out

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> Message:
        """Build from an OpenAI-format message dict (arguments as JSON string or dict)."""
        calls = []
        for i, tc in enumerate(data.get("tool_calls") or []):
            fn = tc.get("function", tc)
            calls.append(
                ToolCall(id=tc.get("id") or f"call_{i}", name=fn["name"], arguments=fn.get("arguments") or {})
            )
        return cls(
            role=data.get("role", "assistant"),
            content=data.get("content") or "",
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.to_openai() for m in messages]
