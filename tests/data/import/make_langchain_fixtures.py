"""Re-make the LangSmith JSONL and LangGraph fixtures from a real bank run (kept so the fixtures can
be regenerated; the tests read the committed files, never this script).

    usersim run examples/bank/cases --agent python:examples.bank.agent:correct --out /tmp/bankrun
    python tests/data/import/make_langchain_fixtures.py /tmp/bankrun

Written the way the tools write them (LangSmith run data format; LangGraph StateSnapshot, the
server's /threads/{id}/history answer and checkpoint tuples):

- `langsmith_runs.jsonl`: a runs export, one run per line, flat (children linked by
  `parent_run_id`, `trace_id` and `dotted_order`), newest first as `list_runs` returns them.
  BANK-06 is a five-turn thread (`session_id`) of a chain whose messages exist only in its
  `llm` runs (serialized LangChain messages, `outputs.generations`) and `tool` runs (ToolMessage
  outputs); BANK-03 a LangGraph thread (`thread_id`): root inputs `{"role": "user"}`, outputs the
  whole state as message dicts with ids; BANK-08 one trace whose last tool results exist only as
  tool runs.
- `langgraph_history.json`: `GET /threads/{id}/history` for the BANK-03 thread: every
  checkpoint (newest first) repeats the messages so far, with message ids and tool_call ids.
- `langgraph_checkpoints.json`: `checkpointer.list(None)` dumped as checkpoint tuples
  (serialized messages in `channel_values`) for the BANK-08, BANK-04 and BANK-06 threads.
"""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from make_fixtures import BANK_PROMPT, transcripts

HERE = Path(__file__).parent
T0 = datetime(2026, 4, 7, 9, 0, 0, tzinfo=UTC)
KIND = {"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}
CLASS = {"user": "HumanMessage", "assistant": "AIMessage", "tool": "ToolMessage", "system": "SystemMessage"}


def uid(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def with_ids(msgs: list[dict], conv: str) -> list[dict]:
    """The transcript with OpenAI-like call ids and LangChain-like message ids."""
    out, calls = [], []
    for i, m in enumerate(msgs):
        m = {**m, "id": ("run-" if m["role"] == "assistant" else "") + uid(conv, "msg", i)}
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {**t, "id": "call_" + uid(conv, "call", i, j).replace("-", "")[:24]}
                for j, t in enumerate(m["tool_calls"])
            ]
            calls += [(t["id"], t["name"]) for t in m["tool_calls"]]
        if m["role"] == "tool":
            cid, name = calls.pop(0)
            m["tool_call_id"], m["name"] = cid, name
        out.append(m)
    return out


def as_dict(m: dict, usage: int = 0) -> dict:
    """A message as `message.model_dump()` / the LangGraph server writes it."""
    d: dict[str, Any] = {
        "content": m["content"] or "",
        "additional_kwargs": {},
        "response_metadata": {},
        "type": KIND[m["role"]],
        "name": m.get("name") if m["role"] == "tool" else None,
        "id": m["id"],
    }
    if m["role"] == "user":
        d["example"] = False
    if m["role"] == "assistant":
        d["response_metadata"] = {
            "finish_reason": "tool_calls" if m.get("tool_calls") else "stop",
            "model_name": "gpt-4.1-mini-2025-04-14",
        }
        d["tool_calls"] = [
            {"name": t["name"], "args": t["arguments"], "id": t["id"], "type": "tool_call"}
            for t in m.get("tool_calls") or []
        ]
        d["invalid_tool_calls"] = []
        d["usage_metadata"] = {"input_tokens": 700 + usage, "output_tokens": 24, "total_tokens": 724 + usage}
    if m["role"] == "tool":
        d.update(tool_call_id=m["tool_call_id"], artifact=None, status="success")
    return d


def serialized(m: dict, ids: bool = True) -> dict:
    """A message as `langchain_core.load.dumpd` writes it."""
    kw = {k: v for k, v in as_dict(m).items() if v not in (None, {}, [], False) or k == "content"}
    if not ids:
        kw.pop("id", None)
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", CLASS[m["role"]]],
        "kwargs": kw,
    }


