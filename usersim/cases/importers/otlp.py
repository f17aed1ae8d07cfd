"""OTLP JSON traces (the OTLP/HTTP JSON encoding, or the collector's file exporter: one such
document per line) after the OpenTelemetry GenAI semantic conventions.

Spans are grouped into conversations by `gen_ai.conversation.id`, else by trace id. The
conversation's messages come from its `invoke_agent` spans when they carry
`gen_ai.input.messages` / `gen_ai.output.messages`, else from its `chat` spans (each model call
re-sends the history, so the calls are merged by prefix); chat spans of a simulated user or a
judge (`usersim.role: simulator|judge`) are left out. Messages are the conventions' ChatMessage
`{role, parts: [{type: text, content} | {type: tool_call, id, name, arguments} |
{type: tool_call_response, id, response}]}`, or the older per-message events
(`gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice` with
`content` / `tool_calls` / `id` attributes). Tool results the messages lack come from the
`execute_tool` spans (`gen_ai.tool.call.id`, `gen_ai.tool.name`, `gen_ai.tool.call.result`).

Spans of OpenLLMetry (`gen_ai.prompt.N.*`) and OpenInference (`llm.input_messages.N.message.*`)
are read by `otlp_conventions`, their tool spans and session attributes (`session.id`,
`traceloop.association.properties.session_id`) too: a session's traces are one conversation.
A list of spans as the SDKs dump them (`span.to_json()`: `context.trace_id`, `start_time`, an
`attributes` object, Phoenix's nested `{llm: {input_messages: [...]}}` flattened to dotted keys)
is read the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usersim.cases.importers import otlp_conventions as conventions
from usersim.cases.importers.conversation import (
    Conversation,
    ImportFormatError,
    day_of,
    merge_messages,
    pair_tool_results,
)
from usersim.cases.importers.openai_jsonl import openai_messages
from usersim.core.messages import Message

_SKIP_ROLES = {"simulator", "judge", "user_simulator"}
_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}


def any_value(v: Any) -> Any:
    """An OTLP AnyValue ({stringValue: ...} ...) as a plain value."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [any_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return attributes((v["kvlistValue"] or {}).get("values", []))
    return None


def attributes(items: Any) -> dict[str, Any]:
    """OTLP key/value attributes as a dict (a dumped span's attributes are one already)."""
    if isinstance(items, dict):
        return items
    return {a["key"]: any_value(a.get("value")) for a in items or [] if isinstance(a, dict) and "key" in a}


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def chat_messages(raw: Any) -> list[dict[str, Any]]:
    """The conventions' ChatMessage list as OpenAI chat dicts (a tool response part becomes a tool message)."""
    out: list[dict[str, Any]] = []
    for m in _json(raw) or []:
        if not isinstance(m, dict):
            continue
        if "parts" not in m:  # already a plain chat message
            out.append(m)
            continue
        role = m.get("role", "assistant")
        text, calls = [], []
        for p in m.get("parts") or []:
            kind = p.get("type") if isinstance(p, dict) else None
            if kind == "text":
                text.append(str(p.get("content", "")))
            elif kind == "tool_call":
                args = _json(p.get("arguments"))
                calls.append({"id": p.get("id") or "", "name": p.get("name"), "arguments": args or {}})
            elif kind == "tool_call_response":
                out.append({"role": "tool", "tool_call_id": p.get("id"), "content": _text(p.get("response"))})
        if role != "tool" and (text or calls):
            msg: dict[str, Any] = {"role": role, "content": "".join(text)}
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
    return out


