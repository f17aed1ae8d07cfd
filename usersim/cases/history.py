"""A static case's recorded history: OpenAI chat-format messages as users export them, and the
writes in it applied to the environment before the live turn.

`input.history` takes usersim's own message shape (`tool_calls: [{id, name, arguments}]`) and the
OpenAI chat shape beside it: assistant messages with `tool_calls: [{id, type: function, function:
{name, arguments: "<JSON string>"}}]` and `content: null`, `tool` messages answering a
`tool_call_id` (their tool name is taken from the call they answer), content given as a list of
text parts. A malformed message is a ValueError naming its index and field, which the loader
reports as `file:line: input.history.N...`.

Writes: the recorded environment calls of the history are replayed through the environment's own
tools (the engine the sandbox and the `final_state` judge use), in order, before the live turn.
Replaying rather than copying the recorded results keeps one source of truth for the state (the
tools) and shows a history that no longer fits the environment: a call recorded as succeeding
that the tools now refuse is a load problem naming the message. Calls recorded as failing are not
replayed (they changed nothing); calls to mock or built-in tools change no state.
"""

from __future__ import annotations

import json
from typing import Any

from usersim.core.messages import Message

_MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name", "is_error"}
# OpenAI response fields a replay has no use for, and a usersim record's `by` (who played a user
# turn: a replayed history is the same conversation whoever typed it)
_IGNORED_KEYS = {"refusal", "annotations", "audio", "function_call", "reasoning_content", "by"}


def _text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        out = []
        for j, part in enumerate(content):
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif not isinstance(part, dict):
                raise ValueError(
                    f"{where}.content.{j}: a content part must be an object, got {type(part).__name__}"
                )
        return "".join(out)
    raise ValueError(
        f"{where}.content: must be text or a list of content parts, got {type(content).__name__}"
    )


def _call(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a tool call must be an object, got {type(raw).__name__}")
    fn = raw.get("function")
    if fn is None:  # usersim's own shape {id, name, arguments}
        return raw
    if not isinstance(fn, dict):
        raise ValueError(f"{where}.function: must be an object {{name, arguments}}, got {type(fn).__name__}")
    kind = raw.get("type", "function")
    if kind != "function":
        raise ValueError(f"{where}.type: only function tool calls are supported, got {kind!r}")
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.function.name: the call has no tool name")
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{where}.function.arguments: not valid JSON ({exc.msg} at char {exc.pos})"
            ) from None
    if args is not None and not isinstance(args, dict):
        raise ValueError(f"{where}.function.arguments: must be a JSON object, got {type(args).__name__}")
    return {"id": str(raw.get("id") or ""), "name": name, "arguments": args or {}}


def normalize_history(raw: Any) -> Any:
    """`input.history` in usersim's message shape: OpenAI chat-format messages converted, tool
    messages given the name of the call they answer. Anything not a list is left to pydantic."""
    if not isinstance(raw, list):
        return raw
    names: dict[str, str] = {}
    out: list[Any] = []
    for i, m in enumerate(raw):
        where = f"message {i}"
        if isinstance(m, Message):
            m = m.model_dump()
        if not isinstance(m, dict):
            raise ValueError(f"{where}: a message must be a mapping with `role`, got {type(m).__name__}")
        unknown = sorted(set(m) - _MESSAGE_KEYS - _IGNORED_KEYS)
        if unknown:
            raise ValueError(
                f"{where}: unknown field(s) {', '.join(unknown)} (a message has {', '.join(sorted(_MESSAGE_KEYS))})"
            )
        msg = {k: v for k, v in m.items() if k in _MESSAGE_KEYS and v is not None}  # `tool_calls: null` ...
        msg["content"] = _text(m.get("content"), where)
        calls = m.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise ValueError(f"{where}.tool_calls: must be a list, got {type(calls).__name__}")
            msg["tool_calls"] = [_call(c, f"{where}.tool_calls.{j}") for j, c in enumerate(calls)]
            for j, c in enumerate(msg["tool_calls"]):
                if not c.get("id"):
                    c["id"] = f"call_{i}_{j}"
                if isinstance(c.get("name"), str):
                    names[str(c["id"])] = c["name"]
        if m.get("role") == "tool":
            call_id = m.get("tool_call_id")
            if not call_id:
                raise ValueError(f"{where}.tool_call_id: a tool message must name the call it answers")
            if str(call_id) not in names:
                raise ValueError(
                    f"{where}.tool_call_id: '{call_id}' answers no earlier tool call "
                    f"(calls so far: {', '.join(names) or 'none'})"
                )
            msg.setdefault("name", names[str(call_id)])
            if not msg.get("name"):
                msg["name"] = names[str(call_id)]
        out.append(msg)
    return out


def recorded_calls(history: list[Message]) -> list[tuple[int, int, str, dict[str, Any], bool | None]]:
    """(message index, call index, tool, arguments, failed) for every tool call of the history;
    `failed` from the tool message answering it (`is_error`, or a result starting with `Error`),
    None when no answer was recorded."""
    answers: dict[str, bool] = {}
    for m in history:
        if m.role == "tool" and m.tool_call_id:
            answers[m.tool_call_id] = m.is_error or m.content.lstrip().startswith("Error")
    return [
        (i, j, tc.name, dict(tc.arguments), answers.get(tc.id))
        for i, m in enumerate(history)
        for j, tc in enumerate(m.tool_calls)
    ]


def history_writes(env: Any, history: list[Message]) -> list[tuple[str, dict[str, Any]]]:
    """The environment calls of `history` to replay before the live turn (those recorded as
    succeeding, or unanswered). ValueError naming the message when one the history records as
    succeeding is refused by the environment's tools now."""
    from usersim.cases.environment import EnvState

    st = EnvState(env, prelude=False)
    applied: list[tuple[str, dict[str, Any]]] = []
    for i, j, name, args, failed in recorded_calls(history):
        if name not in st.tools or failed:
            continue
        result, is_error = st.call(name, args)
        if is_error:
            raise ValueError(
                f"message {i}.tool_calls.{j}: the history records {name}({json.dumps(args, ensure_ascii=False)}) "
                f"as succeeding, but the environment refuses it: {result}"
            )
        applied.append((name, args))
    return applied
