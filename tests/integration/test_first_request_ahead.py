"""`usersim run` sends its first conversation's first model request ahead while the conversation
graph imports (graphs.opening, llm.ahead): each run here is a real `usersim run` process against
the local OpenAI-compatible stub over real HTTP, once with the request sent ahead and once with
USERSIM_FIRST_REQUEST_AHEAD=0. The model must see the same requests, each once, and the records
must be the same but for the clock."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tests.integration.test_llm_path import Roles
from tests.support.cli import REPO, usersim_process
from tests.support.openai_stub import OpenAIStub, error

SECRET = "sk-stub-SECRET-ahead-0123456789"
NOT_USED = "sent ahead was not used"


def _env(stub: OpenAIStub, ahead: bool, **more: str) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": SECRET,
        "USERSIM_NO_CACHE": "1",
        "USERSIM_LLM_BACKOFF_S": "0.01",
        "USERSIM_FIRST_REQUEST_AHEAD": "1" if ahead else "0",
        **more,
    }


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _run(
    stub: OpenAIStub, args: list[str], out: Path, responder: Any, ahead: bool, **env: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(records, the request bodies the stub received in order, stderr) of one `usersim run`."""
    stub.responder = responder
    stub.requests.clear()
    res = usersim_process(
        "run", *args, "--out", str(out), "--no-progress", env=_env(stub, ahead, **env), check=False
    )
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return _records(out), list(stub.requests), res.stderr


def _clockless(rec: dict[str, Any]) -> dict[str, Any]:
    """A record without what the clock decides: when it started, how long it and its spans took,
    how long the first request had been on its way (the run id carries the start time), and the
    response ids the stub numbers in the order requests arrive (concurrent runs race)."""
    out = {k: v for k, v in rec.items() if k not in ("started_at", "duration_s", "run_id")}
    out["timeline"] = [
        {
            **{k: v for k, v in s.items() if k not in ("start_s", "duration_s")},
            "attrs": {k: v for k, v in s["attrs"].items() if k not in ("sent_ahead_s", "response_id")},
        }
        for s in rec["timeline"]
    ]
    return out


def _sent_ahead(rec: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in rec["timeline"] if s["kind"] == "chat" and "sent_ahead_s" in s["attrs"]]


def _sane_timeline(rec: dict[str, Any]) -> None:
    assert rec["timeline"], rec["id"]
    for s in rec["timeline"]:
        assert s["start_s"] >= 0 and s["duration_s"] >= 0, s


def _both(args: list[str], tmp_path: Path, make_responder: Any, **env: str):
    """The run with the first request sent ahead and without (one stub, so one endpoint in both
    records); asserts what must hold for both."""
    with OpenAIStub() as stub:
        on, on_bodies, on_err = _run(stub, args, tmp_path / "on", make_responder(), True, **env)
        off, off_bodies, off_err = _run(stub, args, tmp_path / "off", make_responder(), False, **env)
    assert on_bodies == off_bodies  # the same requests, in the same order: none sent twice, none lost
    assert [_clockless(r) for r in on] == [_clockless(r) for r in off]
    for rec in on + off:
        _sane_timeline(rec)
    assert NOT_USED not in on_err + off_err
    assert not any(_sent_ahead(r) for r in off)
    return on, on_bodies, off


def test_an_organic_conversation_gets_its_first_reply_from_the_request_sent_ahead(tmp_path):
    """C2-TD-04: the `openai:` simulator says the case's first message, so the agent's first request
    is known before the graph runs; the tool calls, the simulator's turns and the judges follow."""
    args = ["--id", "C2-TD-04", "--agent", "openai:agent-model", "--simulator", "openai:sim-model"]
    args += ["--judge-model", "openai:judge-model"]
    on, bodies, off = _both(args, tmp_path, Roles)
    (rec,) = on
    assert rec["stop_reason"] == "goal_met", rec["stop_detail"]
    (first,) = _sent_ahead(rec)  # the first model call of the conversation, and only that one
    chats = [s for s in rec["timeline"] if s["kind"] == "chat"]
    assert first is chats[0] and first["attrs"]["role"] == "agent" and first["name"] == "agent-model"
    assert first["attrs"]["sent_ahead_s"] > 0
    assert bodies[0]["model"] == "agent-model"
    assert bodies[0]["messages"][-1] == {"role": "user", "content": "我想暑假去日本玩"}
    agent_calls = sum(1 for b in bodies if b["model"] == "agent-model")
    assert rec["usage"]["agent"]["calls"] == agent_calls
    for f in (tmp_path / "on").rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_bytes().decode("utf-8", "ignore")


