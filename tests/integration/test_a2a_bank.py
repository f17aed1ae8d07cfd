"""`a2a:URL` through the CLI against REAL A2A servers built with a2a-sdk (tests/support/a2a_bank.py:
the SDK's JSON-RPC server app and request handler under uvicorn), with the bank example's correct
and flawed agents behind them.

An A2A agent runs its own tools (here: the bank tools in the server's own usersim sandbox, one per
A2A context) and reports them; usersim's state never changes, so the cases are the bank example's
with their `final_state` checks left out: the tool checks (`tool_called`, `tool_order`,
`tool_not_called`) judge the calls the agent reported, the keyword checks its words."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from examples.bank import agent as bank
from tests.examples.test_bank_example import FLAW_CASES, records
from tests.support.a2a_bank import A2AServer, SandboxAgentExecutor, Served, free_port
from tests.support.cli import REPO, usersim

TOKEN = "a2a-bearer-token-secret-31337"


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> Path:
    """examples/bank copied, each case without its final_state checks (see the module docstring)."""
    root = tmp_path_factory.mktemp("bank") / "bank"
    shutil.copytree(REPO / "examples" / "bank", root, ignore=shutil.ignore_patterns("__pycache__"))
    for path in (root / "cases").glob("bank-*.yaml"):
        case = yaml.safe_load(path.read_text())
        case["judging"]["checks"] = [c for c in case["judging"]["checks"] if "final_state" not in c]
        path.write_text(yaml.safe_dump(case, sort_keys=False, allow_unicode=True))
    return root / "cases"


def run(cases: Path, spec: str, out: Path, *extra: str, env: dict | None = None):
    res = usersim(
        "run", str(cases), *extra, "--agent", spec, "--out", str(out), "--no-progress", env=env, check=False
    )
    return res, records(out)


@pytest.fixture(scope="module")
def runs(cases, tmp_path_factory):
    out = {}
    # the correct agent streams (its card says so); the flawed one answers message/send only
    for name, fn, streaming in (("correct", bank.correct, True), ("flawed", bank.flawed, False)):
        executor = SandboxAgentExecutor(fn, cases / "bank-01-lost-card.yaml")
        with A2AServer(executor, streaming=streaming) as server:
            res, recs = run(cases, f"a2a:{server.url}", tmp_path_factory.mktemp(name))
        out[name] = (res, recs, executor.received)
    return out


def test_correct_a2a_agent_passes_every_bank_case(runs):
    res, recs, _ = runs["correct"]
    assert len(recs) == 10
    assert {k: r["status"] for k, r in recs.items() if r["status"] != "passed"} == {}, res.stderr
    assert res.returncode == 0
    for r in recs.values():
        assert r["stop_reason"] == "goal_met"
        tool_checks = [
            v for v in r["verdicts"] if v["judge"] in {"tool_called", "tool_order", "tool_not_called"}
        ]
        assert tool_checks and all(v["verdict"] == "pass" for v in tool_checks)  # judged the reported calls


def test_flawed_a2a_agent_fails_the_cases_its_flaws_touch_for_the_agents_fault(runs):
    res, recs, _ = runs["flawed"]
    assert res.returncode == 1
    assert {k for k, r in recs.items() if r["status"] != "passed"} == set(FLAW_CASES)
    why = {  # the reported tool calls decide, as the agent reported them
        # the user refuses the wrong card and express shipping (simulator/fact_check, constraints)
        "BANK-02": "block_card was never called",
        "BANK-03": "order_replacement_card was never called",
        "BANK-06": "T-4002",
        "BANK-07": "verify_customer",
        "BANK-08": "open_dispute",
    }
    for case_id, evidence in why.items():
        r = recs[case_id]
        reasons = " | ".join(v["reason"] for v in r["verdicts"] if v["verdict"] == "fail")
        assert evidence in reasons, (case_id, reasons)
        assert r["blame"] == "agent"


def test_reported_tool_calls_are_in_the_transcript_with_their_results(runs):
    _, recs, _ = runs["correct"]
    transcript = recs["BANK-01"]["transcript"]
    calls = [tc for m in transcript for tc in m.get("tool_calls") or []]
    assert [c["name"] for c in calls][:3] == ["verify_customer", "get_customer", "block_card"]
    assert calls[2]["arguments"] == {"card_id": "K-3001"}
    results = {m["tool_call_id"]: m["content"] for m in transcript if m["role"] == "tool"}
    assert '"status": "blocked"' in results[calls[2]["id"]]


def test_one_context_per_conversation_and_the_task_carried_while_input_is_required(runs):
    for name in ("correct", "flawed"):
        _, recs, received = runs[name]
        by_context = defaultdict(list)
        for r in received:
            by_context[r["context_id"]].append(r)
        assert len(by_context) == len(recs)  # one A2A context per conversation, never shared
        openings = {msgs[0]["text"] for msgs in by_context.values()}
        assert len(openings) == len(recs)
        # a task stays open over several user turns (input-required) and ends; the next starts anew
        tasks_per_context = [len({m["task_id"] for m in msgs}) for msgs in by_context.values()]
        turns_per_context = [len(msgs) for msgs in by_context.values()]
        assert all(t < n for t, n in zip(tasks_per_context, turns_per_context, strict=True))
        assert any(t > 1 for t in tasks_per_context)


def test_the_bank_cases_as_written_judge_nothing_against_an_agent_running_its_own_tools_exit_3(tmp_path):
    """The bank cases unchanged: their final_state checks cannot see an A2A agent's own tools, so
    every conversation is unjudged however well the tool and keyword checks went. CI must not go
    green on that (exit 3, the reason on the last line) unless the user accepts it."""
    ids = ["--id", "BANK-08", "--id", "BANK-04"]
    cases = REPO / "examples" / "bank" / "cases"
    executor = SandboxAgentExecutor(bank.correct, cases / "bank-01-lost-card.yaml")
    with A2AServer(executor, streaming=True) as server:
        res, recs = run(cases, f"a2a:{server.url}", tmp_path / "a", *ids)
        ok, _ = run(cases, f"a2a:{server.url}", tmp_path / "b", *ids, "--allow-unjudged")
    assert res.returncode == 3, res.stdout + res.stderr
    assert {r["status"] for r in recs.values()} == {"unjudged"} and len(recs) == 2
    for r in recs.values():
        state = next(v for v in r["verdicts"] if v["judge"] == "final_state")
        assert state["verdict"] == "unjudged" and "the agent ran its own tools" in state["reason"]
    assert "unjudged: 2; pass rate 0/0 = — (left out: 2 unjudged)" in res.stdout
    last = res.stderr.strip().splitlines()[-1]
    assert "nothing was judged: 2 of 2 conversation(s) unjudged" in last and last.endswith("exit 3")
    assert "--allow-unjudged" in last
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stderr.strip().splitlines()[-1].endswith("accepted by --allow-unjudged: exit 0")


def test_a_failed_task_is_the_agents_error_with_the_tasks_message(cases, tmp_path):
    executor = SandboxAgentExecutor(bank.correct, cases / "bank-01-lost-card.yaml", fail_on="C-1001")
    with A2AServer(executor, streaming=False) as server:
        res, recs = run(cases, f"a2a:{server.url}", tmp_path, "--id", "BANK-01")
    r = recs["BANK-01"]
    assert r["status"] == "error" and r["blame"] == "agent" and r["stop_reason"] == "agent_error"
    assert "failed: core banking system unavailable" in r["stop"]["detail"]
    assert server.url in r["stop"]["detail"]


def test_a_server_that_is_down_is_an_outage_naming_the_endpoint(cases, tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    res, recs = run(cases, f"a2a:{url}", tmp_path, "--id", "BANK-01")
    r = recs["BANK-01"]
    assert r["status"] == "error" and r["blame"] == "infrastructure"
    assert f"A2A agent {url}: cannot read the agent card" in r["stop"]["detail"]


def test_a_bad_agent_card_is_the_agents_error_naming_the_card(cases, tmp_path):
    app = Starlette(
        routes=[Route("/.well-known/agent-card.json", lambda _: PlainTextResponse("<html>hi</html>"))]
    )
    with Served(app) as server:
        res, recs = run(cases, f"a2a:{server.url}", tmp_path, "--id", "BANK-01")
    detail = recs["BANK-01"]["stop"]["detail"]
    assert recs["BANK-01"]["blame"] == "agent"
    assert f"{server.url}/.well-known/agent-card.json" in detail and "cannot read the agent card" in detail


def test_the_bearer_token_reaches_the_agent_and_nothing_else(cases, tmp_path):
    executor = SandboxAgentExecutor(bank.correct, cases / "bank-01-lost-card.yaml")
    env = {"BANK_AGENT_TOKEN": TOKEN}
    with A2AServer(executor, streaming=True) as server:
        res, recs = run(
            cases, f"a2a:{server.url}?auth_env=BANK_AGENT_TOKEN", tmp_path, "--id", "BANK-01", env=env
        )
    assert recs["BANK-01"]["status"] == "passed", res.stderr
    assert server.headers and {h.get("authorization") for h in server.headers} == {f"Bearer {TOKEN}"}
    assert TOKEN not in res.stdout + res.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(errors="replace"), path


def streamed(server: A2AServer) -> list[bool]:
    """Per JSON-RPC request: whether the client asked for an SSE stream (SendStreamingMessage)."""
    posts = [h for h in server.headers if h.get("content-type", "").startswith("application/json")]
    return ["text/event-stream" in h.get("accept", "") for h in posts]


@pytest.mark.parametrize("stream", ["auto", "0"])
def test_streaming_follows_the_card_unless_stream_0(cases, tmp_path, stream):
    executor = SandboxAgentExecutor(bank.correct, cases / "bank-01-lost-card.yaml")
    with A2AServer(executor, streaming=True) as server:
        res, recs = run(cases, f"a2a:{server.url}?stream={stream}", tmp_path, "--id", "BANK-02")
    assert recs["BANK-02"]["status"] == "passed", res.stderr
    modes = set(streamed(server))
    assert modes == ({True} if stream == "auto" else {False})
    calls = [tc["name"] for m in recs["BANK-02"]["transcript"] for tc in m.get("tool_calls") or []]
    assert "block_card" in calls  # recorded the same way in both modes