def turns(msgs: list[dict]) -> list[tuple[dict, list[dict]]]:
    """(user message, what followed it) per turn."""
    out: list[tuple[dict, list[dict]]] = []
    for m in msgs:
        if m["role"] == "user":
            out.append((m, []))
        elif out:
            out[-1][1].append(m)
    return out


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")


def dotted(t: datetime, rid: str) -> str:
    return t.strftime("%Y%m%dT%H%M%S%fZ") + rid


class Trace:
    """Runs of one trace, flat, with dotted_order and parent links."""

    def __init__(self, runs: list[dict], root: dict, t: datetime) -> None:
        self.runs, self.root, self.t = runs, root, t

    @classmethod
    def start(cls, runs: list[dict], name: str, t: datetime, inputs: dict, meta: dict, key: str) -> Trace:
        rid = uid(key, "root")
        root = {
            "id": rid,
            "name": name,
            "run_type": "chain",
            "start_time": iso(t),
            "end_time": None,
            "extra": {
                "metadata": {**meta, "ls_run_depth": 0},
                "runtime": {"sdk": "langsmith-py", "sdk_version": "0.4.31"},
            },
            "error": None,
            "inputs": inputs,
            "outputs": None,
            "tags": [],
            "status": "success",
            "trace_id": rid,
            "dotted_order": dotted(t, rid),
            "parent_run_id": None,
            "session_id": "5b4f2d2e-6a43-4c1d-9d7e-3f0c2f1a9b11",  # the tracing project, not a thread
        }
        runs.append(root)
        return cls(runs, root, t)

    def child(self, parent: dict, name: str, run_type: str, inputs: dict, outputs: dict, key: str) -> dict:
        self.t += timedelta(milliseconds=137)
        rid = uid(key, name, self.t.isoformat())
        run = {
            "id": rid,
            "name": name,
            "run_type": run_type,
            "start_time": iso(self.t),
            "end_time": iso(self.t + timedelta(milliseconds=90)),
            "extra": {"metadata": {"ls_run_depth": parent["dotted_order"].count(".") + 1}},
            "error": None,
            "inputs": inputs,
            "outputs": outputs,
            "tags": [],
            "status": "success",
            "trace_id": self.root["trace_id"],
            "dotted_order": parent["dotted_order"] + "." + dotted(self.t, rid),
            "parent_run_id": parent["id"],
        }
        self.runs.append(run)
        return run

    def end(self, outputs: dict) -> None:
        self.t += timedelta(milliseconds=40)
        self.root["outputs"], self.root["end_time"] = outputs, iso(self.t)


def generation(m: dict) -> dict:
    return {
        "generations": [
            [
                {
                    "text": m["content"] or "",
                    "generation_info": {"finish_reason": "tool_calls" if m.get("tool_calls") else "stop"},
                    "type": "ChatGeneration",
                    "message": serialized(m),
                }
            ]
        ],
        "llm_output": {"model_name": "gpt-4.1-mini-2025-04-14"},
    }


def tool_run(trace: Trace, parent: dict, call: dict, result: dict, key: str, as_lc: bool) -> None:
    output = serialized(result) if as_lc else as_dict(result)
    trace.child(
        parent, call["name"], "tool", {"input": json.dumps(call["arguments"])}, {"output": output}, key
    )


def chain_thread(runs: list[dict], msgs: list[dict], key: str, t: datetime) -> None:
    """A chain app: messages only in its llm runs (serialized prompts, generations) and tool runs."""
    prompt = [{"role": "system", "content": BANK_PROMPT, "id": uid(key, "system")}]
    for k, (user, rest) in enumerate(turns(msgs)):
        trace = Trace.start(
            runs,
            "bank_support",
            t + timedelta(minutes=k),
            {"input": user["content"]},
            {"session_id": key},
            f"{key}-{k}",
        )
        prompt.append(user)
        for m in rest:
            if m["role"] == "assistant":
                llm_in = {
                    "messages": [[serialized(x, ids=x["role"] not in ("user", "system")) for x in prompt]]
                }
                trace.child(trace.root, "ChatOpenAI", "llm", llm_in, generation(m), key)
            else:
                call = next(
                    c for x in prompt for c in x.get("tool_calls") or [] if c["id"] == m["tool_call_id"]
                )
                tool_run(trace, trace.root, call, m, key, as_lc=True)
            prompt.append(m)
        trace.end({"output": rest[-1]["content"]})


