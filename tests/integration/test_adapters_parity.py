"""The same behaviour through `python:`, `langgraph:` and `openai:` (stub server over HTTP) gives the
same transcript structure and the same tool trace through the whole harness."""

from __future__ import annotations

import json

from tests.integration.test_cli_run import records, usersim
from tests.support.openai_stub import OpenAIStub


def _shape(rec: dict) -> list[tuple]:
    return [(m["role"], bool(m.get("tool_calls")), m.get("name")) for m in rec["transcript"]]


def _trace(rec: dict) -> list[tuple]:
    return [
        (
            e["name"],
            json.dumps(e["arguments"], sort_keys=True, ensure_ascii=False),
            e["result"],
            e["call_number"],
        )
        for e in rec["tool_trace"]
    ]


def test_python_langgraph_and_openai_agents_agree(tmp_path):
    specs = {
        "python": "python:tests.integration.toy_agents:flights_agent",
        "langgraph": "langgraph:tests.integration.toy_agents:flights_graph",
    }
    recs = {}
    for name, spec in specs.items():
        out = tmp_path / name
        usersim("run", "--id", "B1-EI-01", "--agent", spec, "--out", str(out), "--no-progress")
        recs[name] = {r["id"]: r for r in records(out)}

    def responder(body: dict) -> dict:
        last = body["messages"][-1]
        if last["role"] == "tool":
            first = (json.loads(last["content"]).get("outbound") or [{}])[0]
            return {
                "content": f"找到航班 {first.get('flight_no', '?')}，价格 {first.get('price_per_person', '?')}"
            }
        args = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2}
        return {"tool_calls": [{"name": "search_flights", "arguments": args, "id": "c1"}]}

    with OpenAIStub(responder=responder) as stub:
        out = tmp_path / "openai"
        usersim(
            "run",
            "--id",
            "B1-EI-01",
            "--agent",
            "openai:toy",
            "--out",
            str(out),
            "--no-progress",
            env={"OPENAI_BASE_URL": stub.base_url, "USERSIM_NO_CACHE": "1"},
        )
        recs["openai"] = {r["id"]: r for r in records(out)}

    ids = set(recs["python"])
    assert ids == set(recs["langgraph"]) == set(recs["openai"])
    for rid in ids:
        base = recs["python"][rid]
        assert base["status"] == "passed"
        for other in ("langgraph", "openai"):
            rec = recs[other][rid]
            assert _shape(rec) == _shape(base), other
            assert _trace(rec) == _trace(base), other
            assert rec["transcript"][-1]["content"] == base["transcript"][-1]["content"]
            assert rec["status"] == "passed"