def _answer(text: str):
    def make():
        return lambda body: {"content": text, "usage": {"prompt_tokens": 120, "completion_tokens": 12}}

    return make


def test_a_replayed_case_sends_its_history_ahead(tmp_path):
    """B1-IF-01 replays a history and its last message; it runs as skill groups A and B: the first
    trial's request goes ahead, the second's is sent by its own node."""
    args = ["--id", "B1-IF-01", "--agent", "openai:agent-model", "--concurrency", "1"]
    on, bodies, _ = _both(args, tmp_path, _answer("京都站附近或四条河原町都很方便"))
    assert len(on) == 2 and len(bodies) == 2
    assert [len(_sent_ahead(r)) for r in on] == [1, 0]
    assert [m["content"] for m in bodies[0]["messages"][1:]] == [
        m["content"] for m in on[0]["transcript"][:3]
    ]  # the history and the message, as the graph replayed them


def test_with_conversations_at_once_the_first_one_gets_the_request_sent_ahead(tmp_path):
    """--concurrency 4: the first trial has the turn until its first model call (core.turns), so
    that call, not another conversation's, is the one answered by the request sent ahead."""
    args = ["--id", "B1-IF-01", "--repeats", "3", "--agent", "openai:agent-model", "--concurrency", "4"]
    with OpenAIStub() as stub:
        on, on_bodies, err = _run(stub, args, tmp_path / "on", _answer("住四条河原町附近")(), True)
        off, off_bodies, _ = _run(stub, args, tmp_path / "off", _answer("住四条河原町附近")(), False)
    key = lambda b: json.dumps(b, sort_keys=True, ensure_ascii=False)  # noqa: E731
    assert len(on_bodies) == 6 and sorted(map(key, on_bodies)) == sorted(map(key, off_bodies))
    assert [_clockless(r) for r in on] == [_clockless(r) for r in off]
    assert [len(_sent_ahead(r)) for r in on] == [1, 0, 0, 0, 0, 0] and NOT_USED not in err


def _failing(status: int, message: str):
    def make():
        def respond(body: dict[str, Any]) -> dict[str, Any]:
            return error(status, message)

        return respond

    return make


def test_a_first_request_sent_ahead_that_fails_fails_the_conversation_as_any_call_would(tmp_path):
    """An outage (500 after the client's retries) is blamed on the infrastructure; a rejected
    request (400, the server echoing the key) on the agent, its message redacted — both as without
    sending ahead, with the same retries at the stub."""
    args = ["--id", "C2-TD-04", "--agent", "openai:agent-model", "--simulator", "openai:sim-model"]
    on, bodies, _ = _both(
        args, tmp_path / "outage", _failing(500, "overloaded"), USERSIM_LLM_MAX_ATTEMPTS="3"
    )
    (rec,) = on
    assert len(bodies) == 3  # one request and its two retries, not six
    assert (rec["status"], rec["blame"], rec["stop_reason"]) == ("error", "infrastructure", "agent_error")
    assert "overloaded" in rec["stop_detail"] and "gave up after 3 attempts" in rec["stop_detail"]
    on, bodies, _ = _both(args, tmp_path / "rejected", _failing(400, f"bad key {SECRET}"))
    (rec,) = on
    assert len(bodies) == 1
    assert (rec["status"], rec["blame"], rec["stop_reason"]) == ("error", "agent", "agent_error")
    assert "HTTP 400" in rec["stop_detail"] and SECRET not in rec["stop_detail"]
    assert SECRET not in json.dumps(rec, ensure_ascii=False)


