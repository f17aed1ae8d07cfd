"""Re-make the import fixtures from real runs (kept so the fixtures can be regenerated; the tests
read the committed files, never this script).

    usersim run examples/bank/cases --agent python:examples.bank.agent:correct --out /tmp/bankrun
    usersim run usersim/cases/b1 --agent reference --out /tmp/refrun
    python tests/data/import/make_fixtures.py /tmp/bankrun /tmp/refrun

Each conversation is written the way the source tool exports it: OpenAI chat-format JSONL
(`openai_chats.jsonl`), a LangSmith export (`langsmith_export.json`: a LangGraph root run with
serialized LangChain messages and llm/tool child runs, and a two-run thread whose tool results
exist only as tool runs), and OTLP JSON (`otel_traces.json`: chat spans with gen_ai.input/output
messages and execute_tool spans; a trace in the older per-message event form).
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).parent
BANK_PROMPT = "You are Acme Bank's support assistant. Today is 2026-04-07. Verify identity before any change."
TRAVEL_PROMPT = "你是一名旅行助手。今天是 2026-04-07。"


def transcripts(run: Path) -> dict[str, list[dict]]:
    out = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["status"] == "passed" and r["variant"].get("group") in (None, "A"):
            out[r["case_id"]] = [
                {
                    k: v
                    for k, v in m.items()
                    if k in ("role", "content", "tool_calls", "tool_call_id", "is_error")
                }
                for m in r["transcript"]
            ]
    return out


def openai(msgs: list[dict], cid: str) -> list[dict]:
    out = []
    for i, m in enumerate(msgs):
        o = {"role": m["role"], "content": m["content"] or None}
        if m.get("tool_calls"):
            o["tool_calls"] = [
                {
                    "id": f"call_{cid[:6]}{i}{j}",
                    "type": "function",
                    "function": {"name": t["name"], "arguments": json.dumps(t["arguments"])},
                }
                for j, t in enumerate(m["tool_calls"])
            ]
        if m["role"] == "tool":
            prev = next(x for x in reversed(out) if x.get("tool_calls"))
            answered = {x.get("tool_call_id") for x in out}
            o["tool_call_id"] = next(t["id"] for t in prev["tool_calls"] if t["id"] not in answered)
        out.append(o)
    return out


def lc(m: dict) -> dict:
    kind = {
        "user": "HumanMessage",
        "assistant": "AIMessage",
        "tool": "ToolMessage",
        "system": "SystemMessage",
    }
    kw = {"content": m["content"] or "", "type": kind[m["role"]][:-7].lower().replace("human", "human")}
    if m.get("tool_calls"):
        kw["tool_calls"] = [
            {
                "name": t["function"]["name"],
                "args": json.loads(t["function"]["arguments"]),
                "id": t["id"],
                "type": "tool_call",
            }
            for t in m["tool_calls"]
        ]
    if m["role"] == "tool":
        kw["tool_call_id"] = m["tool_call_id"]
        kw["status"] = "success"
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", kind[m["role"]]],
        "kwargs": kw,
    }


def parts(m: dict) -> dict:
    if m["role"] == "tool":
        return {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": m["tool_call_id"], "response": m["content"]}],
        }
    p = [{"type": "text", "content": m["content"]}] if m["content"] else []
    p += [
        {
            "type": "tool_call",
            "id": t["id"],
            "name": t["function"]["name"],
            "arguments": json.loads(t["function"]["arguments"]),
        }
        for t in m.get("tool_calls") or []
    ]
    return {"role": m["role"], "parts": p}


def attr(key: str, value) -> dict:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {
        "key": key,
        "value": {"stringValue": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)},
    }


def main(bank_run: Path, ref_run: Path) -> None:
    bank, ref = transcripts(bank_run), transcripts(ref_run)
    chats = [
        (
            "conv_7d1e2a-transfer",
            BANK_PROMPT,
            bank["BANK-04"],
            {"channel": "web", "created_at": "2026-04-07T09:12:03Z"},
        ),
        (
            "conv_51bb08-hotel-zh",
            TRAVEL_PROMPT,
            ref["B1-IF-01"],
            {"channel": "app", "created_at": "2026-04-07T11:40:55+08:00"},
        ),
        (
            "conv_a90c33-dispute",
            BANK_PROMPT,
            bank["BANK-06"],
            {"channel": "web", "created_at": "2026-04-07T14:02:47Z"},
        ),
        (
            "conv_c02f9e-forgot-id",
            BANK_PROMPT,
            bank["BANK-10"],
            {"channel": "phone", "created_at": "2026-04-07T16:30:10Z"},
        ),
    ]
    with (HERE / "openai_chats.jsonl").open("w") as f:
        for cid, prompt, msgs, meta in chats:
            row = {
                "id": cid,
                "metadata": meta,
                "messages": [{"role": "system", "content": prompt}, *openai(msgs, cid)],
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    # LangSmith: a LangGraph agent run (full state in outputs.messages) + a two-turn thread
    runs = []
    msgs = [{"role": "system", "content": BANK_PROMPT}, *openai(bank["BANK-03"], "ls3")]
    root = str(uuid.uuid5(uuid.NAMESPACE_URL, "bank-03"))
    last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    runs.append(
        {
            "id": root,
            "trace_id": root,
            "name": "LangGraph",
            "run_type": "chain",
            "start_time": "2026-04-07T09:12:03.114000",
            "end_time": "2026-04-07T09:12:05.871000",
            "extra": {"metadata": {"langgraph_version": "0.6.4", "ls_run_depth": 0}},
            "inputs": {"messages": [lc(m) for m in msgs[: last_user + 1]]},
            "outputs": {"messages": [lc(m) for m in msgs]},
            "child_runs": [
                {
                    "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"bank-03-tool-{i}")),
                    "trace_id": root,
                    "parent_run_id": root,
                    "name": t["function"]["name"],
                    "run_type": "tool",
                    "start_time": f"2026-04-07T09:12:04.{100 + i:06d}",
                    "inputs": {"input": t["function"]["arguments"]},
                    "outputs": {
                        "output": next(x["content"] for x in msgs if x.get("tool_call_id") == t["id"])
                    },
                }
                for i, m in enumerate(msgs)
                for t in m.get("tool_calls") or []
            ],
        }
    )
    zh = openai(ref["B1-MR-02"], "lsz")
    users = [i for i, m in enumerate(zh) if m["role"] == "user"]
    for k, start in enumerate(users):
        end = users[k + 1] if k + 1 < len(users) else len(zh)
        rid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"zh-thread-{k}"))
        turn = [m for m in zh[start + 1 : end]]
        runs.append(
            {
                "id": rid,
                "trace_id": rid,
                "name": "travel_agent",
                "run_type": "chain",
                "start_time": f"2026-04-07T10:0{k}:00.000000",
                "extra": {"metadata": {"thread_id": "thread-3f9a-zh-hotel"}},
                "inputs": {"messages": [{"type": "human", "content": zh[start]["content"]}]},
                "outputs": {
                    "messages": [
                        {
                            "type": "ai",
                            "content": m["content"] or "",
                            "tool_calls": [
                                {
                                    "name": t["function"]["name"],
                                    "args": json.loads(t["function"]["arguments"]),
                                    "id": t["id"],
                                }
                                for t in m.get("tool_calls") or []
                            ],
                        }
                        for m in turn
                        if m["role"] == "assistant"
                    ]
                },
                "child_runs": [
                    {
                        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"zh-tool-{k}-{t['id']}")),
                        "parent_run_id": rid,
                        "name": t["function"]["name"],
                        "run_type": "tool",
                        "inputs": {"input": t["function"]["arguments"]},
                        "outputs": {
                            "output": next(x["content"] for x in zh if x.get("tool_call_id") == t["id"])
                        },
                    }
                    for m in turn
                    for t in m.get("tool_calls") or []
                ],
            }
        )
    (HERE / "langsmith_export.json").write_text(json.dumps(runs, ensure_ascii=False, indent=1))

    # OTLP: chat spans + execute_tool spans (BANK-01); the older event form (B1-MI-01)
    spans = []
    t0 = 1775552400000000000
    msgs = [{"role": "system", "content": BANK_PROMPT}, *openai(bank["BANK-01"], "ot1")]
    trace = uuid.uuid5(uuid.NAMESPACE_URL, "otel-bank-01").hex
    agent_span = trace[:16]
    spans.append(
        {
            "traceId": trace,
            "spanId": agent_span,
            "name": "invoke_agent acme-support",
            "kind": 1,
            "startTimeUnixNano": str(t0),
            "endTimeUnixNano": str(t0 + 9_000_000_000),
            "attributes": [
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", "acme-support"),
                attr("gen_ai.conversation.id", "sess-bank-0142"),
            ],
        }
    )
    n = 0
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        n += 1
        sid = uuid.uuid5(uuid.NAMESPACE_URL, f"otel-chat-{i}").hex[:16]
        spans.append(
            {
                "traceId": trace,
                "spanId": sid,
                "parentSpanId": agent_span,
                "name": "chat gpt-4.1-mini",
                "kind": 3,
                "startTimeUnixNano": str(t0 + n * 100_000_000),
                "endTimeUnixNano": str(t0 + n * 100_000_000 + 50_000_000),
                "attributes": [
                    attr("gen_ai.operation.name", "chat"),
                    attr("gen_ai.request.model", "gpt-4.1-mini"),
                    attr("gen_ai.usage.input_tokens", 812 + 40 * n),
                    attr("gen_ai.usage.output_tokens", 31),
                    attr("gen_ai.system_instructions", [{"type": "text", "content": BANK_PROMPT}]),
                    attr("gen_ai.input.messages", [parts(x) for x in msgs[1:i]]),
                    attr(
                        "gen_ai.output.messages",
                        [{**parts(m), "finish_reason": "tool_call" if m.get("tool_calls") else "stop"}],
                    ),
                ],
            }
        )
        for t in m.get("tool_calls") or []:
            result = next(x["content"] for x in msgs if x.get("tool_call_id") == t["id"])
            spans.append(
                {
                    "traceId": trace,
                    "spanId": uuid.uuid5(uuid.NAMESPACE_URL, t["id"]).hex[:16],
                    "parentSpanId": agent_span,
                    "name": f"execute_tool {t['function']['name']}",
                    "kind": 1,
                    "startTimeUnixNano": str(t0 + n * 100_000_000 + 60_000_000),
                    "endTimeUnixNano": str(t0 + n * 100_000_000 + 70_000_000),
                    "attributes": [
                        attr("gen_ai.operation.name", "execute_tool"),
                        attr("gen_ai.tool.name", t["function"]["name"]),
                        attr("gen_ai.tool.call.id", t["id"]),
                        attr("gen_ai.tool.call.arguments", t["function"]["arguments"]),
                        attr("gen_ai.tool.call.result", result),
                    ],
                }
            )
    zh = [{"role": "system", "content": TRAVEL_PROMPT}, *openai(ref["B1-MI-01"], "otz")]
    trace2 = uuid.uuid5(uuid.NAMESPACE_URL, "otel-zh").hex
    events = []
    names = {"system": "gen_ai.system.message", "user": "gen_ai.user.message", "tool": "gen_ai.tool.message"}
    last = max(i for i, m in enumerate(zh) if m["role"] == "assistant")
    for i, m in enumerate(zh[:last]):
        a = [attr("content", m["content"] or "")]
        if m.get("tool_calls"):
            a.append(attr("tool_calls", m["tool_calls"]))
        if m["role"] == "tool":
            a.append(attr("id", m["tool_call_id"]))
        events.append(
            {
                "timeUnixNano": str(t0 + i),
                "name": names.get(m["role"], "gen_ai.assistant.message"),
                "attributes": a,
            }
        )
    events.append(
        {
            "timeUnixNano": str(t0 + last),
            "name": "gen_ai.choice",
            "attributes": [
                attr(
                    "gen_ai.event.content",
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": zh[last]["content"]},
                    },
                )
            ],
        }
    )
    spans.append(
        {
            "traceId": trace2,
            "spanId": trace2[:16],
            "name": "chat qwen-plus",
            "kind": 3,
            "startTimeUnixNano": str(t0),
            "endTimeUnixNano": str(t0 + 2_000_000_000),
            "attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "qwen-plus")],
            "events": events,
        }
    )
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "support-agents")]},
                "scopeSpans": [
                    {
                        "scope": {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.1b0"},
                        "spans": spans,
                    }
                ],
            }
        ]
    }
    (HERE / "otel_traces.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
