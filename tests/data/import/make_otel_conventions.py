"""Re-make the OpenLLMetry and OpenInference trace fixtures from a real bank run (kept so the
fixtures can be regenerated; the tests read the committed files, never this script).

    usersim run examples/bank/cases --agent python:examples.bank.agent:correct --out /tmp/bankrun
    python tests/data/import/make_otel_conventions.py /tmp/bankrun

An application instrumented the usual way: one trace per user turn, the turns of a conversation
tied by a session attribute, a root span for the agent, one LLM span per model call re-sending
the whole history (system prompt included), one span per tool run. OTLP/JSON as a collector writes
it (attributes as {key, value: {stringValue | intValue ...}}, ids as hex).

- `otel_openllmetry.json`: OpenLLMetry / traceloop-sdk with its OpenAI instrumentation: a
  `bank_agent.workflow` span (`traceloop.span.kind: workflow`), `openai.chat` spans
  (`llm.request.type: chat`, `gen_ai.system: openai`, `gen_ai.prompt.N.role|content|tool_call_id`,
  `gen_ai.prompt.N.tool_calls.M.id|name|arguments`, `gen_ai.completion.0.*`, `llm.usage.*`), tool
  spans `NAME.tool` (`traceloop.span.kind: tool`, `traceloop.entity.name|input|output`); the session
  in `traceloop.association.properties.session_id`. One document, BANK-02, BANK-06 and BANK-09.
- `otel_openinference.jsonl`: OpenInference (Arize Phoenix) with its OpenAI instrumentor: an
  `AGENT` span, `ChatCompletion` LLM spans (`llm.input_messages.N.message.role|content|tool_call_id`,
  `...message.tool_calls.M.tool_call.id|function.name|function.arguments`, `llm.output_messages`,
  `llm.model_name`, `llm.token_count.*`, `input.value` / `output.value`), `TOOL` spans (`tool.name`,
  `input.value`, `output.value`); the session in `session.id`. One document per trace, a line each
  (the collector's file exporter), the same three conversations.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from make_fixtures import BANK_PROMPT, transcripts

HERE = Path(__file__).parent
T0 = 1775552400 * 10**9  # 2026-04-07 09:00 UTC, in nanoseconds
CASES = ("BANK-02", "BANK-06", "BANK-09")


def hexid(n: int, *parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[: n * 2]


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def span(trace: str, name: str, attrs: dict[str, Any], start: int, parent: str | None, kind: int) -> dict:
    out = {
        "traceId": trace,
        "spanId": hexid(8, trace, name, start),
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 40_000_000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items() if v is not None],
        "status": {},
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def turns(messages: list[dict]) -> list[list[dict]]:
    """The conversation cut at each user message: [user, assistant/tool ...] per turn."""
    out: list[list[dict]] = []
    for m in messages:
        if m["role"] == "user" or not out:
            out.append([])
        out[-1].append(m)
    return out


def calls(m: dict) -> list[dict]:
    return [
        {"id": c["id"], "name": c["function"]["name"] if "function" in c else c["name"],
         "arguments": c["function"]["arguments"] if "function" in c else json.dumps(c["arguments"])}
        for c in m.get("tool_calls") or []
    ]  # fmt: skip


# where each convention puts a message's fields and a tool call's (id, name, arguments)
LAYOUT = {
    "openllmetry": ("{prefix}.{i}", "tool_calls.{j}", ("id", "name", "arguments")),
    "openinference": (
        "{prefix}.{i}.message",
        "tool_calls.{j}.tool_call",
        ("id", "function.name", "function.arguments"),
    ),
}


def flat_messages(convention: str, prefix: str, messages: list[dict]) -> dict[str, Any]:
    """Messages as one convention's indexed span attributes."""
    message_at, call_at, call_keys = LAYOUT[convention]
    attrs: dict[str, Any] = {}
    for i, m in enumerate(messages):
        at = message_at.format(prefix=prefix, i=i)
        attrs[f"{at}.role"] = m["role"]
        if m.get("content"):
            attrs[f"{at}.content"] = m["content"]
        if m.get("tool_call_id"):
            attrs[f"{at}.tool_call_id"] = m["tool_call_id"]
        for j, c in enumerate(calls(m)):
            tc = f"{at}.{call_at.format(j=j)}"
            attrs.update(
                {
                    f"{tc}.{k}": c[field]
                    for k, field in zip(call_keys, ("id", "name", "arguments"), strict=True)
                }
            )
    return attrs


