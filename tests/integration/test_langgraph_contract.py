"""The in-process LangGraph contract through the CLI, on the bank example: by default usersim's
sandbox runs every tool call a compiled graph makes (its ToolNode's own "production" tools never
run, the state checks see the sandbox's state); with ?tools=own the graph's own tools run and are
recorded as the agent's, and final_state says it cannot see them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.langgraph_apps import bank_graph
from tests.support.cli import usersim

CASES = "examples/bank/cases"
APP = "langgraph:tests.adapters.langgraph_apps.bank_graph"


def run(tmp_path: Path, agent: str, *ids: str) -> tuple[int, dict[str, dict], str]:
    out = tmp_path / "out"
    args = [a for i in ids for a in ("--id", i)]
    res = usersim("run", CASES, *args, "--agent", agent, "--out", str(out), "--no-progress", check=False)
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return res.returncode, {r["case_id"]: r for r in rows}, res.stdout + res.stderr


def verdict(record: dict, judge: str) -> dict:
    return next(v for v in record["verdicts"] if v["judge"] == judge)


@pytest.fixture(autouse=True)
def _fresh_production_log():
    bank_graph.PRODUCTION_CALLS.clear()
    yield
    bank_graph.PRODUCTION_CALLS.clear()


@pytest.mark.parametrize("graph", ["correct_graph", "react_graph"])
def test_the_sandbox_runs_the_toolnode_calls_and_the_state_check_sees_them(tmp_path, graph):
    code, recs, out = run(tmp_path, f"{APP}:{graph}", "BANK-04", "BANK-03")
    assert code == 0, out
    transfer = recs["BANK-04"]
    assert transfer["status"] == "passed"
    state = verdict(transfer, "final_state")
    assert state["verdict"] == "pass" and "A-2004 balance=650" in state["reason"]
    trace = transfer["tool_trace"]
    assert [e["name"] for e in trace if e["name"] == "transfer_funds"] == ["transfer_funds"]
    assert {e["executed_by"] for e in trace} == {"sandbox"}
    assert bank_graph.PRODUCTION_CALLS == []  # the graph's own tool bodies never ran
    # each sandbox event points at its tool message in the transcript
    for e in trace:
        msg = transfer["transcript"][e["message_index"]]
        assert msg["role"] == "tool" and msg["name"] == e["name"] and msg["content"] == e["result"]
    assert verdict(recs["BANK-03"], "final_state")["verdict"] == "pass"


def test_own_tools_are_recorded_as_the_agents_and_the_state_check_is_unjudged(tmp_path):
    code, recs, _ = run(tmp_path, f"{APP}:correct_graph?tools=own", "BANK-04")
    rec = recs["BANK-04"]
    state = verdict(rec, "final_state")
    assert state["verdict"] == "unjudged"
    assert "the agent ran its own tools (1 call(s): verify_customer)" in state["reason"]
    assert "?tools=own" in state["reason"]
    assert bank_graph.PRODUCTION_CALLS == [
        ("verify_customer", {"customer_id": "C-1002", "date_of_birth": "1990-11-02"})
    ]
    [event] = rec["tool_trace"]
    assert event["executed_by"] == "agent" and event["name"] == "verify_customer"
    assert event["arguments"] == {"customer_id": "C-1002", "date_of_birth": "1990-11-02"}
    assert event["result"] == "Error: production core banking API unreachable (verify_customer)"
    assert rec["transcript"][event["message_index"]]["content"] == event["result"]
    # tool checks still see the agent's own calls
    assert "tools called: verify_customer x1" in verdict(rec, "tool_called")["reason"]
    assert code == 1  # the agent, told production is down, never transfers: that is its failure


def test_a_graph_running_a_tool_outside_a_toolnode_is_an_agent_error_naming_it(tmp_path):
    code, recs, _ = run(tmp_path, f"{APP}:inline_graph", "BANK-04")
    stop = recs["BANK-04"]["stop"]
    assert code == 1 and stop["reason"] == "agent_error" and stop["blame"] == "agent"
    assert "ran tool 'verify_customer' itself" in stop["detail"] and "?tools=own" in stop["detail"]
    assert bank_graph.PRODUCTION_CALLS  # it did run: which is why usersim refuses to judge it as sandboxed
    # the same graph with tools=own is tested with its own tools, recorded
    _, recs, _ = run(tmp_path / "own", f"{APP}:inline_graph?tools=own", "BANK-04")
    assert [e["executed_by"] for e in recs["BANK-04"]["tool_trace"]] == ["agent"]


def test_a_toolnode_tool_the_sandbox_lacks_is_refused_at_start(tmp_path):
    code, recs, out = run(tmp_path, f"{APP}:extra_tool_graph", "BANK-04")
    assert code == 2 and not recs
    assert "ToolNode 'tools' has send_sms, which the case's sandbox does not have" in out
    assert "?tools=own" in out and "factory" in out


def test_tools_own_with_a_factory_is_refused(tmp_path):
    code, _, out = run(tmp_path, f"{APP}:factory?tools=own", "BANK-04")
    assert code == 2 and "tools=own runs the graph's own tools" in out and "factory" in out


def test_unknown_tools_value_names_the_choices(tmp_path):
    code, _, out = run(tmp_path, f"{APP}:correct_graph?tools=mine", "BANK-04")
    assert code == 2 and "tools=sandbox" in out and "tools=own" in out


def test_several_ai_messages_in_one_turn_are_all_recorded(tmp_path):
    code, recs, out = run(tmp_path, f"{APP}:chatty_graph", "BANK-04")
    assert code == 0, out
    transcript = recs["BANK-04"]["transcript"]
    first_user = next(i for i, m in enumerate(transcript) if m["role"] == "user")
    reply = []
    for m in transcript[first_user + 1 :]:
        if m["role"] == "user":
            break
        reply.append(m)
    assert [m["role"] for m in reply] == ["assistant", "assistant"]
    assert reply[0]["content"] == "Thanks, one moment while I look into that."
    acks = [m for m in transcript if m["content"] == "Thanks, one moment while I look into that."]
    assert len(acks) == sum(1 for m in transcript if m["role"] == "user")  # one per user turn
