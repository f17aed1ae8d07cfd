"""Turning what an agent returned (OpenAI-format dicts) into `cases.messages.Message`.

Tool-call arguments may be a dict or a JSON string. Malformed JSON is repaired only when the
fix is trivial and unambiguous, otherwise it is an AgentError:

* empty / whitespace-only arguments -> `{}`;
* JSON wrapped in a Markdown code fence (```json ... ```);
* trailing commas before `}` or `]`;
* a Python-literal dict (single quotes, True/False/None) that `ast.literal_eval` reads as a dict.

Anything else (truncated JSON, a bare string, a list) raises AgentError naming the tool, the
agent spec and the JSON error.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from usersim.adapters.base import AgentError
from usersim.core.messages import Message, ToolCall

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_arguments(raw: Any, *, tool: str, source: str) -> dict[str, Any]:
    """Tool-call arguments as a dict (see the module docstring for the repairs applied)."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raise AgentError(
            f"Malformed tool call '{tool}' from {source}: arguments must be an object, got {type(raw).__name__}"
        )
    text = raw.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        value = _repair(text)
        if value is None:
            snippet = text if len(text) <= 120 else text[:117] + "..."
            raise AgentError(
                f"Malformed tool call '{tool}' from {source}: arguments are not valid JSON "
                f"({exc.msg} at char {exc.pos}): {snippet!r}"
            ) from None
    if not isinstance(value, dict):
        raise AgentError(
            f"Malformed tool call '{tool}' from {source}: arguments must be a JSON object, got {type(value).__name__}"
        )
    return value


def _repair(text: str) -> Any:
    fence = _FENCE.match(text)
    if fence:
        text = fence.group(1)
    candidate = _TRAILING_COMMA.sub(r"\1", text)
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        pass
    try:
        value = ast.literal_eval(candidate)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def message_from_reply(data: Any, *, source: str) -> Message:
    """An assistant reply (OpenAI message dict, plain string or Message) as a Message."""
    if isinstance(data, Message):
        return data
    if isinstance(data, str):
        return Message(role="assistant", content=data)
    if not isinstance(data, dict):
        raise AgentError(f"{source} returned {type(data).__name__}; expected an assistant message dict")
    role = data.get("role") or "assistant"
    if role != "assistant":
        raise AgentError(f"{source} returned a message with role '{role}'; expected 'assistant'")
    calls = []
    for i, tc in enumerate(data.get("tool_calls") or []):
        if not isinstance(tc, dict):
            raise AgentError(
                f"Malformed tool call #{i} from {source}: expected an object, got {type(tc).__name__}"
            )
        fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc
        name = fn.get("name")
        if not name or not isinstance(name, str):
            raise AgentError(f"Malformed tool call #{i} from {source}: the call has no function name")
        args = parse_arguments(fn.get("arguments"), tool=name, source=source)
        calls.append(ToolCall(id=str(tc.get("id") or f"call_{i}"), name=name, arguments=args))
    content = data.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return Message(role="assistant", content=content or "", tool_calls=calls)
