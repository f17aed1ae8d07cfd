"""`usersim sandbox serve CASE --mcp`, met the way an agent meets it: the official MCP SDK's client
against the command run as a real process, over stdio (ClientSession + stdio_client) and over
streamable HTTP (ClientSession + streamable_http_client with MCP sessions, and the high-level
`Client` on a sessionless /mcp/NAME URL)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

if os.environ.get("USERSIM_OPTIONAL_SKIP") == "1":  # CI installs the mcp extra: missing there is a failure
    pytest.importorskip("mcp")
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.support.cli import REPO, usersim

BANK = REPO / "examples" / "bank"
BANK_TOOLS = {
    "verify_customer",
    "find_customer",
    "get_customer",
    "list_transactions",
    "transfer_funds",
    "open_dispute",
    "order_replacement_card",
    "block_card",
    "update_address",
}
OUTAGE = "Error: core banking is unavailable (503), try again later"


@pytest.fixture()
def fault_case(tmp_path: Path) -> Path:
    """A bank case (in a copy of examples/bank) whose 2nd get_customer call of a conversation fails
    with an injected outage."""
    shutil.copytree(BANK, tmp_path / "bank", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "bank" / "cases" / "bank-faults.yaml"
    path.write_text(
        "include: _suite.yaml\n"
        "id: BANK-MCP-FAULTS\n"
        "title: The second profile lookup of a conversation fails\n"
        "persona: ../personas/priya-two-cards.yaml\n"
        "tool_intercepts:\n"
        "  - intercept_tool: get_customer\n"
        "    intercept_on_call_number: 2\n"
        f"    inject_tool_result: {{is_error: true, content: '{OUTAGE}'}}\n"
        "judging:\n"
        "  checks:\n"
        "    - tool_called: {tool: get_customer}\n",
        encoding="utf-8",
    )
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _trace(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _serve_args(case: Path, *extra: str) -> list[str]:
    return ["-m", "usersim", "sandbox", "serve", str(case), "--mcp", *extra]


def test_stdio_lists_the_case_tools_with_their_schemas_calls_them_and_injects_the_fault(fault_case, tmp_path):
    trace = tmp_path / "trace.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=_serve_args(fault_case, "--trace", str(trace)), env=_env(), cwd=str(REPO)
    )

    async def session() -> tuple[dict, list]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            results = [
                await s.call_tool("get_customer", {"customer_id": "C-1003"}),
                await s.call_tool("get_customer", {"customer_id": "C-1003"}),  # the 2nd: intercepted
                await s.call_tool("get_customer", {"customer_id": "C-1003"}),
                await s.call_tool("block_card", {"card_id": "K-3003"}),
                await s.call_tool("block_card", {"card_id": "K-3003"}),  # the state remembers the 1st
                await s.call_tool("freeze_everything", {}),
            ]
            return tools, results

    tools, results = asyncio.run(session())
    assert set(tools) == BANK_TOOLS
    transfer = tools["transfer_funds"].input_schema
    assert transfer["required"] == ["from_account_id", "to_account_id", "amount"]
    assert transfer["properties"]["amount"]["type"] == "number"
    assert tools["order_replacement_card"].input_schema["properties"]["shipping"]["enum"] == [
        "standard",
        "express",
    ]
    assert "Block a card" in tools["block_card"].description

    first, second, third, blocked, again, unknown = results
    assert not first.is_error and json.loads(_text(first))["name"] == "Priya Nair"
    assert second.is_error and _text(second) == OUTAGE
    assert not third.is_error and json.loads(_text(third)) == json.loads(_text(first))
    assert not blocked.is_error and json.loads(_text(blocked))["status"] == "blocked"
    assert again.is_error and "status=blocked, needs active" in _text(again)
    assert unknown.is_error and "Unknown tool 'freeze_everything'" in _text(unknown)

    lines = _trace(trace)
    assert [(e["name"], e["call_number"], e["intercepted"]) for e in lines] == [
        ("get_customer", 1, False),
        ("get_customer", 2, True),
        ("get_customer", 3, False),
        ("block_card", 1, False),
        ("block_card", 2, False),
        ("freeze_everything", 0, False),
    ]
    assert {e["conversation"] for e in lines} == {"stdio"}
    assert lines[1]["result"] == OUTAGE and lines[1]["is_error"]


@pytest.fixture()
def http_server(fault_case, tmp_path):
    """`sandbox serve --mcp --http 0` as a process; yields (base URL, trace file)."""
    trace = tmp_path / "http-trace.jsonl"
    proc = subprocess.Popen(
        [sys.executable, *_serve_args(fault_case, "--http", "0", "--trace", str(trace))],
        cwd=REPO,
        env=_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        banner = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/mcp) ", banner)
        assert found, banner + (proc.stderr.read() if proc.poll() is not None else "")
        yield found[1], trace
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_http_sessions_have_their_own_state_and_call_numbers(http_server):
    url, trace = http_server

    async def scenario() -> dict[str, list]:
        async with (
            streamable_http_client(url) as (ra, wa, *_),
            ClientSession(ra, wa) as a,
            streamable_http_client(url) as (rb, wb, *_),
            ClientSession(rb, wb) as b,
        ):
            await a.initialize()
            await b.initialize()
            out: dict[str, list] = {"a": [], "b": []}
            out["a"].append(await a.call_tool("block_card", {"card_id": "K-3003"}))
            out["a"].append(await a.call_tool("get_customer", {"customer_id": "C-1003"}))
            # b: a fresh conversation - K-3003 still active, and its 1st get_customer is not the 2nd
            out["b"].append(await b.call_tool("get_customer", {"customer_id": "C-1003"}))
            out["a"].append(await a.call_tool("get_customer", {"customer_id": "C-1003"}))
            out["b"].append(await b.call_tool("block_card", {"card_id": "K-3003"}))
            return out

    out = asyncio.run(scenario())
    a_block, a_first, a_second = out["a"]
    b_first, b_block = out["b"]
    cards = lambda r: {c["card_id"]: c["status"] for c in json.loads(_text(r))["cards"]}  # noqa: E731
    assert cards(a_first)["K-3003"] == "blocked"
    assert cards(b_first)["K-3003"] == "active"
    assert a_second.is_error and _text(a_second) == OUTAGE  # a's 2nd call, though b called in between
    assert not a_block.is_error and not b_block.is_error  # each conversation blocks its own copy

    lines = _trace(trace)
    sessions = list(dict.fromkeys(e["conversation"] for e in lines))
    assert len(sessions) == 2 and all(re.fullmatch(r"[0-9a-f]{32}", s) for s in sessions)  # Mcp-Session-Id
    per = {s: [(e["name"], e["call_number"]) for e in lines if e["conversation"] == s] for s in sessions}
    assert per[sessions[0]] == [("block_card", 1), ("get_customer", 1), ("get_customer", 2)]
    assert per[sessions[1]] == [("get_customer", 1), ("block_card", 1)]


def test_sessionless_clients_name_their_conversation_in_the_url(http_server):
    """The SDK's `Client` speaks the sessionless 2026-07-28 protocol: /mcp/NAME is the conversation."""
    url, trace = http_server

    async def call(name: str, tool: str, args: dict) -> object:
        async with Client(f"{url}/{name}") as client:
            return await client.call_tool(tool, args)

    async def scenario() -> list:
        return [
            await call("alice", "block_card", {"card_id": "K-3003"}),
            await call("alice", "block_card", {"card_id": "K-3003"}),  # a new connection, same state
            await call("bob", "block_card", {"card_id": "K-3003"}),
        ]

    first, again, other = asyncio.run(scenario())
    assert not first.is_error
    assert again.is_error and "status=blocked" in _text(again)
    assert not other.is_error
    assert [(e["conversation"], e["call_number"]) for e in _trace(trace)] == [
        ("alice", 1),
        ("alice", 2),
        ("bob", 1),
    ]


def test_serve_needs_a_protocol_and_a_case_it_can_read(fault_case):
    res = usersim("sandbox", "serve", str(fault_case), check=False)
    assert res.returncode == 2 and "--mcp" in res.stderr
    res = usersim("sandbox", "serve", "no/such/case.yaml", "--mcp", check=False)
    assert res.returncode == 1 and "case file no/such/case.yaml does not exist" in res.stderr


def test_a_port_in_use_is_named(fault_case):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        started = time.monotonic()
        res = usersim("sandbox", "serve", str(fault_case), "--mcp", "--http", str(port), check=False)
    assert res.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in res.stderr
    assert time.monotonic() - started < 30


def test_without_the_mcp_package_the_error_names_the_extra(fault_case):
    # a process where `import mcp` fails as if the extra were not installed
    hide = "import sys; sys.modules['mcp'] = None; from usersim.cli import main; main()"
    res = subprocess.run(
        [sys.executable, "-c", hide, "sandbox", "serve", str(fault_case), "--mcp"],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 1, res.stderr
    assert "MCP support needs the 'mcp' package" in res.stderr
    assert "pip install 'usersim-harness[mcp]'" in res.stderr
