"""`?tools=mcp` through `usersim run` on examples/bank: agents that take their tools over MCP (the
official SDK's `Client`, tests/integration/mcp_agents.py) are tested with usersim's sandbox, its
fault injection and its stateful checks, and the calls they make are the conversation's record."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

if os.environ.get("USERSIM_OPTIONAL_SKIP") == "1":  # CI installs the mcp extra: missing there is a failure
    pytest.importorskip("mcp")
from aiohttp import web

from tests.integration.mcp_agents import over_mcp
from tests.support.cli import REPO, usersim

CASES = "examples/bank/cases"
IDS = ("BANK-01", "BANK-02", "BANK-03", "BANK-06", "BANK-07")
FLAW_CASES = {  # case -> what the deciding failure must say (as in tests/examples/test_bank_example.py)
    # the user refuses the wrong card and express shipping: nothing is blocked or ordered
    "BANK-02": "cards K-3003: status=active (expected blocked)",
    "BANK-03": "order_replacement_card was never called",
    "BANK-06": "transaction_id=T-4002 (expected T-4001)",
    "BANK-07": "verify_customer was never called",
}
AGENTS = "python:tests.integration.mcp_agents"


def run(out: Path, agent: str, *ids: str, cases: str = CASES) -> tuple[int, dict[str, dict], str]:
    args = ["run", cases, "--agent", agent, "--out", str(out), "--no-progress"]
    for i in ids:
        args += ["--id", i]
    res = usersim(*args, check=False)
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return res.returncode, {r["case_id"]: r for r in rows}, res.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[int, dict[str, dict], str]]:
    return {
        name: run(tmp_path_factory.mktemp(name), f"{AGENTS}:{name}?tools=mcp", *IDS)
        for name in ("correct", "flawed")
    }


def test_the_correct_agent_over_mcp_passes_the_stateful_checks(runs):
    code, recs, err = runs["correct"]
    assert code == 0, err
    assert set(recs) == set(IDS)
    for r in recs.values():
        assert r["status"] == "passed", r["verdicts"]
        fs = next(v for v in r["verdicts"] if v["judge"] == "final_state")
        assert fs["verdict"] == "pass" and "nothing else changed" in fs["reason"]
        assert r["system_config"]["tools"] == "mcp"


def test_the_flawed_agent_over_mcp_fails_each_case_its_flaws_touch(runs):
    code, recs, _ = runs["flawed"]
    assert code == 1
    assert {k for k, r in recs.items() if r["status"] != "passed"} == set(FLAW_CASES)
    for case_id, evidence in FLAW_CASES.items():
        reasons = " | ".join(v["reason"] for v in recs[case_id]["verdicts"] if v["verdict"] == "fail")
        assert evidence in reasons, (case_id, reasons)


def test_mcp_calls_are_the_conversation_s_tool_trace_and_transcript(runs):
    rec = runs["correct"][1]["BANK-02"]
    trace = [(e["name"], e["arguments"]) for e in rec["tool_trace"]]
    assert trace == [
        ("verify_customer", {"customer_id": "C-1003", "date_of_birth": "1978-07-21"}),
        ("get_customer", {"customer_id": "C-1003"}),
        ("block_card", {"card_id": "K-3003"}),
    ]
    # in the transcript each call is an assistant tool call answered by its tool result, in order
    msgs = rec["transcript"]
    calls = [
        (i, m["tool_calls"][0])
        for i, m in enumerate(msgs)
        if m["role"] == "assistant" and m.get("tool_calls")
    ]
    assert [c["name"] for _, c in calls] == [name for name, _ in trace]
    for i, call in calls:
        answer = msgs[i + 1]
        assert (
            answer["role"] == "tool"
            and answer["tool_call_id"] == call["id"]
            and answer["name"] == call["name"]
        )
    block_result = json.loads(msgs[calls[-1][0] + 1]["content"])
    assert block_result == {**block_result, "card_id": "K-3003", "status": "blocked"}
    assert msgs[-1]["role"] == "assistant" and "ending in 7788 is now blocked" in msgs[-1]["content"]


@pytest.fixture()
def fault_cases(tmp_path: Path) -> Path:
    """A copy of examples/bank with one more case: its first get_customer call gets an outage."""
    bank = tmp_path / "bank"
    shutil.copytree(REPO / "examples" / "bank", bank, ignore=shutil.ignore_patterns("__pycache__"))
    original = (bank / "cases" / "bank-04-transfer.yaml").read_text(encoding="utf-8")
    (bank / "cases" / "bank-04-faults.yaml").write_text(
        original.replace("id: BANK-04", "id: BANK-04-FAULT") + "tool_intercepts:\n"
        "  - intercept_tool: get_customer\n"
        "    intercept_on_call_number: 1\n"
        "    inject_tool_result: {is_error: true, content: 'Error: core banking timed out'}\n",
        encoding="utf-8",
    )
    return bank / "cases"


def test_fault_injection_reaches_the_agent_through_mcp(fault_cases, tmp_path):
    code, recs, err = run(
        tmp_path / "out", f"{AGENTS}:correct?tools=mcp", "BANK-04-FAULT", cases=str(fault_cases)
    )
    rec = recs["BANK-04-FAULT"]
    lookups = [e for e in rec["tool_trace"] if e["name"] == "get_customer"]
    assert [(e["call_number"], e["intercepted"], e["is_error"]) for e in lookups] == [
        (1, True, True),
        (2, False, False),
    ]
    assert any(
        m["role"] == "tool" and m["content"] == "Error: core banking timed out" for m in rec["transcript"]
    )
    assert rec["status"] == "passed" and code == 0, (err, rec["verdicts"])  # the agent retried


@pytest.mark.parametrize("agent", ["sync_correct", "correct_legacy"])
def test_a_synchronous_agent_and_a_handshake_era_client_work_too(agent, tmp_path):
    code, recs, err = run(tmp_path / "out", f"{AGENTS}:{agent}?tools=mcp", "BANK-04")
    assert code == 0 and recs["BANK-04"]["status"] == "passed", err
    assert "transfer_funds" in [e["name"] for e in recs["BANK-04"]["tool_trace"]]


@pytest.fixture()
def http_agent():
    """An HTTP agent endpoint that takes its tools over MCP; yields (URL, the bodies it received)."""
    bodies: list[dict] = []

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        bodies.append(body)
        message = await over_mcp(body["messages"], {"mcp_url": body["mcp_url"]}, set())
        return web.json_response({"message": message})

    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/chat", handle)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/chat", bodies
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_an_http_agent_gets_an_mcp_url_instead_of_schemas(http_agent, tmp_path):
    url, bodies = http_agent
    code, recs, err = run(tmp_path / "out", f"{url}#tools=mcp", "BANK-04")
    assert code == 0 and recs["BANK-04"]["status"] == "passed", err
    assert bodies and all("tools" not in b and b["mcp_url"].startswith("http://127.0.0.1:") for b in bodies)
    assert len({b["mcp_url"] for b in bodies}) == len(bodies)  # one URL per agent step
    assert "transfer_funds" in [e["name"] for e in recs["BANK-04"]["tool_trace"]]


def test_a_url_from_an_ended_step_is_refused_with_a_reason(tmp_path):
    code, recs, _ = run(tmp_path / "out", f"{AGENTS}:stale?tools=mcp", "BANK-04")
    rec = recs["BANK-04"]
    assert rec["stop_reason"] == "agent_error" and code == 1
    # the MCP error the agent's client raised (inside its task group), as the agent's crash
    assert "MCPError: no agent step is live at /mcp/expired: use the mcp_url" in rec["traceback"]


def test_an_unknown_tools_mode_is_a_usage_error(tmp_path):
    spec = f"{AGENTS}:correct?tools=mpc"
    res = usersim("run", CASES, "--id", "BANK-04", "--agent", spec, "--out", str(tmp_path), check=False)
    assert res.returncode == 2
    assert "Option 'tools=mpc'" in res.stderr and "must be one of: schemas, mcp" in res.stderr


def test_without_the_mcp_package_the_agent_option_names_the_extra(tmp_path):
    hide = "import sys; sys.modules['mcp'] = None; from usersim.cli import main; main()"
    spec = "python:examples.bank.agent:correct?tools=mcp"
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            hide,
            "run",
            CASES,
            "--id",
            "BANK-04",
            "--agent",
            spec,
            "--out",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert "pip install 'usersim-harness[mcp]'" in res.stderr
    assert not (tmp_path / "results.jsonl").exists()
