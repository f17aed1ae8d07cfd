"""LangGraph checkpointer threads: what `graph.get_state_history(config)` gives (StateSnapshots:
`values`, `next`, `config`, `metadata`, `created_at`, `parent_config`), what the LangGraph server's
`GET/POST /threads/{id}/history` returns (the same with `checkpoint` / `parent_checkpoint`), or a
checkpoint tuple dump (`checkpointer.list(...)`: `config`, `checkpoint.channel_values`,
`metadata`, `parent_config`, `pending_writes`). JSON (a list, one object, `{"history"|"checkpoints":
[...]}`) or JSONL (one per line); several threads in one file become several conversations.

Every checkpoint repeats the thread's state so far (`values.messages`, reduced by add_messages),
newest first in the server's answer, and a dump may repeat or shuffle them. The history is rebuilt
once per thread (root namespace only): checkpoints deduplicated by id, ordered by step (then time,
then id, checked against their parent links), each one's messages matched by id with the state
before it; the last checkpoint's pending writes are folded in (add_messages: an id replaces, a
RemoveMessage removes). Anything that leaves the order or the pairing in doubt stops the import
naming the file, the thread, the checkpoint and the message: checkpoints that disagree on order,
a fork, a message without id whose place is ambiguous, a tool result answering no call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from usersim.cases.importers.conversation import Conversation, ImportFormatError, day_of
from usersim.cases.importers.lc_history import LcMessage, add_messages, chats, lc_messages
from usersim.cases.importers.openai_jsonl import openai_messages


@dataclass
class Checkpoint:
    """One checkpoint of a thread, whichever shape it came in."""

    thread: str
    id: str
    parent: str | None
    namespace: str
    step: int | None
    time: str
    messages: Any  # the raw values.messages (None: the state had no messages yet)
    pending: list[Any] = field(default_factory=list)  # raw messages written but not yet applied
    item: int = 0  # its place in the file


def _conf(cfg: Any) -> dict[str, Any]:
    if not isinstance(cfg, dict):
        return {}
    inner = cfg.get("configurable")
    return inner if isinstance(inner, dict) else cfg


def _checkpoint(item: Any, n: int, where: str, default_thread: str) -> Checkpoint:
    if not isinstance(item, dict):
        raise ImportFormatError(f"{where}: a checkpoint must be an object, got {type(item).__name__}")
    meta: dict[str, Any] = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
    body = item.get("checkpoint")
    if isinstance(body, dict) and isinstance(body.get("channel_values"), dict):  # a checkpoint tuple
        conf, values = _conf(item.get("config")), body["channel_values"]
        cid, time = conf.get("checkpoint_id") or body.get("id"), str(body.get("ts") or "")
        parent = _conf(item.get("parent_config")).get("checkpoint_id")
        pending = [
            m
            for w in item.get("pending_writes") or []
            if isinstance(w, list | tuple) and len(w) == 3 and w[1] == "messages"
            for m in (w[2] if isinstance(w[2], list) else [w[2]])
        ]
    elif isinstance(item.get("values"), dict):  # a StateSnapshot / the server's thread state
        conf = _conf(item.get("checkpoint")) or _conf(item.get("config"))
        values, time, pending = item["values"], str(item.get("created_at") or ""), []
        cid = conf.get("checkpoint_id") or item.get("checkpoint_id")
        parent = _conf(item.get("parent_checkpoint")).get("checkpoint_id") or _conf(
            item.get("parent_config")
        ).get("checkpoint_id")
        parent = parent or item.get("parent_checkpoint_id")
    else:
        raise ImportFormatError(
            f"{where}: not a LangGraph checkpoint (expected `values` as in a StateSnapshot or a "
            "thread's history, or `checkpoint.channel_values` as in a checkpoint tuple)"
        )
    if not cid:
        raise ImportFormatError(f"{where}: the checkpoint has no checkpoint_id")
    step = meta.get("step")
    return Checkpoint(
        thread=str(conf.get("thread_id") or meta.get("thread_id") or default_thread),
        id=str(cid),
        parent=str(parent) if parent else None,
        namespace=str(conf.get("checkpoint_ns") or ""),
        step=step if isinstance(step, int) else None,
        time=time,
        messages=values.get("messages"),
        pending=pending,
        item=n,
    )


def _items(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Extra data"):
            raise ImportFormatError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        data = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    data.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise ImportFormatError(f"{path}:{n}: not JSON ({err.msg} at char {err.pos})") from None
    if isinstance(data, dict):
        key = next((k for k in ("history", "checkpoints", "states") if isinstance(data.get(k), list)), None)
        data = data[key] if key else [data]
    if not isinstance(data, list):
        raise ImportFormatError(
            f"{path}: expected a list of checkpoints (a thread's history or a checkpoint dump)"
        )
    return data


class _Thread:
    """The checkpoints of one thread, folded into one history."""

    def __init__(self, path: Path, thread: str, checkpoints: list[Checkpoint]) -> None:
        self.path, self.thread = path, thread
        self.checkpoints = self._ordered(self._unique(checkpoints))

    def where(self, cp: Checkpoint) -> str:
        return f"{self.path}: thread {self.thread}, checkpoint {cp.id}"

    def _unique(self, cps: list[Checkpoint]) -> list[Checkpoint]:
        seen: dict[str, Checkpoint] = {}
        for cp in cps:
            first = seen.setdefault(cp.id, cp)
            if first is not cp and (first.messages, first.step) != (cp.messages, cp.step):
                raise ImportFormatError(
                    f"{self.where(cp)}: appears twice (items {first.item} and {cp.item}) with different "
                    "messages; export the thread's history once"
                )
        return list(seen.values())

    def _ordered(self, cps: list[Checkpoint]) -> list[Checkpoint]:
        ids = {cp.id for cp in cps}
        children: dict[str, list[str]] = {}
        for cp in cps:
            if cp.parent in ids:
                children.setdefault(cp.parent, []).append(cp.id)
        for parent, kids in children.items():
            if len(kids) > 1:
                raise ImportFormatError(
                    f"{self.path}: thread {self.thread}, checkpoint {parent}: the history forks here "
                    f"(checkpoints {', '.join(kids)} both continue it); export one branch"
                )
        if all(cp.step is not None for cp in cps):
            steps: dict[int, Checkpoint] = {}
            for cp in cps:
                other = steps.setdefault(cp.step or 0, cp)
                if other is not cp:
                    raise ImportFormatError(
                        f"{self.where(cp)}: checkpoints disagree on order: {other.id} is at step {cp.step} too"
                    )
        ordered = sorted(cps, key=lambda c: (c.step if c.step is not None else 0, c.time, c.id))
        place = {cp.id: i for i, cp in enumerate(ordered)}
        for cp in ordered:
            if cp.parent in place and place[cp.parent] > place[cp.id]:
                raise ImportFormatError(
                    f"{self.where(cp)}: checkpoints disagree on order: its parent {cp.parent} comes later "
                    "by step and time"
                )
        return ordered

    def _ids(self, cp: Checkpoint, msgs: list[LcMessage], before: list[LcMessage]) -> list[LcMessage]:
        """`msgs` with an id each: a message without one is the message at its place in `before`
        when everything before it matches, or new at the end."""
        out: list[LcMessage] = []
        for pos, m in enumerate(msgs):
            if m.id is None:
                same_prefix = [x.id for x in out] == [x.id for x in before[:pos]]
                if same_prefix and pos < len(before) and before[pos].same_as(m):
                    m = LcMessage(before[pos].id, m.chat)
                elif same_prefix and pos >= len(before):
                    m = LcMessage(f"{cp.id}#{pos}", m.chat)
                else:
                    role = (m.chat or {}).get("role")
                    raise ImportFormatError(
                        f"{self.where(cp)}: message {pos} ({role}) has no id and its place is ambiguous "
                        "(the messages before it differ from the checkpoint before); export messages with ids"
                    )
            out.append(m)
        return out

    def history(self) -> list[LcMessage]:
        state: list[LcMessage] = []
        seen_in: dict[str, Checkpoint] = {}
        for cp in self.checkpoints:
            if cp.messages is None:
                continue
            try:
                msgs = lc_messages(cp.messages, self.where(cp))
            except ValueError as exc:
                raise ImportFormatError(str(exc)) from None
            msgs = self._ids(cp, [m for m in msgs if not m.removes], state)
            self._check_order(cp, msgs, state, seen_in)
            state = msgs
            for m in msgs:
                seen_in.setdefault(str(m.id), cp)
        last = self.checkpoints[-1] if self.checkpoints else None
        if last is not None and last.pending:
            try:
                state = add_messages(state, lc_messages(last.pending, f"{self.where(last)} pending write"))
            except ValueError as exc:
                raise ImportFormatError(str(exc)) from None
            for m in state:
                seen_in.setdefault(str(m.id), last)
        self._check_calls(state, seen_in)
        return state

    def _check_order(
        self, cp: Checkpoint, msgs: list[LcMessage], state: list[LcMessage], seen_in: dict[str, Checkpoint]
    ) -> None:
        ids = [str(m.id) for m in msgs]
        twice = next((i for i in ids if ids.count(i) > 1), None)
        if twice is not None:
            raise ImportFormatError(f"{self.where(cp)}: message {twice} appears twice in the same checkpoint")
        place = {str(m.id): i for i, m in enumerate(state)}
        known = [i for i in ids if i in place]
        for a, b in zip(known, known[1:], strict=False):
            if place[a] > place[b]:
                raise ImportFormatError(
                    f"{self.where(cp)}: checkpoints disagree on order: message {a} comes before message {b} "
                    f"here, after it in checkpoint {seen_in[a].id}"
                )

    def _check_calls(self, state: list[LcMessage], seen_in: dict[str, Checkpoint]) -> None:
        calls: set[str] = set()
        for m in state:
            chat = m.chat or {}
            calls |= {str(c.get("id")) for c in chat.get("tool_calls") or [] if c.get("id")}
            if chat.get("role") == "tool" and str(chat.get("tool_call_id")) not in calls:
                raise ImportFormatError(
                    f"{self.where(seen_in[str(m.id)])}: message {m.id} (tool) answers tool call "
                    f"{chat.get('tool_call_id')!r}, which no earlier AI message made "
                    f"(calls so far: {', '.join(sorted(calls)) or 'none'})"
                )


def read_langgraph(path: Path) -> list[Conversation]:
    """The conversations (one per thread) of a LangGraph history / checkpoint dump file."""
    threads: dict[str, list[Checkpoint]] = {}
    for n, item in enumerate(_items(path)):
        cp = _checkpoint(item, n, f"{path}: item {n}", path.stem)
        if not cp.namespace:  # a subgraph's checkpoints repeat part of the parent's state
            threads.setdefault(cp.thread, []).append(cp)
    out = []
    for thread, cps in threads.items():
        t = _Thread(path, thread, cps)
        where = f"{path}: thread {thread}"
        msgs = openai_messages(chats(t.history()), where)
        if not any(m.role == "user" for m in msgs):
            continue
        meta: dict[str, Any] = {"checkpoints": len(t.checkpoints)}
        if t.checkpoints and day_of(t.checkpoints[0].time):
            meta["date"] = day_of(t.checkpoints[0].time)
        out.append(Conversation(id=thread, source=where, messages=msgs, metadata=meta))
    if not out:
        raise ImportFormatError(
            f"{path}: no thread holds a conversation (no human message in any checkpoint)"
        )
    return out
