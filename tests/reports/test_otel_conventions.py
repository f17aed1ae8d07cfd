"""Exported traces against the GenAI semantic conventions' requirement table
(tests/data/otel/genai_requirements.yaml, written from the semconv docs), on conversations run
through the CLI: the bank agents with the rule simulator, an OpenAI-protocol agent and simulator
answered over real HTTP (the response names a model other than the one asked for), an agent that
crashes, a judge that failed. Then `--no-content`: not one value the user, the agent or a tool
said survives in any span name, attribute, event or status."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.trace import SpanKind, StatusCode

from tests.reports.test_otel import spans_of, stored
from tests.simulator.test_llm_acceptance import CASE, FLIGHTS_AND_HOTEL, PERSONA, route, sim
from tests.support.cli import usersim
from tests.support.openai_stub import OpenAIStub
from usersim.core.record import RunRecord

REQUIREMENTS = yaml.safe_load(
    (Path(__file__).parents[1] / "data" / "otel" / "genai_requirements.yaml").read_text(encoding="utf-8")
)
BANK = "examples/bank/cases"
TYPES = {"int": int, "float": float, "str": str}


def _missing(attrs: dict[str, Any], rule: dict[str, Any], failed: bool) -> list[str]:
    """The attributes a rule wants that `attrs` lacks or carries with the wrong type."""
    problems = [f"{k} (required)" for k in rule.get("required", []) if k not in attrs]
    for key, condition in rule.get("conditionally_required", {}).items():
        needed = (
            (condition == "on_error" and failed)
            or condition == "if_available"
            or (condition.startswith("with ") and condition[5:] in attrs)
        )
        if needed and key not in attrs:
            problems.append(f"{key} ({condition})")
    for trigger, keys in rule.get("when", {}).items():
        if trigger in attrs:
            problems += [f"{k} (recommended with {trigger})" for k in keys if k not in attrs]
    for key, type_name in rule.get("types", {}).items():
        if key in attrs and not isinstance(attrs[key], TYPES[type_name]):
            problems.append(f"{key} is {type(attrs[key]).__name__}, not {type_name}")
    return problems


def violations(spans) -> list[str]:
    """Every departure from the requirement table, as `span name: attribute (why)`."""
    out = []
    for s in spans:
        attrs = dict(s.attributes)
        rule = REQUIREMENTS["spans"].get(attrs.get("gen_ai.operation.name"))
        if rule is not None:
            failed = s.status.status_code is StatusCode.ERROR
            out += [f"{s.name}: {p}" for p in _missing(attrs, rule, failed)]
            if s.kind is not SpanKind[rule["kind"]]:
                out.append(f"{s.name}: kind {s.kind.name}, not {rule['kind']}")
            expected = re.sub(r"\{([^}]+)\}", lambda m, a=attrs: str(a.get(m.group(1))), rule["name"])
            if s.name != expected:
                out.append(f"{s.name}: name is not {expected!r}")
        for event in s.events:
            rule = REQUIREMENTS["events"].get(event.name)
            if rule is not None:
                ev = dict(event.attributes)
                failed = ev.get("gen_ai.evaluation.score.label") == "error"
                out += [f"{s.name} event {event.name}: {p}" for p in _missing(ev, rule, failed)]
    return out


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, list[RunRecord]]:
    runs: dict[str, list[RunRecord]] = {}
    for agent in ("correct", "flawed"):
        out = tmp_path_factory.mktemp(agent)
        usersim(
            "run", BANK, "--id", "BANK-02", "--id", "BANK-06", "--id", "BANK-09", "--id", "BANK-10",
            "--agent", f"python:examples.bank.agent:{agent}", "--out", str(out), "--no-progress",
            check=False,
        )  # fmt: skip
        runs[agent] = stored(out)
        runs[f"_{agent}_dir"] = out  # type: ignore[assignment]

    home = tmp_path_factory.mktemp("crash")
    (home / "crashing_agent.py").write_text(
        "def agent(messages, tools):\n    raise RuntimeError('ledger offline for C-1001 / 4111')\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(home))
    try:
        usersim(
            "run", BANK, "--id", "BANK-10", "--agent", "python:crashing_agent:agent",
            "--out", str(home / "out"), "--no-progress", check=False,
        )  # fmt: skip
    finally:
        sys.path.remove(str(home))
    runs["crash"] = stored(home / "out")

    work = tmp_path_factory.mktemp("llm")
    (work / "cases").mkdir()
    (work / "personas").mkdir()
    (work / "personas" / "acc-user.yaml").write_text(yaml.safe_dump(PERSONA, allow_unicode=True), "utf-8")
    (work / "cases" / "ACC-1.yaml").write_text(yaml.safe_dump(CASE, allow_unicode=True), "utf-8")
    served = {  # the endpoint answers with a dated model and its own ids, as providers do
        "id": "chatcmpl-9xQ2",
        "object": "chat.completion",
        "created": 0,
        "model": "agent-model-2026-01-15",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": FLIGHTS_AND_HOTEL}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
    }
    with OpenAIStub() as stub, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_BASE_URL", stub.base_url)
        mp.setenv("OPENAI_API_KEY", "sk-test-stub-key-123456")
        route(
            stub,
            **{"agent-model": [{"raw": served}], "sim-model": [sim("6 月 15 号"), sim("好的谢谢", "stop")]},
        )
        usersim(
            "run", str(work / "cases"), "--agent", "openai:agent-model", "--simulator", "openai:sim-model",
            "--personas", str(work / "personas"), "--out", str(work / "out"), "--no-progress", check=False,
        )  # fmt: skip
        runs["llm"] = stored(work / "out")
        runs["_port"] = stub.port  # type: ignore[assignment]
    return runs


def all_records(records) -> list[RunRecord]:
    return [r for key, rs in records.items() if not key.startswith("_") for r in rs]


def test_every_exported_span_and_event_meets_the_conventions_requirements(records):
    assert {r.status for r in all_records(records)} >= {"passed", "failed", "error"}
    for record in all_records(records):
        assert violations(spans_of(record)) == [], record.case_id


def test_a_chat_span_names_provider_response_model_id_and_server_of_the_call(records):
    (record,) = records["llm"]
    chats = [s for s in spans_of(record) if s.attributes.get("gen_ai.operation.name") == "chat"]
    agent = [dict(s.attributes) for s in chats if s.attributes["usersim.role"] == "agent"]
    assert agent and all(
        (
            a["gen_ai.provider.name"],
            a["gen_ai.request.model"],
            a["gen_ai.response.model"],
            a["gen_ai.response.id"],
            a["server.address"],
            a["server.port"],
        )
        == ("openai", "agent-model", "agent-model-2026-01-15", "chatcmpl-9xQ2", "127.0.0.1", records["_port"])
        for a in agent
    )
    simulator = [dict(s.attributes) for s in chats if s.attributes["usersim.role"] == "simulator"]
    assert simulator and all(a["gen_ai.response.id"].startswith("chatcmpl-stub-") for a in simulator)
    (root,) = [s for s in spans_of(record) if s.parent is None]
    assert root.attributes["gen_ai.provider.name"] == "openai"  # the agent's own model calls


def test_the_agent_span_names_its_provider_by_transport_and_a_crash_by_its_class(records):
    (crash,) = records["crash"]
    assert crash.status == "error"
    (root,) = [s for s in spans_of(crash) if s.parent is None]
    assert root.attributes["gen_ai.provider.name"] == "python"
    assert root.attributes["error.type"] == "RuntimeError"
    assert root.status.status_code is StatusCode.ERROR and "ledger offline" in root.status.description
    (quiet,) = [s for s in spans_of(crash, content=False) if s.parent is None]
    assert quiet.status.description == "RuntimeError"  # the message quotes the conversation


def test_a_judge_that_failed_is_an_evaluation_with_an_error_type(records):
    passed = records["correct"][0]
    broken = passed.verdicts[0].model_copy(update={"verdict": "error", "reason": "judge answered no JSON"})
    record = passed.model_copy(update={"verdicts": [broken, *passed.verdicts[1:]]})
    (root,) = [s for s in spans_of(record) if s.parent is None]
    (event,) = [e for e in root.events if e.attributes["gen_ai.evaluation.score.label"] == "error"]
    assert event.attributes["error.type"] == "judge_error"
    assert violations(spans_of(record)) == []


def test_the_requirement_check_itself_fails_a_span_that_lacks_what_the_conventions_require(records):
    record = records["correct"][0]
    spans = spans_of(record)

    class Stripped:  # the same span without its provider and with the wrong kind
        def __init__(self, span):
            self.__dict__.update(name=span.name, status=span.status, events=span.events, kind=SpanKind.CLIENT)
            self.attributes = {k: v for k, v in span.attributes.items() if k != "gen_ai.provider.name"}

    (root,) = [s for s in spans if s.parent is None]
    assert violations([Stripped(root)]) == [
        f"{root.name}: gen_ai.provider.name (required)",
        f"{root.name}: kind CLIENT, not INTERNAL",
    ]


# --- --no-content ------------------------------------------------------------------------------


def said(record: RunRecord) -> set[str]:
    """What the user, the agent and the tools said: message text, tool arguments and results and
    every value inside them (JSON leaves), 4 characters or longer."""

    def leaves(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [x for v in value.values() for x in leaves(v)]
        if isinstance(value, list):
            return [x for v in value for x in leaves(v)]
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                return [value]
            return [value, *leaves(parsed)] if isinstance(parsed, (dict, list)) else [value]
        return [] if value is None or isinstance(value, bool) else [str(value)]

    values: list[str] = []
    for m in record.transcript:
        values += leaves(m.content or "")
        values += [x for c in m.tool_calls or [] for x in leaves(c.get("arguments"))]
    for e in record.tool_trace:
        values += leaves(e.arguments) + leaves(e.result)
    names = {e.name for e in record.tool_trace} | {record.agent, record.case_id, record.persona or ""}
    # a value that is also part of one of usersim's own names (a tool `verify_customer`, a persona
    # `alice-express`) is not
    # what was said; what remains must not appear anywhere
    return {v.strip() for v in values if len(v.strip()) >= 4 and not any(v.strip() in n for n in names)}


def exported_text(spans) -> list[str]:
    """Every string in the export: span names, attribute values, event attributes, statuses."""
    out = []
    for s in spans:
        out.append(s.name)
        out += [v for v in s.attributes.values() if isinstance(v, str)]
        out += [v for e in s.events for v in e.attributes.values() if isinstance(v, str)]
        if s.status.description:
            out.append(s.status.description)
    return out


def leaks(record: RunRecord, content: bool) -> set[str]:
    text = exported_text(spans_of(record, content=content))
    return {v for v in said(record) if any(v in t for t in text)}


def test_no_content_leaves_nothing_said_in_any_attribute_event_or_status(records):
    checked = 0
    for record in all_records(records):
        assert leaks(record, content=False) == set(), record.case_id
        checked += bool(said(record))
    assert checked >= 8


def test_with_content_the_same_sweep_finds_the_conversation(records):
    """The sweep can fail: with content, tool arguments are in evaluation explanations."""
    flawed = next(r for r in records["flawed"] if r.case_id == "BANK-06")
    assert "T-4002" in leaks(flawed, content=True)
    for record in all_records(records):
        if record.transcript:
            assert leaks(record, content=True), record.case_id


def test_no_content_keeps_what_was_judged_with_the_values_replaced(records):
    flawed = next(r for r in records["flawed"] if r.case_id == "BANK-06")
    (root,) = [s for s in spans_of(flawed, content=False) if s.parent is None]
    events = [dict(e.attributes) for e in root.events]
    assert [(e["gen_ai.evaluation.name"], e["gen_ai.evaluation.score.label"]) for e in events] == [
        (v.judge, v.verdict) for v in flawed.verdicts
    ]
    assert not any("gen_ai.evaluation.explanation" in e for e in events)
    criteria = [e["usersim.criterion"] for e in events if "usersim.criterion" in e]
    assert criteria and all("T-4002" not in c for c in criteria)


def test_a_cli_export_without_content_has_no_value_of_the_conversation(records, tmp_path):
    target = tmp_path / "traces.jsonl"
    usersim("otel", "export", str(records["_flawed_dir"]), "--to", str(target), "--no-content")
    lines = target.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(records["flawed"]) and all("gen_ai.evaluation.result" in x for x in lines)
    for record in records["flawed"]:  # each trace against its own conversation
        (line,) = [x for x in lines if f'"stringValue": "{record.id}"' in x]
        assert {v for v in said(record) if v in line} == set(), record.case_id
