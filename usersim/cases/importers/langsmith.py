"""LangSmith run / thread exports (JSON): a run object, a list of runs, or `{"runs": [...]}`.

A run (langsmith.schemas.Run) has `id`, `name`, `run_type` (chain / llm / tool ...), `inputs`,
`outputs`, `start_time`, `parent_run_id`, `trace_id`, `extra.metadata` and optionally nested
`child_runs`; a flat list is re-nested by `parent_run_id`. Each root run is one conversation, or
one turn of a thread when its metadata names a `thread_id` / `session_id` / `conversation_id`
(the roots of a thread are merged in time order). Messages are read from the root's
`inputs.messages` / `outputs.messages` (OpenAI dicts, LangChain message dicts, or serialized
LangChain messages); when the root carries none, from its last `llm` child run; tool results the
messages lack come from the `tool` child runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usersim.cases.importers.conversation import (
    Conversation,
    ImportFormatError,
    day_of,
    merge_messages,
    pair_tool_results,
)
from usersim.cases.importers.openai_jsonl import openai_messages
from usersim.core.messages import Message

_LC_ROLES = {
    "human": "user",
    "HumanMessage": "user",
    "HumanMessageChunk": "user",
    "ai": "assistant",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "ToolMessage": "tool",
    "system": "system",
    "SystemMessage": "system",
}
_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def _lc_message(m: dict[str, Any]) -> dict[str, Any]:
    """One message in any of LangChain's dict shapes as an OpenAI chat dict."""
    if m.get("lc") and isinstance(m.get("kwargs"), dict):  # serialized: {lc, type: constructor, id, kwargs}
        kind, body = str((m.get("id") or ["?"])[-1]), m["kwargs"]
    elif isinstance(m.get("data"), dict) and "type" in m:  # messages_to_dict: {type, data}
        kind, body = str(m["type"]), m["data"]
    elif "role" in m:
        return m
    else:
        kind, body = str(m.get("type", "")), m
    role = _LC_ROLES.get(kind)
    if role is None:
        raise ValueError(f"unknown message type {kind!r}")
    out: dict[str, Any] = {"role": role, "content": body.get("content")}
    calls = body.get("tool_calls") or (body.get("additional_kwargs") or {}).get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            c
            if "function" in c
            else {"id": c.get("id") or "", "name": c.get("name"), "arguments": c.get("args") or {}}
            for c in calls
        ]
    if role == "tool":
        out["tool_call_id"] = body.get("tool_call_id")
        out["is_error"] = body.get("status") == "error"
    return out


def _messages(block: Any, where: str) -> list[Message]:
    """The messages of a run's inputs or outputs (empty when it holds none)."""
    if not isinstance(block, dict):
        return []
    raw: Any = block.get("messages")
    if raw is None and isinstance(block.get("generations"), list):  # an llm run's output
        gens = [g for row in block["generations"] for g in (row if isinstance(row, list) else [row])]
        raw = [g.get("message") for g in gens[:1] if isinstance(g, dict) and g.get("message")]
    if raw is None and isinstance(block.get("output"), dict):
        raw = [block["output"]]
    if raw is None and isinstance(block.get("choices"), list):  # an OpenAI completion
        raw = [c.get("message") for c in block["choices"][:1] if isinstance(c, dict)]
    if not isinstance(raw, list):
        return []
    if raw and all(isinstance(r, list) for r in raw):  # llm runs: a batch of prompts, take the first
        raw = raw[0]
    try:
        dicts = [_lc_message(m) if isinstance(m, dict) else m for m in raw]
    except ValueError as exc:
        raise ImportFormatError(f"{where}: {exc}") from None
    return openai_messages(dicts, where)