def langgraph_thread(runs: list[dict], msgs: list[dict], key: str, t: datetime) -> None:
    """A LangGraph agent traced per turn: the root's outputs are the thread's whole state."""
    state: list[dict] = []
    for k, (user, rest) in enumerate(turns(msgs)):
        trace = Trace.start(
            runs,
            "LangGraph",
            t + timedelta(minutes=k),
            {"messages": [{"role": "user", "content": user["content"]}]},
            {"thread_id": key, "langgraph_version": "0.6.7", "assistant_id": "bank_agent"},
            f"{key}-{k}",
        )
        state.append(user)
        node = None
        for m in rest:
            if m["role"] == "assistant":
                node = trace.child(
                    trace.root,
                    "agent",
                    "chain",
                    {"messages": [as_dict(x) for x in state]},
                    {"messages": [as_dict(m)]},
                    key,
                )
                trace.child(
                    node, "ChatOpenAI", "llm", {"messages": [[as_dict(x) for x in state]]}, generation(m), key
                )
            else:
                if node is None or node["name"] != "tools":
                    node = trace.child(
                        trace.root,
                        "tools",
                        "chain",
                        {"messages": [as_dict(x) for x in state]},
                        {"messages": []},
                        key,
                    )
                call = next(
                    c for x in state for c in x.get("tool_calls") or [] if c["id"] == m["tool_call_id"]
                )
                tool_run(trace, node, call, m, key, as_lc=False)
                node["outputs"]["messages"].append(as_dict(m))
            state.append(m)
        trace.end({"messages": [as_dict(x) for x in state]})


def single_trace(runs: list[dict], msgs: list[dict], key: str, t: datetime) -> None:
    """One trace for the last turn: the history in the inputs (role dicts), the reply in the
    outputs; the last turn's tool results only as tool runs."""
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")

    def role(m: dict) -> dict:
        d = {"role": m["role"], "content": m["content"] or None}
        if m.get("tool_calls"):
            d["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in m["tool_calls"]
            ]
        if m["role"] == "tool":
            d["tool_call_id"] = m["tool_call_id"]
        return d

    history = [{"role": "system", "content": BANK_PROMPT}, *map(role, msgs[: last_user + 1])]
    trace = Trace.start(
        runs, "support_bot", t, {"messages": history}, {"conversation_id": key, "channel": "web"}, key
    )
    for m in msgs[last_user + 1 :]:
        if m["role"] == "tool":
            call = next(c for x in msgs for c in x.get("tool_calls") or [] if c["id"] == m["tool_call_id"])
            tool_run(trace, trace.root, call, m, key, as_lc=True)
    trace.end({"messages": [role(m) for m in msgs[last_user + 1 :] if m["role"] == "assistant"]})


def checkpoints(msgs: list[dict], thread: str, t: datetime) -> list[dict]:
    """The thread's checkpoints, oldest first, as (values, next, metadata, created_at, id, parent)."""
    out: list[dict] = []
    state: list[dict] = []
    step = -1

    def save(source: str, nxt: list[str]) -> None:
        nonlocal step
        cid = f"1f0{len(out):05x}-{uid(thread, 'cp', len(out))[9:]}"
        out.append(
            {
                "values": list(state),
                "next": nxt,
                "step": step,
                "source": source,
                "id": cid,
                "t": t + timedelta(seconds=2 * len(out)),
            }
        )
        step += 1

    for user, rest in turns(msgs):
        save("input", ["__start__"])
        state.append(user)
        save("loop", ["agent"])
        for i, m in enumerate(rest):
            state.append(m)
            if m["role"] == "tool" and i + 1 < len(rest) and rest[i + 1]["role"] == "tool":
                continue  # the tools node writes all of a step's results at once
            save("loop", ["tools"] if m.get("tool_calls") else ["agent"] if m["role"] == "tool" else [])
    return out


