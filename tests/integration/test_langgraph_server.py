"""`langgraph-server:URL?assistant=ID` against a REAL LangGraph Server (`langgraph dev`, in memory),
started once for this module (it takes ~4 s to come up; each run then costs ~1 s, the in-memory
queue's poll), serving the bank graphs of tests/adapters/langgraph_apps through the CLI: the
sandbox runs the deployed graph's tool calls (the run stops before its `tools` node), a correct and
a flawed agent separate on the bank example, `tools=own` is recorded, and each failure names the
server and is blamed on whom it belongs to, with no API key in sight."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import REPO, usersim
from usersim.adapters.base import AgentEndpointError, AgentInput, load_agent

CASES = "examples/bank/cases"
APPS = REPO / "tests" / "adapters" / "langgraph_apps"
SECRET = "lsv2_test_secret_key_0123456789"
# two of the flawed agent's five flaws: it blocks the first card instead of asking which (BANK-02)
# and changes an address without verifying the customer (BANK-07); each run costs seconds here
SUBSET = ("BANK-02", "BANK-07")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _langgraph_cli() -> str | None:
    beside = Path(sys.executable).parent / "langgraph"
    return str(beside) if beside.exists() else shutil.which("langgraph")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """One `langgraph dev` for the module; its config (absolute graph paths) and its in-memory
    persistence folder live in a temporary directory, never in the repository."""
    cli = _langgraph_cli()
    if cli is None:
        if os.environ.get("USERSIM_OPTIONAL_SKIP") == "1":
            pytest.skip("langgraph-cli[inmem] is not installed")
        pytest.fail('the LangGraph Server tests need `pip install "langgraph-cli[inmem]"` (in the dev extra)')
    work = tmp_path_factory.mktemp("langgraph-server")
    config = json.loads((APPS / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO)]
    config["graphs"] = {k: str(APPS / v.removeprefix("./")) for k, v in config["graphs"].items()}
    (work / "langgraph.json").write_text(json.dumps(config))
    port = _free_port()
    env = os.environ | {"PYTHONPATH": str(REPO), "LANGSMITH_TRACING": "false", "LANGGRAPH_API_KEY": SECRET}
    log = (work / "server.log").open("w")
    cmd = [cli, "dev", "--no-browser", "--no-reload", "--port", str(port), "--n-jobs-per-worker", "8"]
    proc = subprocess.Popen([*cmd, "--config", "langgraph.json"], cwd=work, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start: {(work / 'server.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def run(tmp_path: Path, agent: str, *ids: str, env: dict | None = None) -> tuple[int, dict[str, dict], str]:
    out = tmp_path / "out"
    args = [a for i in ids for a in ("--id", i)]
    res = usersim(
        "run", CASES, *args, "--agent", agent, "--out", str(out), "--no-progress", env=env, check=False
    )
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return res.returncode, {r["case_id"]: r for r in rows}, res.stdout + res.stderr


def verdict(record: dict, judge: str) -> dict:
    return next(v for v in record["verdicts"] if v["judge"] == judge)


@pytest.fixture(scope="module")
def bank_runs(server, tmp_path_factory) -> dict[str, tuple[int, dict[str, dict], str]]:
    env = {"LANGGRAPH_API_KEY": SECRET}
    return {
        agent: run(
            tmp_path_factory.mktemp(agent),
            f"langgraph-server:{server}?assistant=bank_{agent}",
            *SUBSET,
            env=env,
        )
        for agent in ("correct", "flawed")
    }


def test_correct_agent_on_the_server_passes_with_the_sandbox_running_its_tools(bank_runs):
    code, recs, out = bank_runs["correct"]
    assert code == 0, out
    assert {k: r["status"] for k, r in recs.items()} == dict.fromkeys(SUBSET, "passed")
    for r in recs.values():
        state = verdict(r, "final_state")
        assert state["verdict"] == "pass" and "nothing else changed" in state["reason"]
        assert r["tool_trace"] and {e["executed_by"] for e in r["tool_trace"]} == {"sandbox"}
    assert "cards K-3003 status=blocked" in verdict(recs["BANK-02"], "final_state")["reason"]
    assert SECRET not in json.dumps(recs) + out  # the x-api-key never reaches a record or the output
    assert {r["system_config"]["tools"] for r in recs.values()} == {"sandbox"}


def test_flawed_agent_on_the_server_fails_its_flaw_cases_for_the_agents_fault(bank_runs):
    code, recs, _ = bank_runs["flawed"]
    assert code == 1
    for case_id, evidence in (
        ("BANK-02", "cards K-3003: status=active (expected blocked)"),
        ("BANK-07", "verify_customer was never called"),
    ):
        rec = recs[case_id]
        assert rec["status"] == "failed" and rec["blame"] == "agent"
        assert evidence in " | ".join(v["reason"] for v in rec["verdicts"] if v["verdict"] == "fail")


def test_one_thread_per_conversation_holds_the_transcript(server, bank_runs):
    from langgraph_sdk import get_sync_client

    _, recs, _ = bank_runs["correct"]
    rec = recs["BANK-02"]
    with get_sync_client(url=server, api_key=SECRET) as client:
        threads = client.threads.search(metadata={"usersim_case": "BANK-02"}, limit=20)
        assert len(threads) == 2  # one per conversation: the correct and the flawed agent's
        held = [client.threads.get_state(t["thread_id"])["values"]["messages"] for t in threads]
    live = [m for m in rec["transcript"] if m["role"] != "system"]
    users = [m["content"] for m in live if m["role"] == "user"]
    assert any([m["content"] for m in h if m["type"] == "human"] == users for h in held)
    thread = next(h for h in held if [m["content"] for m in h if m["type"] == "human"] == users)
    assert [m["type"] for m in thread if m["type"] != "system"] == [
        {"user": "human", "assistant": "ai", "tool": "tool"}[m["role"]] for m in live
    ]
    # the tool results in the thread are the sandbox's, written as the tools node's output
    tool_results = [m["content"] for m in thread if m["type"] == "tool"]
    assert tool_results == [e["result"] for e in rec["tool_trace"]]


def test_own_tools_on_the_server_are_recorded_and_the_state_is_unjudged(server, tmp_path):
    _, recs, _ = run(tmp_path, f"langgraph-server:{server}?assistant=bank_correct&tools=own", "BANK-04")
    rec = recs["BANK-04"]
    [event] = rec["tool_trace"]
    assert event["executed_by"] == "agent" and event["name"] == "verify_customer"
    assert event["result"] == "Error: production core banking API unreachable (verify_customer)"
    state = verdict(rec, "final_state")
    assert state["verdict"] == "unjudged" and "the agent ran its own tools" in state["reason"]


def test_a_graph_without_a_tools_node_gets_the_sandboxs_results_in_its_next_run(server, tmp_path):
    code, recs, out = run(tmp_path, f"langgraph-server:{server}?assistant=bank_client_tools", "BANK-04")
    assert code == 0, out
    rec = recs["BANK-04"]
    assert "A-2004 balance=650" in verdict(rec, "final_state")["reason"]
    assert "transfer_funds" in [e["name"] for e in rec["tool_trace"] if e["executed_by"] == "sandbox"]


def test_several_ai_messages_per_run_are_all_recorded(server, tmp_path):
    code, recs, out = run(tmp_path, f"langgraph-server:{server}?assistant=bank_chatty", "BANK-04")
    assert code == 0, out
    transcript = recs["BANK-04"]["transcript"]
    acks = [
        i for i, m in enumerate(transcript) if m["content"] == "Thanks, one moment while I look into that."
    ]
    assert len(acks) == sum(1 for m in transcript if m["role"] == "user")
    assert all(transcript[i - 1]["role"] == "user" and transcript[i + 1]["role"] == "assistant" for i in acks)


def test_a_failing_graph_is_the_agents_error_naming_the_server(server, tmp_path):
    code, recs, _ = run(tmp_path, f"langgraph-server:{server}?assistant=bank_broken", "BANK-04")
    stop = recs["BANK-04"]["stop"]
    assert code == 1 and stop["reason"] == "agent_error" and stop["blame"] == "agent"
    assert server in stop["detail"] and "bank_broken" in stop["detail"]
    assert "core banking client not configured" in stop["detail"]


def test_an_unknown_assistant_is_refused_at_start_listing_the_graphs(server, tmp_path):
    code, recs, out = run(tmp_path, f"langgraph-server:{server}?assistant=bank_corect", "BANK-04")
    assert code == 2 and not recs
    assert f"LangGraph Server {server}" in out and "'bank_corect'" in out
    assert "graphs there: bank_broken, bank_chatty, bank_client_tools, bank_correct, bank_flawed" in out
    assert "Did you mean 'bank_correct'?" in out


def test_a_server_that_is_down_is_named_and_blamed_on_the_infrastructure(tmp_path, monkeypatch):
    monkeypatch.setenv("LANGGRAPH_API_KEY", SECRET)
    url = f"http://127.0.0.1:{_free_port()}"
    code, _, out = run(tmp_path, f"langgraph-server:{url}?assistant=bank_correct", "BANK-04")
    assert code == 2 and f"LangGraph Server {url}" in out and "cannot reach the server" in out
    assert SECRET not in out
    # met during a conversation (no start check on this path): an outage, not the agent's failure
    from tests.adapters.harness import FakeTools, make_case
    from usersim.core.messages import Message

    agent = load_agent(f"langgraph-server:{url}?assistant=bank_correct")
    inp = AgentInput(
        messages=[Message(role="user", content="hi")],
        tools=[],
        case=make_case(),
        run_tool=FakeTools().run_tool,
    )
    import asyncio

    with pytest.raises(AgentEndpointError) as info:
        asyncio.run(agent.respond(inp))
    assert url in str(info.value) and SECRET not in str(info.value)


def test_spec_errors_say_what_to_write(tmp_path):
    for spec, words in (
        ("langgraph-server:http://127.0.0.1:1", "needs ?assistant=ID"),
        ("langgraph-server:127.0.0.1:1?assistant=a", "give the server URL"),
        ("langgraph-server:http://127.0.0.1:1?assistant=a&tools=mine", "tools=own"),
        ("langgraph-server:http://127.0.0.1:1?assistant=a&api_key_env=USERSIM_NO_SUCH_KEY", "is not set"),
    ):
        code, _, out = run(tmp_path, spec, "BANK-04")
        assert code == 2 and words in out, (spec, out)
