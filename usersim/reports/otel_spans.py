"""A run record as OpenTelemetry spans, following the GenAI semantic conventions.

One trace per conversation:

    invoke_agent {agent}                      the conversation (gen_ai.operation.name = invoke_agent)
      ├─ usersim.simulator turn N             the simulated user's move
      │    └─ chat {model}                    its model calls (gen_ai.operation.name = chat)
      ├─ usersim.agent turn N                 one call of the agent under test
      │    ├─ chat {model}                    the agent's model calls (tokens, latency, role)
      │    └─ execute_tool {tool}             sandbox calls (intercepts marked)
      └─ usersim.judges                       the judge step
           └─ chat {model}                    judge model calls
    + one `gen_ai.evaluation.result` event per verdict on the conversation span.

Spans are built from the record alone (its `timeline`, `tool_trace`, `transcript`, verdicts), so a
run exports while it runs (`--otel`) or afterwards (`usersim otel export`). Records written before
the timeline existed get the conversation span with its tool calls at its start.

Attributes follow the conventions' requirement levels: every `chat` span names its provider
(`gen_ai.provider.name`, by endpoint host; `openai` for records written before it was kept),
request and response model, response id and server address/port where the call had them;
`invoke_agent` names the agent's provider (that of its own model calls, else its transport);
`error.type` is an exception class or a short code, never a message.

Message content (gen_ai.input.messages / gen_ai.output.messages on the conversation span, tool
arguments and results) is exported unless `content=False`; then verdict explanations and error
descriptions are left out too, and a criterion keeps its words with the conversation's values
replaced (otel_content.ContentScrub). The record's text is redacted already and every string
attribute is redacted again here.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from usersim.core.record import RunRecord, TranscriptMessage
from usersim.core.secrets import redact
from usersim.core.timeline import TimelineSpan
from usersim.llm.providers import DEFAULT_PROVIDER
from usersim.reports.otel_content import ContentScrub

SCOPE = "usersim"


class PlannedIds(IdGenerator):
    """Trace ids derived from the run and conversation (exporting a run again gives the same trace
    ids); span ids random."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()
        self.next_trace_id = 0

    def generate_span_id(self) -> int:
        return self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        return self.next_trace_id or self._random.generate_trace_id()


def trace_id_of(record: RunRecord) -> int:
    """The conversation's trace id: sha256 of run id and record id (128 bits, never zero)."""
    digest = hashlib.sha256(f"{record.run_id}|{record.id}".encode()).hexdigest()[:32]
    return int(digest, 16) or 1


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def _end(span: TimelineSpan) -> int:
    return _ns(span.start_s) + _ns(span.duration_s)


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    """OTel attribute values: no None, strings redacted, lists of one primitive type."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, str):
            out[key] = redact(value)
        elif isinstance(value, (bool, int, float)):
            out[key] = value
        else:
            out[key] = redact(json.dumps(value, ensure_ascii=False, default=str))
    return out


def genai_messages(messages: list[TranscriptMessage]) -> list[dict[str, Any]]:
    """Transcript messages in the GenAI conventions' message shape: {role, parts: [...]}, tool calls
    as `tool_call` parts, tool results as `tool_call_response` parts."""
    out: list[dict[str, Any]] = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        if m.role == "tool":
            parts.append({"type": "tool_call_response", "id": m.tool_call_id, "response": m.content})
        elif m.content:
            parts.append({"type": "text", "content": m.content})
        for call in m.tool_calls or []:
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "arguments": call.get("arguments"),
                }
            )
        entry: dict[str, Any] = {"role": m.role, "parts": parts}
        if m.role == "tool" and m.name:
            entry["name"] = m.name
        out.append(entry)
    return out


def conversation_id(record: RunRecord) -> str:
    return f"{record.run_id}/{record.id}"


def agent_provider(record: RunRecord, spans: list[TimelineSpan]) -> str:
    """The agent's `gen_ai.provider.name`: the provider of its own model calls through usersim's
    client; else what the spec says it speaks (`openai:MODEL` -> openai, `a2a:URL` -> a2a,
    `python:mod:fn` -> python: a custom value, as the conventions allow)."""
    for s in spans:
        if s.kind == "chat" and s.attrs.get("role") == "agent":
            return str(s.attrs.get("provider") or DEFAULT_PROVIDER)
    scheme, sep, _ = record.agent.partition(":")
    return scheme.lower() if sep and scheme else "usersim"


_EXCEPTION = re.compile(r"\b([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit|Interrupt))\b")


def _error_type(record: RunRecord) -> str:
    """What a conversation ended in error with, low-cardinality as the conventions ask: the
    exception class its detail names (`... raised RuntimeError: ...` -> RuntimeError), else its
    stop reason (`agent_error`), else `_OTHER`."""
    found = _EXCEPTION.search(record.error or record.stop_detail or "")
    return found.group(1) if found else (record.stop_reason or "_OTHER")


def _conversation_attrs(record: RunRecord, spans: list[TimelineSpan], content: bool) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": agent_provider(record, spans),
        "gen_ai.agent.name": record.agent,
        "gen_ai.conversation.id": conversation_id(record),
        "error.type": _error_type(record) if record.status == "error" else None,
        "usersim.run_id": record.run_id,
        "usersim.record_id": record.id,
        "usersim.case_id": record.case_id,
        "usersim.dimension": record.dimension,
        "usersim.mode": record.mode,
        "usersim.variant": record.variant.key(),
        "usersim.seed": record.seed,
        "usersim.status": record.status,
        "usersim.blame": record.blame,
        "usersim.score": record.score,
        "usersim.turns": record.turns,
        "usersim.stop_reason": record.stop_reason,
        "usersim.persona": record.persona,
        "usersim.simulator": record.simulator,
        "usersim.judge_model": record.judge_model,
        "usersim.history_len": record.history_len,
    }
    for name, value in record.variant.model_dump().items():
        attrs[f"usersim.variant.{name}"] = value
    for role, usage in record.usage.items():
        attrs[f"usersim.usage.{role}.input_tokens"] = usage.prompt_tokens
        attrs[f"usersim.usage.{role}.output_tokens"] = usage.completion_tokens
    if content and record.transcript:
        last_user = max((i for i, m in enumerate(record.transcript) if m.role == "user"), default=-1)
        attrs["gen_ai.input.messages"] = genai_messages(record.transcript[: last_user + 1])
        attrs["gen_ai.output.messages"] = genai_messages(record.transcript[last_user + 1 :])
    return attrs


def _step_name(span: TimelineSpan) -> str:
    if span.kind == "judge":
        return "usersim.judges"
    return f"usersim.{span.kind} turn {span.turn}"


def _tool_details(record: RunRecord) -> dict[tuple[int, str, int], dict[str, Any]]:
    """Tool trace entries by (turn, name, call number), with the call id the transcript gives them."""
    ids: dict[int, str] = {}
    for i, m in enumerate(record.transcript):
        if m.role == "tool" and m.tool_call_id:
            ids[i] = m.tool_call_id
    return {
        (e.turn, e.name, e.call_number): {
            "arguments": e.arguments,
            "result": e.result,
            "call_id": ids.get(e.message_index),
        }
        for e in record.tool_trace
    }


def _timeline(record: RunRecord) -> list[TimelineSpan]:
    """The record's timeline, or, for a record without one, its tool calls at the start."""
    if record.timeline:
        return [s for s in record.timeline if s.attempt == max(t.attempt for t in record.timeline)]
    return [
        TimelineSpan(
            kind="tool",
            name=e.name,
            start_s=0.0,
            duration_s=0.0,
            turn=e.turn,
            attrs={"call_number": e.call_number, "intercepted": e.intercepted, "is_error": e.is_error},
        )
        for e in record.tool_trace
    ]


