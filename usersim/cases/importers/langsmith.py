"""LangSmith run / thread exports: JSON (a run object, a list of runs, `{"runs": [...]}`) or JSONL
(one run per line, what `client.list_runs` written line by line gives).

A run (langsmith.schemas.Run) has `id`, `name`, `run_type` (chain / llm / tool ...), `inputs`,
`outputs`, `start_time`, `dotted_order`, `parent_run_id`, `trace_id`, `extra.metadata` and
optionally nested `child_runs`; a flat export is re-nested by `parent_run_id` (else `trace_id`),
siblings ordered by `dotted_order`, else `start_time`. Each root run is one conversation, or one
turn of a thread when its metadata names a `thread_id` / `session_id` / `conversation_id` (the
roots of a thread are merged in order, by message id when the messages have ids). Messages are
read (importers/lc_history.py) from the root's `inputs.messages` / `outputs.messages`; when the
root carries no reply, from its `llm` child runs (`inputs.messages`, `outputs.generations`); tool
results the messages lack come from the `tool` child runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usersim.cases.importers.conversation import Conversation, ImportFormatError, day_of, pair_tool_results
from usersim.cases.importers.lc_history import LcMessage, chats, lc_message, lc_messages, merge
from usersim.cases.importers.openai_jsonl import openai_messages
from usersim.core.messages import Message

_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def _raw_messages(block: Any) -> list[Any] | None:
    if not isinstance(block, dict):
        return None
    raw: Any = block.get("messages")
    if raw is None and isinstance(block.get("generations"), list):  # an llm run's output
        gens = [g for row in block["generations"] for g in (row if isinstance(row, list) else [row])]
        first = next((g for g in gens if isinstance(g, dict)), None)
        if first is not None:
            raw = [
                first["message"]
                if first.get("message")
                else {"role": "assistant", "content": first.get("text")}
            ]
    if (
        raw is None
        and isinstance(block.get("output"), dict)
        and ({"lc", "role", "type"} & set(block["output"]))
    ):
        raw = [block["output"]]  # a chain that returned one message
    if raw is None and isinstance(block.get("choices"), list):  # an OpenAI completion
        raw = [c.get("message") for c in block["choices"][:1] if isinstance(c, dict)]
    if not isinstance(raw, list):
        return None
    if raw and all(isinstance(r, list) for r in raw):  # llm runs: a batch of prompts, take the first
        raw = raw[0]
    return raw


def _messages(block: Any, where: str) -> list[LcMessage]:
    """The messages of a run's inputs or outputs (empty when it holds none)."""
    raw = _raw_messages(block)
    if raw is None:
        return []
    try:
        return lc_messages(raw, where)
    except ValueError as exc:
        raise ImportFormatError(str(exc)) from None


def _order(run: dict[str, Any]) -> tuple[str, str]:
    return str(run.get("dotted_order") or ""), str(run.get("start_time") or "")


def _descendants(run: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for child in sorted(run.get("child_runs") or [], key=_order):
        out.append(child)
        out.extend(_descendants(child))
    return out


def _tool_result(run: dict[str, Any]) -> tuple[str, str | None]:
    """(the text a tool run returned, the tool call id it answered when it says)."""
    out = run.get("outputs") or {}
    value = out.get("output", out) if isinstance(out, dict) else out
    call_id = None
    if isinstance(value, dict) and ("lc" in value or "tool_call_id" in value or value.get("type") == "tool"):
        try:
            msg = lc_message(value, "tool output")
        except ValueError:
            msg = None
        if msg is not None and msg.chat is not None and msg.chat.get("role") == "tool":
            value, call_id = msg.chat.get("content"), msg.chat.get("tool_call_id")
    if run.get("error"):
        return f"Error: {run['error']}", call_id
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text, call_id


def _fill_tool_results(msgs: list[Message], runs: list[dict[str, Any]]) -> list[Message]:
    """Tool messages for the calls the messages do not answer, from the tool runs (by the call id
    their output names, else by tool name in order)."""
    answered = {m.tool_call_id for m in msgs if m.role == "tool"}
    tool_runs = [(r, *_tool_result(r)) for r in runs if r.get("run_type") == "tool"]
    out: list[Message] = []
    for m in msgs:
        out.append(m)
        for tc in m.tool_calls:
            if tc.id in answered:
                continue
            hit = next((t for t in tool_runs if t[2] == tc.id), None) or next(
                (t for t in tool_runs if t[2] is None and t[0].get("name") == tc.name), None
            )
            if hit is not None:
                tool_runs.remove(hit)
                out.append(
                    Message(
                        role="tool",
                        content=hit[1],
                        tool_call_id=tc.id,
                        name=tc.name,
                        is_error=bool(hit[0].get("error")),
                    )
                )
    return out


def _root_messages(run: dict[str, Any], where: str) -> list[LcMessage]:
    msgs = merge(_messages(run.get("inputs"), where), _messages(run.get("outputs"), where))
    if not any((m.chat or {}).get("role") == "assistant" for m in msgs):  # no reply: its model calls
        for llm in [r for r in _descendants(run) if r.get("run_type") in ("llm", "chat_model")]:
            w = f"{where} > {llm.get('name', 'llm')} {llm.get('id', '')}".rstrip()
            msgs = merge(msgs, _messages(llm.get("inputs"), w))
            msgs = merge(msgs, _messages(llm.get("outputs"), w))
    return msgs


def _nest(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Root runs, with flat children (parent_run_id, else the trace's root) attached as child_runs."""
    by_id = {str(r.get("id")): r for r in runs}
    roots = []
    for r in runs:
        parent = by_id.get(str(r.get("parent_run_id")))
        if parent is None and r.get("parent_run_id") and str(r.get("trace_id")) != str(r.get("id")):
            parent = by_id.get(str(r.get("trace_id")))  # its parent left out of the export: the trace root
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


def _runs(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Extra data"):
            raise ImportFormatError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        data = []  # JSONL: one run per line
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ImportFormatError(f"{path}:{n}: not JSON ({err.msg} at char {err.pos})") from None
    runs = data.get("runs") if isinstance(data, dict) and "runs" in data else data
    runs = [runs] if isinstance(runs, dict) else runs
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ImportFormatError(
            f"{path}: expected a LangSmith run, a list of runs, {{runs: [...]}} or one run per line"
        )
    return runs


def read_langsmith(path: Path) -> list[Conversation]:
    """The conversations of a LangSmith export file."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in _nest(_runs(path)):
        groups.setdefault(_thread(r) or str(r.get("trace_id") or r.get("id")), []).append(r)
    out = []
    for key, roots in groups.items():
        history: list[LcMessage] = []
        runs: list[dict[str, Any]] = []
        for r in sorted(roots, key=_order):
            history = merge(history, _root_messages(r, f"{path}: run {r.get('id', '?')}"))
            runs += _descendants(r)
        where = f"{path}: {key}"
        msgs = pair_tool_results(_fill_tool_results(openai_messages(chats(history), where), runs))
        if not any(m.role == "user" for m in msgs):
            continue  # a root run that is no conversation (a retriever, an evaluator)
        meta: dict[str, Any] = {"runs": len(roots)}
        first = min((str(r.get("start_time") or "") for r in roots), default="")
        if day_of(first):
            meta["date"] = day_of(first)
        out.append(Conversation(id=key, source=where, messages=msgs, metadata=meta))
    if not out:
        raise ImportFormatError(f"{path}: no run holds a conversation (no user message found)")
    return out
