"""`usersim import` of spans as the SDKs dump them rather than OTLP JSON: a JSON list of
`span.to_json()` objects (`context.trace_id|span_id`, ISO `start_time`, an `attributes` object,
as the Traceloop SDK's console exporter prints) and Phoenix's nested attributes
(`{llm: {input_messages: [{message: {...}}]}}`). Both are written here from the OpenInference and
OpenLLMetry fixtures (bank runs) and must read as the same conversations as the OTLP files, with
the format guessed, and import into cases that validate."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import REPO, usersim
from usersim.cases.importers.formats import guess_format, read_conversations
from usersim.cases.importers.otlp import attributes

DATA = REPO / "tests/data/import"
SUITE = str(REPO / "examples/bank/cases/_suite.yaml")
FIXTURES = {"openllmetry": "otel_openllmetry.json", "openinference": "otel_openinference.jsonl"}


def _otlp_spans(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    docs = [json.loads(text)] if path.suffix == ".json" else [json.loads(x) for x in text.splitlines()]
    return [s for d in docs for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """Dotted keys as Phoenix nests them: numeric parts become list items."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        node = root
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value

    def lists(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: lists(v) for k, v in node.items()}
            if node and all(k.isdigit() for k in node):
                return [node[k] for k in sorted(node, key=int)]
        return node

    return lists(root)


def _dump(path: Path, nested: bool) -> list[dict[str, Any]]:
    out = []
    for s in _otlp_spans(path):
        attrs = attributes(s.get("attributes"))
        start = dt.datetime.fromtimestamp(int(s["startTimeUnixNano"]) / 1e9, dt.UTC)
        out.append(
            {
                "name": s["name"],
                "context": {"trace_id": "0x" + s["traceId"], "span_id": "0x" + s["spanId"]},
                "start_time": start.isoformat().replace("+00:00", "Z"),
                "status": {"status_code": "ERROR" if (s.get("status") or {}).get("code") == 2 else "UNSET"},
                "attributes": _nest(attrs) if nested else attrs,
                "events": [],
            }
        )
    return out


def _histories(path: Path) -> list[list[tuple]]:
    return [
        [
            (m.role, m.content, [(c.id, c.name, c.arguments) for c in m.tool_calls], m.tool_call_id)
            for m in conv.messages
        ]
        for conv in read_conversations(path, None)
    ]


@pytest.mark.parametrize(("convention", "nested"), [("openllmetry", False), ("openinference", True)])
def test_a_span_dump_reads_as_the_otlp_file_does(convention, nested, tmp_path):
    dump = tmp_path / "spans.json"
    dump.write_text(json.dumps(_dump(DATA / FIXTURES[convention], nested)), encoding="utf-8")
    if nested:  # Phoenix's shape really is nested: no dotted message keys left
        assert not any(k.startswith("llm.") for s in json.loads(dump.read_text()) for k in s["attributes"])
    assert guess_format(dump) == "otel"
    want = _histories(DATA / FIXTURES[convention])
    assert len(want) == 3 and _histories(dump) == want
    cases = tmp_path / "cases"
    res = usersim("import", str(dump), "--to", str(cases), "--persona", "--environment", SUITE)
    assert res.stdout.strip().endswith(
        f"6 case(s), 3 persona(s) from 3 conversation(s) -> {cases}; all valid"
    )
    assert usersim("validate", str(cases)).returncode == 0


def test_a_span_dump_with_a_broken_message_names_the_file_span_and_attribute(tmp_path):
    spans = _dump(DATA / FIXTURES["openinference"], nested=False)
    target = next(s for s in spans if "llm.input_messages.1.message.role" in s["attributes"])
    del target["attributes"]["llm.input_messages.1.message.role"]
    dump = tmp_path / "spans.json"
    dump.write_text(json.dumps(spans), encoding="utf-8")
    res = usersim("import", str(dump), "--to", str(tmp_path / "cases"), check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = [x for x in res.stderr.splitlines() if x.startswith("Error:")]
    assert str(dump) in line and f"span {target['context']['span_id']}" in line, line
    assert "llm.input_messages.1.message.role: missing" in line, line