def _leaf_attrs(span: TimelineSpan, record: RunRecord, tools: dict, content: bool) -> dict[str, Any]:
    a = span.attrs
    if span.kind == "chat":
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": a.get("provider") or DEFAULT_PROVIDER,
            "gen_ai.request.model": span.name,
            "gen_ai.response.model": a.get("response_model"),
            "gen_ai.response.id": a.get("response_id"),
            "gen_ai.conversation.id": conversation_id(record),
            "server.address": a.get("server_address"),
            "server.port": a.get("server_port") if a.get("server_address") else None,
            "gen_ai.usage.input_tokens": a.get("input_tokens"),
            "gen_ai.usage.output_tokens": a.get("output_tokens"),
            "usersim.role": a.get("role"),
            "usersim.cached": a.get("cached"),
            "usersim.turn": span.turn,
            "error.type": a.get("error"),
        }
    if span.kind == "tool":
        detail = tools.get((span.turn, span.name, a.get("call_number", 0)), {})
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": span.name,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": detail.get("call_id"),
            "usersim.tool.call_number": a.get("call_number"),
            "usersim.tool.intercepted": bool(a.get("intercepted", False)),
            "usersim.turn": span.turn,
            "error.type": "tool_error" if a.get("is_error") else a.get("error"),
        }
        if content and detail:
            attrs["gen_ai.tool.call.arguments"] = detail["arguments"]
            attrs["gen_ai.tool.call.result"] = detail["result"]
        return attrs
    return {"usersim.turn": span.turn, "usersim.step": a.get("step"), "error.type": a.get("error")}


