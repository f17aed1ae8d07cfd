"""Through the CLI: status and blame decided by the graph's finalize node, and charged to whoever
caused them — an agent crash, the case's code, a simulator that leaked (resimulated), an adapter
misconfigured before any conversation; rescore decides the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.integration import finalize_plugins
from tests.support.cli import usersim

PERSONA = {
    "id": "fin-user",
    "name": "Fin",
    "language": "en",
    "identity": "A traveller who wants one thing looked up.",
    "opening_message": "Hi, can you search the web for the museum's opening hours?",
    "goal": {
        "description": "Get the museum's opening hours.",
        "required": ["hours"],
        "deliverable_keywords": {"hours": ["open", "hours"]},
    },
}
ORGANIC = {
    "id": "FIN-01",
    "dimension": "C2",
    "title": "one search",
    "mode": "organic",
    "language": "en",
    "persona": "../personas/fin-user.yaml",
    "max_turns": 3,
    "tools": ["web_search"],
    "judging": {"scoring": {"methods": ["auto"]}, "checks": [{"tool_called": {"tool": "web_search"}}]},
}
STATIC = {
    "id": "FIN-02",
    "dimension": "B1",
    "title": "a user tool",
    "mode": "static",
    "tools": ["crashing_lookup"],
    "input": {"message": "Which plan am I on?"},
    "judging": {"scoring": {"methods": ["auto"]}, "checks": [{"tool_called": {"tool": "crashing_lookup"}}]},
}

SEARCH = STATIC | {
    "tools": ["web_search"],
    "judging": {"scoring": {"methods": ["auto"]}, "checks": [{"tool_called": {"tool": "web_search"}}]},
}


@pytest.fixture
def plugins(monkeypatch):
    finalize_plugins.register(monkeypatch)


def write_case(tmp_path: Path, case: dict) -> Path:
    folder = tmp_path / "cases"
    folder.mkdir(exist_ok=True)
    (tmp_path / "personas").mkdir(exist_ok=True)
    (tmp_path / "personas" / "fin-user.yaml").write_text(yaml.safe_dump(PERSONA), encoding="utf-8")
    path = folder / f"{case['id']}.yaml"
    path.write_text(yaml.safe_dump(case), encoding="utf-8")
    return path


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def run(tmp_path: Path, case: dict, *args: str):
    out = tmp_path / "out"
    res = usersim(
        "run", str(write_case(tmp_path, case)), "--out", str(out), "--no-progress", *args, check=False
    )
    return res, out


def test_an_agent_crash_is_an_error_blamed_on_the_agent_with_its_traceback(tmp_path):
    res, out = run(
        tmp_path,
        SEARCH,
        "--agent",
        "python:tests.integration.toy_agents:crashing_agent",
    )
    (rec,) = records(out)
    assert (rec["status"], rec["blame"], rec["stop_reason"]) == ("error", "agent", "agent_error")
    assert rec["stop"]["blame"] == "agent"
    # the agent's own frames, not the harness's
    assert "in crashing_agent" in rec["traceback"] and "RuntimeError: agent exploded" in rec["traceback"]
    # the console shows the crash, not the failed check on the cut-short transcript
    line = next(x for x in res.stdout.splitlines() if x.startswith("FIN-02"))
    assert "agent_error: Agent python:tests.integration.toy_agents:crashing_agent raised RuntimeError" in line
    assert "tool_called" not in line
    assert "in crashing_agent" in res.stdout and "RuntimeError: agent exploded" in res.stdout
    assert res.returncode == 1


def test_a_case_error_from_a_user_tool_is_an_error_blamed_on_the_case(tmp_path, plugins):
    res, out = run(tmp_path, STATIC, "--agent", "python:tests.integration.finalize_plugins:calls_lookup")
    (rec,) = records(out)
    assert (rec["status"], rec["blame"], rec["stop_reason"]) == ("error", "case", "case_error")
    assert "tools.py:crashing_lookup: KeyError: 'basic'" in rec["stop_detail"]
    assert "in crashing_lookup" in rec["traceback"] and "KeyError: 'basic'" in rec["traceback"]
    # the agent never saw the crash as a tool result
    assert not any(m["role"] == "tool" and "basic" in m["content"] for m in rec["transcript"])
    assert "case_error: tools.py:crashing_lookup" in res.stdout
    assert res.returncode == 1


def test_a_case_error_from_a_judge_is_an_error_blamed_on_the_case(tmp_path, plugins):
    res, out = run(tmp_path, SEARCH, "--judge", "case_crash")
    (rec,) = records(out)
    assert (rec["status"], rec["blame"], rec["stop_reason"]) == ("error", "case", "case_error")
    assert "judges.py:case_crash" in rec["stop_detail"] and "KeyError" in rec["traceback"]


def test_a_suspect_conversation_is_resimulated_and_the_clean_attempt_decides(tmp_path, plugins):
    res, out = run(
        tmp_path,
        ORGANIC,
        "--agent",
        "python:tests.integration.toy_agents:echo_agent",
        "--simulator",
        "leaky:first",
        "--judge",
        "leak_probe",
    )
    (rec,) = records(out)
    # the echo agent never searches: the clean attempt shows it is the agent's failure
    assert (rec["status"], rec["blame"], rec["simulator_suspect"]) == ("failed", "agent", False)
    assert finalize_plugins.SECRET not in json.dumps(rec["transcript"])
    first, second = rec["attempts"]
    assert first["status"] == "inconclusive" and first["blame"] == "simulator" and first["simulator_suspect"]
    assert "fidelity.pin_leak at user turn 1" in first["suspect_reason"]
    assert any(finalize_plugins.SECRET in m["content"] for m in first["transcript"])  # the leak is kept
    assert second["status"] == "failed" and second["transcript"] is None and second["seed"] != first["seed"]
    assert first["seed"] == rec["seed"]
    resim = [e for e in rec["sim_events"] if e["kind"] == "resimulated"]
    assert (
        len(resim) == 1
        and "attempt 2 of 3" in resim[0]["detail"]
        and "fidelity.pin_leak" in resim[0]["detail"]
    )
    assert res.returncode == 1


def test_when_every_attempt_is_suspect_the_conversation_is_inconclusive_blamed_on_the_simulator(
    tmp_path, plugins
):
    res, out = run(
        tmp_path,
        ORGANIC,
        "--agent",
        "python:tests.integration.toy_agents:echo_agent",
        "--simulator",
        "leaky:always",
        "--judge",
        "leak_probe",
        "--resimulate",
        "1",
    )
    (rec,) = records(out)
    assert (rec["status"], rec["blame"], rec["simulator_suspect"]) == ("inconclusive", "simulator", True)
    assert [a["status"] for a in rec["attempts"]] == ["inconclusive", "inconclusive"]
    assert "simulator-suspect in every attempt: fidelity.pin_leak" in res.stdout


def test_an_advisory_fidelity_failure_never_excuses_a_failing_agent(tmp_path, plugins):
    res, out = run(
        tmp_path,
        ORGANIC,
        "--agent",
        "python:tests.integration.toy_agents:echo_agent",
        "--simulator",
        "leaky:always",
        "--judge",
        "leak_probe_advisory",
    )
    (rec,) = records(out)
    leak = next(v for v in rec["verdicts"] if v["judge"] == "fidelity.pin_leak")
    assert leak["verdict"] == "fail"  # shown ...
    assert (rec["status"], rec["blame"], rec["simulator_suspect"]) == (
        "failed",
        "agent",
        False,
    )  # ... not excusing
    assert len(rec["attempts"]) == 1  # nothing to resimulate
    assert res.returncode == 1


@pytest.mark.parametrize(
    ("simulator", "judge", "expected"),
    [
        ("leaky:first", "leak_probe", ("failed", "agent")),
        ("leaky:always", "leak_probe", ("inconclusive", "simulator")),
        ("leaky:never", "leak_probe", ("failed", "agent")),
    ],
)
def test_rescore_reproduces_the_status_and_blame_of_the_run(tmp_path, plugins, simulator, judge, expected):
    args = (
        "--agent",
        "python:tests.integration.toy_agents:echo_agent",
        "--simulator",
        simulator,
        "--judge",
        judge,
    )
    _, out = run(tmp_path, ORGANIC, *args)
    (before,) = records(out)
    assert (before["status"], before["blame"]) == expected
    usersim("rescore", str(out), "--out", str(tmp_path / "again"))
    (after,) = records(tmp_path / "again")
    keys = ("status", "blame", "simulator_suspect", "suspect_reason", "stop", "score")
    assert {k: after[k] for k in keys} == {k: before[k] for k in keys}
    assert [(a["status"], a["blame"]) for a in after["attempts"]] == [
        (a["status"], a["blame"]) for a in before["attempts"]
    ]
    assert after["sim_events"] == before["sim_events"]


def test_rescore_keeps_an_agent_crash_blamed_on_the_agent(tmp_path):
    _, out = run(
        tmp_path,
        SEARCH,
        "--agent",
        "python:tests.integration.toy_agents:crashing_agent",
    )
    usersim("rescore", str(out), "--out", str(tmp_path / "again"), check=False)
    (after,) = records(tmp_path / "again")
    assert (after["status"], after["blame"]) == ("error", "agent") and "agent exploded" in after["traceback"]


def test_thread_mode_without_a_checkpointer_exits_2_before_any_conversation(tmp_path):
    res, out = run(
        tmp_path,
        SEARCH,
        "--agent",
        "langgraph:tests.adapters.scripted_agents:make_graph?mode=thread",
    )
    assert res.returncode == 2
    assert "mode=thread needs a LangGraph graph compiled with a checkpointer" in res.stderr
    assert not (out / "results.jsonl").exists()


def test_thread_mode_with_a_checkpointer_still_runs(tmp_path):
    res, out = run(
        tmp_path,
        SEARCH,
        "--agent",
        "langgraph:tests.adapters.scripted_agents:make_thread_graph?mode=thread",
    )
    assert res.returncode in (0, 1) and len(records(out)) == 1
