"""`openai-responses:MODEL` through the CLI on examples/bank: the bank's correct and flawed agents
are the "model" behind a Responses API stub over real HTTP (tests/support/responses_stub.py), so
every turn goes through responses.create, previous_response_id chaining, function_call items run
by usersim's sandbox and function_call_output items back. The correct model passes every case,
the flawed one fails exactly the cases its flaws touch, for the same reasons as in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examples.bank import agent as bank
from tests.examples.test_bank_example import CASES, FLAW_CASES, records
from tests.support.cli import usersim
from tests.support.responses_stub import ResponsesStub, chat_agent

KEY = "sk-test-responses-secret-4242"
THOUGHT = "PRIVATE-CHAIN-OF-THOUGHT"


def thinking(fn):
    """The bank agent with a reasoning summary on every response (must never reach the user)."""
    answer = chat_agent(fn)

    def respond(messages, tools):
        return {**answer(messages, tools), "reasoning": f"{THOUGHT}: following policy.md step by step"}

    return respond


def run_bank(agent_fn, out: Path, *extra: str, spec: str = "openai-responses:bank-model"):
    with ResponsesStub(api_key=KEY, responder=thinking(agent_fn)) as stub:
        env = {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": KEY, "USERSIM_LLM_BACKOFF_S": "0.01"}
        res = usersim(
            "run", CASES, *extra, "--agent", spec, "--out", str(out), "--no-progress", env=env, check=False
        )
        return res, records(out), list(stub.requests)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {
        name: run_bank(fn, tmp_path_factory.mktemp(name))
        for name, fn in (("correct", bank.correct), ("flawed", bank.flawed))
    }


def test_correct_model_passes_every_bank_case(runs):
    res, recs, _ = runs["correct"]
    assert len(recs) == 10
    assert {k: r["status"] for k, r in recs.items() if r["status"] != "passed"} == {}, res.stderr
    assert res.returncode == 0
    for r in recs.values():
        fs = next(v for v in r["verdicts"] if v["judge"] == "final_state")
        assert fs["verdict"] == "pass" and "nothing else changed" in fs["reason"]
        assert r["stop_reason"] == "goal_met"


def test_flawed_model_fails_the_cases_its_flaws_touch_for_the_agents_fault(runs):
    res, recs, _ = runs["flawed"]
    assert res.returncode == 1
    failed = {k for k, r in recs.items() if r["status"] != "passed"}
    assert failed == set(FLAW_CASES)
    for case_id, evidence in FLAW_CASES.items():
        reasons = " | ".join(v["reason"] for v in recs[case_id]["verdicts"] if v["verdict"] == "fail")
        assert evidence in reasons, (case_id, reasons)
        assert recs[case_id]["blame"] == "agent"


def test_turns_chain_on_the_previous_response_and_send_only_new_items(runs):
    _, recs, requests = runs["correct"]
    chained = [r for r in requests if r.get("previous_response_id")]
    fresh = [r for r in requests if not r.get("previous_response_id")]
    assert len(fresh) == len(recs)  # one new chain per conversation, then chained calls only
    assert len(chained) > 3 * len(recs)
    for r in chained:
        kinds = {(i.get("type"), i.get("role")) for i in r["input"]}
        # never the earlier conversation again: only the user's new message or the tool results
        assert kinds <= {("message", "user"), ("function_call_output", None)}, kinds
        assert "Today is 2026-04-07" in r["instructions"]  # instructions resent every call
    outputs = [i for r in chained for i in r["input"] if i["type"] == "function_call_output"]
    assert any('"blocked"' in i["output"] for i in outputs)  # the sandbox's real result went back
    tools = requests[0]["tools"]
    assert {t["name"] for t in tools} >= {"block_card", "verify_customer", "open_dispute"}
    assert all(t["type"] == "function" and "parameters" in t and "function" not in t for t in tools)


def test_reasoning_never_reaches_the_transcript_and_usage_is_recorded(runs, tmp_path):
    _, recs, _ = runs["correct"]
    for r in recs.values():
        assert THOUGHT not in json.dumps(r["transcript"])
        agent = r["usage"]["agent"]
        assert agent["calls"] >= 3 and agent["prompt_tokens"] > 0 and agent["completion_tokens"] > 0
        calls = [tc["name"] for m in r["transcript"] for tc in m.get("tool_calls") or []]
        assert "get_customer" in calls


def test_the_api_key_never_reaches_results_or_logs(runs, tmp_path_factory):
    for name in ("correct", "flawed"):
        res, recs, _ = runs[name]
        assert KEY not in res.stdout + res.stderr
        assert KEY not in json.dumps(recs)


def test_state_full_sends_the_whole_conversation_unstored(tmp_path):
    res, recs, requests = run_bank(
        bank.correct, tmp_path, "--id", "BANK-02", spec="openai-responses:bank-model?state=full"
    )
    assert recs["BANK-02"]["status"] == "passed", res.stderr
    assert all(not r.get("previous_response_id") and r["store"] is False for r in requests)
    last = requests[-1]["input"]
    assert any(i.get("role") == "assistant" for i in last)
    assert any(i["type"] == "function_call" for i in last) and any(
        i["type"] == "function_call_output" for i in last
    )


def test_run_help_lists_the_new_schemes():
    out = usersim("run", "--help").stdout
    assert "openai-responses:MODEL[?options]   a model behind the OpenAI Responses API" in out
    assert "a2a:URL[?options]                  an A2A agent; runs its own tools" in out