def emit_record(
    provider: TracerProvider, ids: PlannedIds, record: RunRecord, *, content: bool = True
) -> None:
    """Build the record's trace with the provider's tracer (its processors export the spans)."""
    tracer = provider.get_tracer(SCOPE)
    # integer nanoseconds from the start (started_at has milliseconds): float sums would round
    t0 = round(datetime.fromisoformat(record.started_at).timestamp() * 1e6) * 1000
    spans = _timeline(record)
    end = max([_ns(record.duration_s)] + [_end(s) for s in spans])
    ids.next_trace_id = trace_id_of(record)
    root = tracer.start_span(
        f"invoke_agent {redact(record.agent)}",
        kind=SpanKind.INTERNAL,
        start_time=t0,
        attributes=_clean(_conversation_attrs(record, spans, content)),
    )
    ids.next_trace_id = 0
    tools = _tool_details(record)
    played = {m.turn: m.by for m in record.transcript if m.role == "user" and m.turn and m.by}
    for turn, members in _by_turn(spans):
        parent = root
        if turn:  # one span per user turn: the user's move, the agent's steps and their tool calls
            first = min(_ns(s.start_s) for s in members)
            last = max(_end(s) for s in members)
            parent = tracer.start_span(
                f"usersim.turn {turn}",
                context=trace.set_span_in_context(root),
                start_time=t0 + first,
                # who played the turn: the simulator, or a person in the seat (`usersim play`)
                attributes=_clean({"usersim.turn": turn, "usersim.played_by": played.get(turn)}),
            )
        _emit_turn(tracer, parent, members, t0, record, tools, content)
        if parent is not root:
            parent.end(end_time=t0 + last)
    verdict_time = t0 + end
    scrub = None if content else ContentScrub(record)
    for v in record.verdicts:
        root.add_event(
            "gen_ai.evaluation.result", attributes=_clean(_verdict_attrs(v, scrub)), timestamp=verdict_time
        )
    if record.status == "error":
        detail = record.error or record.stop_detail or "error"
        root.set_status(Status(StatusCode.ERROR, redact(detail) if content else _error_type(record)))
    root.end(end_time=verdict_time)


def _by_turn(spans: list[TimelineSpan]) -> list[tuple[int, list[TimelineSpan]]]:
    """Spans grouped by user turn in order; the judge step and what ran before the first turn: 0."""
    groups: dict[int, list[TimelineSpan]] = {}
    for s in spans:
        groups.setdefault(0 if s.kind == "judge" else s.turn, []).append(s)
    return sorted(groups.items())


def _emit_turn(
    tracer: trace.Tracer,
    parent: Any,
    members: list[TimelineSpan],
    t0: int,
    record: RunRecord,
    tools: dict[tuple[int, str, int], dict[str, Any]],
    content: bool,
) -> None:
    """A turn's steps (agent, simulator, judge) and its leaves (chat, tool) inside the step whose
    time window holds them, else directly in the turn."""
    ctx = trace.set_span_in_context(parent)
    opened = []
    for step in (s for s in members if s.kind in ("agent", "simulator", "judge")):
        otel = tracer.start_span(
            _step_name(step),
            context=ctx,
            start_time=t0 + _ns(step.start_s),
            attributes=_clean(_leaf_attrs(step, record, tools, content)),
        )
        opened.append((step, otel))
    for leaf in (s for s in members if s.kind in ("chat", "tool")):
        holder = _enclosing(leaf, opened)
        otel = tracer.start_span(
            f"{'chat' if leaf.kind == 'chat' else 'execute_tool'} {redact(leaf.name)}",
            context=trace.set_span_in_context(holder) if holder is not None else ctx,
            kind=SpanKind.CLIENT if leaf.kind == "chat" else SpanKind.INTERNAL,
            start_time=t0 + _ns(leaf.start_s),
            attributes=_clean(_leaf_attrs(leaf, record, tools, content)),
        )
        if leaf.attrs.get("error") or leaf.attrs.get("is_error"):
            otel.set_status(Status(StatusCode.ERROR))
        otel.end(end_time=t0 + _end(leaf))
    for step, otel in opened:
        if step.attrs.get("error"):
            otel.set_status(Status(StatusCode.ERROR, step.attrs["error"]))
        otel.end(end_time=t0 + _end(step))


def _verdict_attrs(v: Any, scrub: ContentScrub | None) -> dict[str, Any]:
    """A verdict as a gen_ai.evaluation.result event: name, label, score (partial credit, else 1/0
    for pass/fail), explanation; `error.type` when the judge itself failed. Without content
    (`scrub`): no explanation (it quotes the transcript and tool arguments), the criterion with the
    conversation's values replaced."""
    score = v.score if v.score is not None else {"pass": 1.0, "fail": 0.0}.get(v.verdict)
    return {
        "gen_ai.evaluation.name": v.judge,
        "gen_ai.evaluation.score.label": v.verdict,
        "gen_ai.evaluation.score.value": score,
        "gen_ai.evaluation.explanation": v.reason if scrub is None else None,
        "error.type": "judge_error" if v.verdict == "error" else None,
        "usersim.criterion": v.criterion if scrub is None else scrub(v.criterion),
        "usersim.counts_toward_status": v.counts_toward_status,
    }


def _enclosing(leaf: TimelineSpan, opened: list[tuple[TimelineSpan, Any]]) -> Any | None:
    """The step span whose time window holds the leaf (the innermost, i.e. latest starting)."""
    best = None
    for step, otel in opened:
        if (
            step.start_s <= leaf.start_s + 1e-9
            and leaf.start_s + leaf.duration_s <= step.start_s + step.duration_s + 1e-6
        ):
            if best is None or step.start_s >= best[0].start_s:
                best = (step, otel)
    return best[1] if best else None