def conversation_spans(case: str, messages: list[dict], convention: str) -> list[list[dict]]:
    """The spans of each user turn's trace."""
    session = f"sess-{case.lower()}"
    history = [{"role": "system", "content": BANK_PROMPT}]
    traces = []
    clock = T0 + CASES.index(case) * 3_600 * 10**9
    for n, turn in enumerate(turns(messages), 1):
        trace = hexid(16, convention, case, n)
        clock += 60 * 10**9
        if convention == "openllmetry":
            root_attrs = {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.name": "bank_agent",
                "traceloop.workflow.name": "bank_agent",
                "traceloop.association.properties.session_id": session,
            }
            root = span(trace, "bank_agent.workflow", root_attrs, clock, None, 1)
        else:
            root_attrs = {"openinference.span.kind": "AGENT", "session.id": session,
                          "input.value": turn[0]["content"], "input.mime_type": "text/plain"}  # fmt: skip
            root = span(trace, "bank_agent", root_attrs, clock, None, 1)
        spans = [root]
        history.append(turn[0])
        t = clock
        for m in turn[1:]:
            t += 100_000_000
            if m["role"] == "assistant":
                if convention == "openllmetry":
                    attrs = {
                        "llm.request.type": "chat", "gen_ai.system": "openai",
                        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                        "llm.usage.prompt_tokens": 40 + 12 * len(history), "llm.usage.completion_tokens": 18,
                        "traceloop.association.properties.session_id": session,
                        **flat_messages("openllmetry", "gen_ai.prompt", history),
                        **flat_messages("openllmetry", "gen_ai.completion", [m]),
                        "gen_ai.completion.0.finish_reason": "tool_calls" if m.get("tool_calls") else "stop",
                    }  # fmt: skip
                    spans.append(span(trace, "openai.chat", attrs, t, root["spanId"], 3))
                else:
                    request = {"model": "gpt-4o-mini", "messages": history}
                    attrs = {
                        "openinference.span.kind": "LLM", "llm.system": "openai", "llm.provider": "openai",
                        "llm.model_name": "gpt-4o-mini-2024-07-18", "session.id": session,
                        "input.value": json.dumps(request), "input.mime_type": "application/json",
                        "output.value": json.dumps({"choices": [{"message": m}]}), "output.mime_type": "application/json",
                        "llm.token_count.prompt": 40 + 12 * len(history), "llm.token_count.completion": 18,
                        **flat_messages("openinference", "llm.input_messages", history),
                        **flat_messages("openinference", "llm.output_messages", [m]),
                    }  # fmt: skip
                    spans.append(span(trace, "ChatCompletion", attrs, t, root["spanId"], 3))
            elif m["role"] == "tool":
                call = next(c for h in reversed(history) for c in calls(h) if c["id"] == m["tool_call_id"])
                if convention == "openllmetry":
                    attrs = {
                        "traceloop.span.kind": "tool", "traceloop.entity.name": call["name"],
                        "traceloop.entity.input": json.dumps({"args": [], "kwargs": json.loads(call["arguments"])}),
                        "traceloop.entity.output": m["content"],
                        "traceloop.association.properties.session_id": session,
                    }  # fmt: skip
                    spans.append(span(trace, f"{call['name']}.tool", attrs, t, root["spanId"], 1))
                else:
                    attrs = {
                        "openinference.span.kind": "TOOL", "tool.name": call["name"],
                        "tool.parameters": call["arguments"], "input.value": call["arguments"],
                        "output.value": m["content"], "session.id": session,
                    }  # fmt: skip
                    spans.append(span(trace, call["name"], attrs, t, root["spanId"], 1))
            history.append(m)
        traces.append(spans)
    return traces


def document(spans: list[dict], service: str, scope: str) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                "scopeSpans": [{"scope": {"name": scope}, "spans": spans}],
            }
        ]
    }


def main(run: Path) -> None:
    conv = transcripts(run)
    llm = [s for c in CASES for t in conversation_spans(c, conv[c], "openllmetry") for s in t]
    (HERE / "otel_openllmetry.json").write_text(
        json.dumps(document(llm, "acme-bank-assistant", "traceloop.tracer"), indent=1) + "\n",
        encoding="utf-8",
    )
    lines = [
        json.dumps(document(t, "acme-bank-assistant", "openinference.instrumentation.openai"))
        for c in CASES
        for t in conversation_spans(c, conv[c], "openinference")
    ]
    (HERE / "otel_openinference.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
