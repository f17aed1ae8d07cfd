"""The chat messages of an LLM span in the two flat-attribute conventions besides the GenAI ones.

- OpenLLMetry (traceloop): `gen_ai.prompt.{i}.role|content|tool_call_id`,
  `gen_ai.prompt.{i}.tool_calls.{j}.id|name|arguments`, the same under `gen_ai.completion.{i}`;
  `llm.request.type: chat`; workflow/task/agent/tool spans by `traceloop.span.kind`, a tool's
  `traceloop.entity.name|input|output`; a session by `traceloop.association.properties.*`.
- OpenInference (Arize Phoenix): `llm.input_messages.{i}.message.role|content|tool_call_id`,
  `llm.input_messages.{i}.message.tool_calls.{j}.tool_call.id|function.name|function.arguments`,
  the same under `llm.output_messages`; `openinference.span.kind` LLM/TOOL/CHAIN/AGENT, a tool's
  `tool.name` with `input.value|output.value`; a session by `session.id`.

Each reader turns a span's attributes into OpenAI chat dicts, in index order; a message with
content but no role, or a role no chat has, is an ImportFormatError naming the attribute.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from usersim.cases.importers.conversation import ImportFormatError

ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
# attributes that name the conversation a span belongs to, most specific first
SESSION_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.thread_id",
    "traceloop.association.properties.conversation_id",
)


def _indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """`prefix.{i}.rest` attributes as {i: {rest: value}}."""
    pattern = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.(.+)$")
    out: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = pattern.match(key)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return dict(sorted(out.items()))


def _content(value: Any) -> str:
    """A message's content: text, or a JSON list of content parts ({type: text, text}); any other
    JSON (a tool's result rows) is the text as written."""
    if isinstance(value, str):
        try:
            parts = json.loads(value)
        except ValueError:
            return value
        if isinstance(parts, list) and parts and all(isinstance(p, dict) and "type" in p for p in parts):
            return "".join(str(p.get("text") or p.get("content") or "") for p in parts)
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _message(
    fields: dict[str, Any], where: str, role_key: str, calls: list[dict[str, Any]], call_id: str | None
) -> dict[str, Any]:
    role = fields.get(role_key)
    if role is None:
        raise ImportFormatError(f"{where}.{role_key}: missing (the message has {', '.join(sorted(fields))})")
    if str(role) not in ROLES:
        raise ImportFormatError(
            f"{where}.{role_key}: {role!r} is not a chat role ({', '.join(sorted(ROLES))})"
        )
    msg: dict[str, Any] = {
        "role": str(role),
        "content": _content(fields.get(role_key.replace("role", "content"))),
    }
    if calls:
        msg["tool_calls"] = calls
    if call_id:
        msg["tool_call_id"] = str(call_id)
    return msg


def _call(fields: dict[str, Any], where: str, name_key: str, args_key: str, id_key: str) -> dict[str, Any]:
    if not fields.get(name_key):
        raise ImportFormatError(f"{where}.{name_key}: missing (a tool call needs its function's name)")
    raw = fields.get(args_key) or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        raise ImportFormatError(f"{where}.{args_key}: not JSON ({exc})") from None
    return {"id": str(fields.get(id_key) or ""), "name": str(fields[name_key]), "arguments": args}


def _openllmetry(attrs: dict[str, Any], where: str, prefix: str) -> list[dict[str, Any]]:
    out = []
    for i, fields in _indexed(attrs, prefix).items():
        at = f"{where}: attribute {prefix}.{i}"
        calls = [
            _call(c, f"{at}.tool_calls.{j}", "name", "arguments", "id")
            for j, c in _indexed(fields, "tool_calls").items()
        ]
        out.append(_message(fields, at, "role", calls, fields.get("tool_call_id")))
    return out


def openllmetry_messages(attrs: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """An OpenLLMetry LLM span's prompt then completion messages."""
    return _openllmetry(attrs, where, "gen_ai.prompt") + _openllmetry(attrs, where, "gen_ai.completion")


def _openinference(attrs: dict[str, Any], where: str, prefix: str) -> list[dict[str, Any]]:
    out = []
    for i, fields in _indexed(attrs, prefix).items():
        at = f"{where}: attribute {prefix}.{i}"
        calls = [
            _call(
                c,
                f"{at}.message.tool_calls.{j}",
                "tool_call.function.name",
                "tool_call.function.arguments",
                "tool_call.id",
            )
            for j, c in _indexed(fields, "message.tool_calls").items()
        ]
        out.append(_message(fields, at, "message.role", calls, fields.get("message.tool_call_id")))
    return out


def openinference_messages(attrs: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """An OpenInference LLM span's input then output messages."""
    return _openinference(attrs, where, "llm.input_messages") + _openinference(
        attrs, where, "llm.output_messages"
    )


def reader_for(attrs: dict[str, Any]) -> Callable[[dict[str, Any], str], list[dict[str, Any]]] | None:
    """The reader of the convention whose message attributes a span carries, or None."""
    keys = attrs.keys()
    if any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in keys):
        return openinference_messages
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in keys):
        return openllmetry_messages
    return None


def operation(attrs: dict[str, Any]) -> str | None:
    """The GenAI operation a span of these conventions stands for: chat, execute_tool, or None."""
    kind = str(attrs.get("openinference.span.kind") or attrs.get("traceloop.span.kind") or "").lower()
    if kind == "tool":
        return "execute_tool"
    if kind == "llm" or attrs.get("llm.request.type") in ("chat", "completion") or reader_for(attrs):
        return "chat"
    return None


def tool_result(attrs: dict[str, Any]) -> tuple[str | None, str | None, Any]:
    """(call id, tool name, result) of a tool span of either convention."""
    name = attrs.get("tool.name") or attrs.get("traceloop.entity.name")
    call_id = attrs.get("tool_call.id") or attrs.get("gen_ai.tool.call.id")
    result = attrs.get("output.value", attrs.get("traceloop.entity.output"))
    return (str(call_id) if call_id else None, str(name) if name else None, result)


def session_of(attrs: dict[str, Any]) -> str | None:
    """The conversation a span belongs to by the conventions' session attributes."""
    return next((str(attrs[k]) for k in SESSION_KEYS if attrs.get(k)), None)