def _tool_output(run: dict[str, Any]) -> str:
    out = run.get("outputs") or {}
    value = out.get("output", out) if isinstance(out, dict) else out
    if isinstance(value, dict) and "content" in value and ("tool_call_id" in value or "type" in value):
        value = value["content"]  # a ToolMessage returned by a LangChain tool
    if run.get("error"):
        return f"Error: {run['error']}"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _descendants(run: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for child in sorted(run.get("child_runs") or [], key=lambda r: str(r.get("start_time", ""))):
        out.append(child)
        out.extend(_descendants(child))
    return out


def _fill_tool_results(msgs: list[Message], runs: list[dict[str, Any]]) -> list[Message]:
    """Tool messages for the calls the messages do not answer, from the tool runs (by name, in order)."""
    answered = {m.tool_call_id for m in msgs if m.role == "tool"}
    tool_runs = [r for r in runs if r.get("run_type") == "tool"]
    out: list[Message] = []
    for m in msgs:
        out.append(m)
        for tc in m.tool_calls:
            if tc.id in answered:
                continue
            hit = next((r for r in tool_runs if r.get("name") == tc.name), None)
            if hit is not None:
                tool_runs.remove(hit)
                out.append(
                    Message(
                        role="tool",
                        content=_tool_output(hit),
                        tool_call_id=tc.id,
                        name=tc.name,
                        is_error=bool(hit.get("error")),
                    )
                )
    return out


def _root_messages(run: dict[str, Any], where: str) -> list[Message]:
    msgs = merge_messages(_messages(run.get("inputs"), where), _messages(run.get("outputs"), where))
    runs = _descendants(run)
    if not any(m.role == "assistant" for m in msgs):  # a chain without messages: its model calls
        for llm in [r for r in runs if r.get("run_type") in ("llm", "chat_model")]:
            w = f"{where} > {llm.get('name', 'llm')}"
            msgs = merge_messages(msgs, _messages(llm.get("inputs"), w))
            msgs = merge_messages(msgs, _messages(llm.get("outputs"), w))
    return pair_tool_results(_fill_tool_results(pair_tool_results(msgs), runs))


def _nest(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Root runs, with flat children (parent_run_id) attached as child_runs."""
    by_id = {str(r.get("id")): r for r in runs}
    roots = []
    for r in runs:
        parent = by_id.get(str(r.get("parent_run_id")))
        if parent is not None and parent is not r:
            kids = parent.setdefault("child_runs", [])
            if r not in kids:
                kids.append(r)
        else:
            roots.append(r)
    return roots


def _thread(run: dict[str, Any]) -> str | None:
    meta = ((run.get("extra") or {}).get("metadata") or {}) if isinstance(run.get("extra"), dict) else {}
    meta = {**meta, **(run.get("metadata") or {})} if isinstance(run.get("metadata"), dict) else meta
    return next((str(meta[k]) for k in _THREAD_KEYS if meta.get(k)), None)


def read_langsmith(path: Path) -> list[Conversation]:
    """The conversations of a LangSmith export file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    runs = data.get("runs") if isinstance(data, dict) and "runs" in data else data
    runs = [runs] if isinstance(runs, dict) else runs
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ImportFormatError(f"{path}: expected a LangSmith run, a list of runs or {{runs: [...]}}")
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in _nest(runs):
        groups.setdefault(_thread(r) or str(r.get("trace_id") or r.get("id")), []).append(r)
    out = []
    for key, roots in groups.items():
        msgs: list[Message] = []
        for r in sorted(roots, key=lambda r: str(r.get("start_time", ""))):
            msgs = merge_messages(msgs, _root_messages(r, f"{path}: run {r.get('id', '?')}"))
        if not any(m.role == "user" for m in msgs):
            continue  # a root run that is no conversation (a retriever, an evaluator)
        meta: dict[str, Any] = {"runs": len(roots)}
        first = min((str(r.get("start_time") or "") for r in roots), default="")
        if day_of(first):
            meta["date"] = day_of(first)
        out.append(Conversation(id=key, source=f"{path}: {key}", messages=msgs, metadata=meta))
    if not out:
        raise ImportFormatError(f"{path}: no run holds a conversation (no user message found)")
    return out