def test_a_cached_first_request_sent_ahead_is_answered_by_the_cache(tmp_path):
    """With the call cache on, the request sent ahead fills the cache like any call; a second run
    sends the model nothing and records every call as cached."""
    args = ["--id", "C2-TD-04", "--agent", "openai:agent-model", "--simulator", "openai:sim-model"]
    cache = {"USERSIM_NO_CACHE": "0", "USERSIM_CACHE_DIR": str(tmp_path / "cache")}
    with OpenAIStub() as stub:
        first, bodies, _ = _run(stub, args, tmp_path / "a", Roles(), True, **cache)
        off_cache = {**cache, "USERSIM_CACHE_DIR": str(tmp_path / "c2")}
        off, off_bodies, _ = _run(stub, args, tmp_path / "off", Roles(), False, **off_cache)
        again, again_bodies, err = _run(stub, args, tmp_path / "b", Roles(), True, **cache)
    assert bodies == off_bodies and [_clockless(r) for r in first] == [_clockless(r) for r in off]
    assert again_bodies == [] and NOT_USED not in err
    (rec,) = again
    agent = rec["usage"]["agent"]
    assert agent["calls"] == agent["cached_calls"] == first[0]["usage"]["agent"]["calls"]
    (ahead,) = _sent_ahead(rec)
    assert ahead["attrs"]["cached"] is True
    assert rec["transcript"] == first[0]["transcript"]


def test_a_conversation_the_simulator_opens_sends_nothing_ahead(tmp_path):
    """No first message: the simulator's model writes the user's first turn, so the agent's first
    request is not known before the graph runs; the run is what it was."""
    case = yaml.safe_load((REPO / "bench" / "case.yaml").read_text(encoding="utf-8"))
    case["id"] = "AHEAD-SIM-FIRST"
    case["input"] = {}
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(case, allow_unicode=True), encoding="utf-8")
    args = [str(path), "--agent", "openai:agent-model", "--simulator", "openai:sim-model"]
    on, bodies, _ = _both(args, tmp_path, Roles)
    assert bodies[0]["model"] == "sim-model" and not _sent_ahead(on[0])


def _stored(out: Path) -> int:
    try:
        db = sqlite3.connect(out / "results.sqlite")
        try:
            return int(db.execute("SELECT COUNT(*) FROM records").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_resume_sends_the_first_unfinished_conversations_request_ahead(tmp_path):
    """A run killed mid-way and resumed: the resumed run's first conversation (the first one not
    stored) gets its first request sent ahead; every unfinished trial asks the model once."""
    out = tmp_path / "run"
    args = [
        "run",
        "--id",
        "B1-IF-01",
        "--repeats",
        "3",
        "--concurrency",
        "1",
        "--agent",
        "openai:agent-model",
    ]
    slow = {"content": "住四条河原町附近最方便", "delay": 0.4}  # a short answer: failed, but answered
    with OpenAIStub(responder=lambda body: slow) as stub:
        proc = subprocess.Popen(
            [sys.executable, "-m", "usersim", *args, "--out", str(out), "--no-progress"],
            cwd=REPO,
            env={**os.environ, **_env(stub, True)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 300
            while _stored(out) < 2 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait()
        done = _stored(out)
        assert 2 <= done < 6, "the run was to be killed mid-way"
        stub.requests.clear()
        res = usersim_process(
            *args, "--out", str(out), "--no-progress", "--resume", env=_env(stub, True), check=False
        )
        assert res.returncode == 1, res.stderr[-3000:]  # the replies fail the keyword check
        bodies = list(stub.requests)
    assert NOT_USED not in res.stderr
    recs = _records(out)
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) == 6
    assert len(bodies) == 6 - done  # one agent call per unfinished trial, none twice
    # plan order: the killed run stored the first `done` trials; its first and the resumed run's
    # first (the first one not stored) had their first request sent ahead
    assert {r["id"] for r in recs if _sent_ahead(r)} == {ids[0], ids[done]}