def _event_messages(span: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for ev in span.get("events") or []:
        role = _EVENT_ROLES.get(ev.get("name", ""))
        if role is None:
            continue
        a = attributes(ev.get("attributes"))
        body = _json(a.get("gen_ai.event.content") or a.get("body")) or {}
        body = body.get("message", body) if isinstance(body, dict) else {}
        msg: dict[str, Any] = {
            "role": body.get("role", role),
            "content": body.get("content", a.get("content")),
        }
        calls = _json(body.get("tool_calls", a.get("tool_calls")))
        if calls:
            msg["tool_calls"] = calls
        if role == "tool":
            msg["tool_call_id"] = body.get("id", a.get("id"))
        out.append(msg)
    return out


def _span_messages(span: dict[str, Any], where: str) -> list[Message]:
    a = span["attrs"]
    dicts = chat_messages(a.get("gen_ai.system_instructions")) if a.get("gen_ai.system_instructions") else []
    if dicts and dicts[0].get("role") != "system":  # instructions are bare parts
        dicts = [{"role": "system", "content": " ".join(str(d.get("content", "")) for d in dicts)}]
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        dicts += chat_messages(a.get("gen_ai.input.messages")) + chat_messages(
            a.get("gen_ai.output.messages")
        )
    elif (read := conventions.reader_for(a)) is not None:
        dicts += read(a, f"{where}: span {span.get('spanId', '?')}")
    else:
        dicts += _event_messages(span)
    return openai_messages(dicts, f"{where} span {span.get('spanId', '?')}") if dicts else []


def _spans(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    docs: list[Any] = []
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:  # the file exporter: one document per line
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    docs.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ImportFormatError(f"{path}:{n}: not JSON ({exc.msg})") from None
    spans = []
    flat = [d for doc in docs for d in (doc if isinstance(doc, list) else [doc]) if is_flat_span(d)]
    if flat:  # an SDK's span dump: one span per document or a list of them
        return sorted((_flat_span(s) for s in flat), key=lambda s: s["startTimeUnixNano"])
    for doc in docs:
        if not isinstance(doc, dict) or "resourceSpans" not in doc:
            raise ImportFormatError(
                f"{path}: not an OTLP JSON trace (no `resourceSpans`) nor a list of spans "
                "(`context.trace_id` with an `attributes` object)"
            )
        for rs in doc["resourceSpans"] or []:
            res = attributes((rs.get("resource") or {}).get("attributes"))
            for ss in rs.get("scopeSpans") or []:
                for s in ss.get("spans") or []:
                    spans.append({**s, "attrs": {**res, **attributes(s.get("attributes"))}})
    return sorted(spans, key=lambda s: int(s.get("startTimeUnixNano") or 0))


def is_flat_span(doc: Any) -> bool:
    """A span as the SDKs dump it (`span.to_json()`, Phoenix): `context.trace_id`, `attributes` an object."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("context"), dict)
        and "trace_id" in doc["context"]
        and isinstance(doc.get("attributes"), dict)
    )


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    """Nested attributes (Phoenix: `{llm: {input_messages: [{message: ...}]}}`) as dotted keys;
    a list of scalars stays one value."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def _nanos(value: Any) -> int:
    import datetime as dt

    if isinstance(value, str) and not value.isdigit():
        stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return int(stamp.replace(tzinfo=stamp.tzinfo or dt.UTC).timestamp() * 1e9)
    return int(value or 0)


def _flat_span(s: dict[str, Any]) -> dict[str, Any]:
    """A dumped span in the OTLP JSON shape the reader works on."""
    status = s.get("status") or {}
    code = status.get("status_code") or status.get("code") if isinstance(status, dict) else None
    return {
        "traceId": s["context"]["trace_id"],
        "spanId": s["context"].get("span_id", "?"),
        "name": s.get("name", ""),
        "startTimeUnixNano": _nanos(s.get("start_time")),
        "status": {"code": 2 if str(code).upper() in ("ERROR", "STATUS_CODE_ERROR", "2") else 0},
        "events": [
            {"name": e.get("name", ""), "attributes": _flatten(e.get("attributes") or {}, "", {})}
            for e in s.get("events") or []
            if isinstance(e, dict)
        ],
        "attrs": {
            **_flatten((s.get("resource") or {}).get("attributes") or {}, "", {}),
            **_flatten(s["attributes"], "", {}),
        },
    }


def _op(span: dict[str, Any]) -> str:
    a = span["attrs"]
    return str(
        a.get("gen_ai.operation.name") or conventions.operation(a) or span.get("name", "").split(" ")[0]
    )


def _tool(span: dict[str, Any]) -> tuple[str | None, str | None, Any]:
    """(call id, name, result) of a tool span, GenAI conventions first."""
    a = span["attrs"]
    if "gen_ai.tool.name" in a or "gen_ai.tool.call.result" in a:
        return a.get("gen_ai.tool.call.id"), a.get("gen_ai.tool.name"), a.get("gen_ai.tool.call.result", "")
    return conventions.tool_result(a)


def _with_tool_results(msgs: list[Message], tools: list[dict[str, Any]]) -> list[Message]:
    answered = {m.tool_call_id for m in msgs if m.role == "tool"}
    out: list[Message] = []
    for m in msgs:
        out.append(m)
        for tc in m.tool_calls:
            if tc.id in answered:
                continue
            hit = next((t for t in tools if _tool(t)[0] == tc.id), None) or next(
                (t for t in tools if _tool(t)[1] == tc.name), None
            )
            if hit is not None:
                tools.remove(hit)
                error = (hit.get("status") or {}).get("code") in (2, "STATUS_CODE_ERROR")
                out.append(
                    Message(
                        role="tool",
                        tool_call_id=tc.id,
                        name=tc.name,
                        content=_text(_json(_tool(hit)[2] or "")),
                        is_error=error,
                    )
                )
    return out


def read_otlp(path: Path) -> list[Conversation]:
    """The conversations of an OTLP JSON trace file."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in _spans(path):
        groups.setdefault(str(s.get("traceId")), []).append(s)
    convs: dict[str, list[Message]] = {}
    days: dict[str, str] = {}
    for trace, spans in groups.items():
        key = next((k for s in spans if (k := conventions.session_of(s["attrs"]))), trace)
        agents = [s for s in spans if _op(s) == "invoke_agent" and _span_messages(s, str(path))]
        chats = [s for s in spans if _op(s) in ("chat", "text_completion", "generate_content")]
        chats = [s for s in chats if str(s["attrs"].get("usersim.role", "agent")) not in _SKIP_ROLES]
        msgs = convs.get(key, [])
        for s in agents or chats:
            msgs = merge_messages(msgs, _span_messages(s, str(path)))
        tools = [s for s in spans if _op(s) == "execute_tool"]
        convs[key] = pair_tool_results(_with_tool_results(pair_tool_results(msgs), tools))
        day = day_of(spans[0].get("startTimeUnixNano"))
        if day:
            days.setdefault(key, day)
    out = [
        Conversation(
            id=k, source=f"{path}: trace {k}", messages=m, metadata={"date": days[k]} if k in days else {}
        )
        for k, m in convs.items()
        if any(x.role == "user" for x in m)
    ]
    if not out:
        raise ImportFormatError(
            f"{path}: no trace holds a conversation (no gen_ai messages with a user turn)"
        )
    return out