def server_history(msgs: list[dict], thread: str, t: datetime) -> list[dict]:
    cps = checkpoints(msgs, thread, t)
    items = []
    for n, cp in enumerate(cps):
        ref = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cp["id"], "checkpoint_map": {}}
        parent = {**ref, "checkpoint_id": cps[n - 1]["id"]} if n else None
        items.append(
            {
                "values": {"messages": [as_dict(m, 40 * n) for m in cp["values"]]},
                "next": cp["next"],
                "tasks": [
                    {
                        "id": uid(thread, "task", n, x),
                        "name": x,
                        "path": ["__pregel_pull", x],
                        "error": None,
                        "interrupts": [],
                        "checkpoint": None,
                        "state": None,
                        "result": None,
                    }
                    for x in cp["next"]
                ],
                "metadata": {
                    "source": cp["source"],
                    "step": cp["step"],
                    "parents": {},
                    "graph_id": "bank_agent",
                    "assistant_id": uid("assistant"),
                    "thread_id": thread,
                    "run_id": uid(thread, "run", cp["step"] // 6),
                    "user_id": "",
                },
                "created_at": cp["t"].isoformat(),
                "checkpoint": ref,
                "parent_checkpoint": parent,
                "interrupts": [],
                "checkpoint_id": cp["id"],
                "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
            }
        )
    return items[::-1]  # newest first, as the server answers


def tuples(msgs: list[dict], thread: str, t: datetime) -> list[dict]:
    cps = checkpoints(msgs, thread, t)
    items = []
    for n, cp in enumerate(cps):
        conf = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cp["id"]}}
        parent = {"configurable": {**conf["configurable"], "checkpoint_id": cps[n - 1]["id"]}} if n else None
        values: dict[str, Any] = {"messages": [serialized(m) for m in cp["values"]]} if cp["values"] else {}
        if cp["next"] == ["__start__"]:
            values["__start__"] = {
                "messages": [
                    {
                        "role": "user",
                        "content": turns(msgs)[sum(1 for x in cps[:n] if x["source"] == "input")][0][
                            "content"
                        ],
                    }
                ]
            }
        items.append(
            {
                "config": conf,
                "checkpoint": {
                    "v": 4,
                    "ts": cp["t"].isoformat(),
                    "id": cp["id"],
                    "channel_values": values,
                    "channel_versions": {"__start__": f"{n + 1:032}.0.{n}", "messages": f"{n:032}.0.{n}"},
                    "versions_seen": {"__input__": {}, "__start__": {"__start__": f"{n:032}.0.{n}"}},
                },
                "metadata": {"source": cp["source"], "step": cp["step"], "parents": {}, "thread_id": thread},
                "parent_config": parent,
                "pending_writes": [],
            }
        )
    return items[::-1]


def main(bank_run: Path) -> None:
    bank = {k: with_ids(v, k) for k, v in transcripts(bank_run).items()}
    runs: list[dict] = []
    chain_thread(runs, bank["BANK-06"], "sess-7c1e-dispute", T0 + timedelta(hours=5))
    langgraph_thread(runs, bank["BANK-03"], "thr-2b9d-replacement", T0 + timedelta(hours=1))
    single_trace(runs, bank["BANK-08"], "conv-5e02-old-charge", T0 + timedelta(hours=3))
    runs.sort(key=lambda r: r["start_time"], reverse=True)  # list_runs: newest first
    (HERE / "langsmith_runs.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in runs)
    )
    history = server_history(bank["BANK-03"], "5f1c9e0a-07aa-4d3e-b1de-1a2b3c4d5e03", T0 + timedelta(hours=2))
    (HERE / "langgraph_history.json").write_text(json.dumps(history, ensure_ascii=False, indent=1))
    dump = [
        *tuples(bank["BANK-08"], "thread-bank-08-old-charge", T0 + timedelta(hours=4)),
        *tuples(bank["BANK-04"], "thread-bank-04-transfer", T0 + timedelta(hours=6)),
        *tuples(bank["BANK-06"], "thread-bank-06-dispute", T0 + timedelta(hours=7)),
    ]
    (HERE / "langgraph_checkpoints.json").write_text(json.dumps(dump, ensure_ascii=False))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
