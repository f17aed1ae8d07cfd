"""A run's conversations as OpenTelemetry traces (GenAI semantic conventions), checked on the spans
the SDK hands its exporters (the SDK's in-memory exporter) and on the OTLP/JSON file export, all
from real CLI runs: one trace per conversation, its turns, the agent's and simulator's model calls
with tokens, sandbox tool calls with their arguments and intercepts, one evaluation event per
verdict, and no key anywhere."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.simulator.test_llm_acceptance import CASE, FLIGHTS_AND_HOTEL, PERSONA, route, sim
from tests.support.cli import usersim
from tests.support.openai_stub import openai_stub, text  # noqa: F401  (fixture)
from usersim.core.record import RunRecord
from usersim.reports.otel_spans import PlannedIds, emit_record, trace_id_of

BANK = "examples/bank/cases"


def stored(out: Path) -> list[RunRecord]:
    return [RunRecord.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]


def spans_of(record: RunRecord, content: bool = True):
    exporter = InMemorySpanExporter()
    ids = PlannedIds()
    provider = TracerProvider(id_generator=ids)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    emit_record(provider, ids, record, content=content)
    return exporter.get_finished_spans()


@pytest.fixture(scope="module")
def bank_runs(tmp_path_factory) -> dict[str, list[RunRecord]]:
    runs = {}
    for agent in ("correct", "flawed"):
        out = tmp_path_factory.mktemp(agent)
        usersim(
            "run", BANK, "--id", "BANK-02", "--id", "BANK-06", "--id", "BANK-10",
            "--agent", f"python:examples.bank.agent:{agent}", "--out", str(out), "--no-progress",
            check=False,
        )  # fmt: skip
        runs[agent] = stored(out)
    return runs


def test_one_trace_per_conversation_with_turns_tools_and_a_verdict_event_per_verdict(bank_runs):
    for record in bank_runs["correct"] + bank_runs["flawed"]:
        spans = spans_of(record)
        assert {s.context.trace_id for s in spans} == {trace_id_of(record)}
        (root,) = [s for s in spans if s.parent is None]
        assert root.name == f"invoke_agent {record.agent}"
        assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert root.attributes["usersim.case_id"] == record.case_id
        assert root.attributes["usersim.status"] == record.status
        assert root.attributes["gen_ai.conversation.id"] == f"{record.run_id}/{record.id}"
        turns = [s for s in spans if s.name.startswith("usersim.turn ")]
        assert len(turns) >= record.turns and all(t.parent.span_id == root.context.span_id for t in turns)
        users = {m.turn for m in record.transcript if m.role == "user" and m.turn}
        simulated = {t.attributes["usersim.turn"] for t in turns if t.attributes.get("usersim.played_by")}
        assert simulated == users and {t.attributes.get("usersim.played_by") for t in turns} <= {
            "simulator",
            None,
        }
        tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
        assert [(s.attributes["gen_ai.tool.name"], s.attributes["usersim.turn"]) for s in tools] == [
            (e.name, e.turn) for e in record.tool_trace
        ]
        for span, event in zip(tools, record.tool_trace, strict=True):
            assert json.loads(span.attributes["gen_ai.tool.call.arguments"]) == event.arguments
            assert span.attributes["gen_ai.tool.call.result"] == event.result
            turn_span = next(t for t in turns if t.attributes["usersim.turn"] == event.turn)
            assert span.parent.span_id == turn_span.context.span_id  # the harness ran it in that turn
        events = [e for e in root.events if e.name == "gen_ai.evaluation.result"]
        assert [
            (e.attributes["gen_ai.evaluation.name"], e.attributes["gen_ai.evaluation.score.label"])
            for e in events
        ] == [(v.judge, v.verdict) for v in record.verdicts]
        for s in spans:  # every child lies inside the conversation's time
            assert root.start_time <= s.start_time <= s.end_time <= root.end_time


def test_a_flawed_agents_failure_arrives_as_a_failing_evaluation_with_its_reason(bank_runs):
    record = next(r for r in bank_runs["flawed"] if r.case_id == "BANK-06")
    assert record.status == "failed"
    (root,) = [s for s in spans_of(record) if s.parent is None]
    failing = [e.attributes for e in root.events if e.attributes["gen_ai.evaluation.score.label"] == "fail"]
    assert any("T-4002" in a["gen_ai.evaluation.explanation"] for a in failing)
    assert all(a["gen_ai.evaluation.score.value"] == 0.0 for a in failing if "usersim.criterion" in a)


def test_exporting_again_gives_the_same_trace_ids_and_content_can_be_left_out(bank_runs):
    record = bank_runs["correct"][0]
    first, again = spans_of(record), spans_of(record, content=False)
    assert {s.context.trace_id for s in first} == {s.context.trace_id for s in again}
    assert any("gen_ai.input.messages" in s.attributes for s in first)
    for s in again:
        assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"} & set(
            s.attributes
        )


def test_model_calls_are_chat_spans_with_model_tokens_and_role_inside_their_step(openai_stub, tmp_path):  # noqa: F811
    route(
        openai_stub,
        **{
            "agent-model": [
                text("请问几号出发？", prompt_tokens=31, completion_tokens=7),
                text(FLIGHTS_AND_HOTEL),
            ],
            "sim-model": [sim("6 月 15 号"), sim("好的谢谢", "stop")],
        },
    )
    cases, personas = tmp_path / "cases", tmp_path / "personas"
    cases.mkdir()
    personas.mkdir()
    (personas / "acc-user.yaml").write_text(yaml.safe_dump(PERSONA, allow_unicode=True), encoding="utf-8")
    (cases / "ACC-1.yaml").write_text(yaml.safe_dump(CASE, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    usersim(
        "run", str(cases), "--agent", "openai:agent-model", "--simulator", "openai:sim-model",
        "--personas", str(personas), "--out", str(out), "--no-progress", check=False,
    )  # fmt: skip
    (record,) = stored(out)
    spans = spans_of(record)
    by_id = {s.context.span_id: s for s in spans}
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    roles = [(s.attributes["gen_ai.request.model"], s.attributes["usersim.role"]) for s in chats]
    assert ("agent-model", "agent") in roles and ("sim-model", "simulator") in roles
    first = next(s for s in chats if s.attributes["gen_ai.request.model"] == "agent-model")
    assert (
        first.attributes["gen_ai.usage.input_tokens"],
        first.attributes["gen_ai.usage.output_tokens"],
    ) == (31, 7)
    assert first.name == "chat agent-model"
    for chat in chats:  # inside the step that made the call
        step = by_id[chat.parent.span_id].name
        role = chat.attributes["usersim.role"]
        assert step.startswith(f"usersim.{role} turn "), (step, role)


def test_the_otlp_json_file_export_has_hex_ids_resource_and_no_key(tmp_path, monkeypatch):
    key = "sk-otel-secret-key-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    agents = tmp_path / "leaky_agent.py"
    agents.write_text(
        "import os\n"
        "def agent(messages, tools):\n"
        "    return {'role': 'assistant', 'content': 'my key is ' + os.environ['OPENAI_API_KEY']}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    usersim(
        "run", BANK, "--id", "BANK-10", "--agent", "python:leaky_agent:agent", "--out", str(out),
        "--no-progress", check=False,
    )  # fmt: skip
    target = tmp_path / "traces.jsonl"
    res = usersim("otel", "export", str(out), "--to", str(target))
    assert "1 trace(s)" in res.stdout
    (line,) = target.read_text(encoding="utf-8").splitlines()
    assert key not in line and "my key is" in line  # the message is there, the key is not
    request = json.loads(line)
    (resource,) = request["resourceSpans"]
    service = {a["key"]: a["value"] for a in resource["resource"]["attributes"]}
    assert service["service.name"] == {"stringValue": "usersim"}
    spans = resource["scopeSpans"][0]["spans"]
    assert all(len(s["traceId"]) == 32 and int(s["traceId"], 16) for s in spans)
    assert all(len(s["spanId"]) == 16 for s in spans)
    (root,) = [s for s in spans if not s.get("parentSpanId")]
    assert {e["name"] for e in root["events"]} == {"gen_ai.evaluation.result"}


def test_bad_otel_options_are_usage_errors_before_anything_runs(tmp_path):
    out = tmp_path / "run"
    bad = usersim(
        "run", BANK, "--id", "BANK-10", "--otel", "--otel-endpoint", "ftp://x", "--out", str(out), check=False
    )
    assert bad.returncode == 2 and "expected an http(s) URL" in bad.stderr
    alone = usersim("run", BANK, "--otel-endpoint", "http://127.0.0.1:9", "--out", str(out), check=False)
    assert alone.returncode == 2 and "--otel-endpoint needs --otel" in alone.stderr
    assert not (out / "results.jsonl").exists()


def test_a_receiver_that_is_down_loses_no_conversation_and_says_what_was_not_sent(tmp_path):
    out = tmp_path / "run"
    res = usersim(
        "run", BANK, "--id", "BANK-10", "--agent", "python:examples.bank.agent:correct", "--out", str(out),
        "--no-progress", "--otel", "--otel-endpoint", "http://127.0.0.1:9", check=False,
    )  # fmt: skip
    assert res.returncode == 0  # the conversation passed; its trace could not be sent
    assert "0 trace(s), 0 span(s) to http://127.0.0.1:9/v1/traces; 1 not exported" in res.stderr
    assert len(stored(out)) == 1
    again = usersim("otel", "export", str(out), "--endpoint", "http://127.0.0.1:9", check=False)
    assert again.returncode == 1 and "1 not exported" in again.stdout


def test_without_the_otel_extra_the_run_is_refused_with_the_install_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    res = usersim("run", BANK, "--id", "BANK-10", "--otel", "--out", str(tmp_path / "run"), check=False)
    assert res.returncode == 2 and "pip install 'usersim-harness[otel]'" in res.stderr
