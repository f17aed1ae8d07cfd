"""End to end through the CLI: demo, run, resume, rescore, promote, secrets."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO, usersim

DEMO_IDS = {"B1-EI-01", "B1-CL-01", "B1-IF-01", "B1-MR-02", "C2-TD-04"}


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    usersim("demo", "--out", str(out))
    return out


def test_demo_writes_the_five_cases_with_transcripts_and_reasons(demo_dir):
    recs = records(demo_dir)
    assert {r["case_id"] for r in recs} == DEMO_IDS
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids))
    for r in recs:
        assert r["status"] in {"passed", "failed", "error", "unjudged"}
        assert r["score"] is None or 0 <= r["score"] <= 1
        assert isinstance(r["turns"], int) and r["turns"] >= 1
        assert r["transcript"] and all({"role", "content"} <= set(m) for m in r["transcript"])
        assert r["verdicts"] and all(
            v["reason"] and v["verdict"] in {"pass", "fail", "inconclusive", "unjudged", "error"}
            for v in r["verdicts"]
        )
        assert {"length", "position", "group", "repeat"} <= set(r["variant"])
    assert (demo_dir / "summary.json").is_file() and (demo_dir / "report.html").is_file()


def test_demo_reference_agent_passes_rule_checked_cases(demo_dir):
    by_case: dict[str, list[dict]] = {}
    for r in records(demo_dir):
        by_case.setdefault(r["case_id"], []).append(r)
    for cid in ("B1-EI-01", "B1-CL-01", "B1-IF-01", "B1-MR-02"):
        for r in by_case[cid]:
            rule = [v for v in r["verdicts"] if v["judge"] not in ("llm_rubric", "human")]
            assert all(v["verdict"] == "pass" for v in rule if v.get("counts_toward_status", True)), (
                cid,
                rule,
            )
    ei = by_case["B1-EI-01"][0]
    call = next(m for m in ei["transcript"] if m.get("tool_calls"))["tool_calls"][0]
    assert call["name"] == "search_flights" and call["arguments"]["passengers"] == 2
    organic = by_case["C2-TD-04"][0]
    assert organic["stop_reason"] == "goal_met", organic["stop_detail"]
    assert organic["turns"] > 2


def test_llm_judged_criteria_without_judge_are_unjudged_not_passed(demo_dir):
    organic = next(r for r in records(demo_dir) if r["case_id"] == "C2-TD-04")
    llm = [v for v in organic["verdicts"] if v["judge"] == "llm_rubric"]
    assert llm and all(v["verdict"] == "unjudged" for v in llm)
    assert organic["status"] in ("unjudged", "failed")
    assert organic["status"] != "passed"


def test_python_agent_failure_is_an_error_record_not_a_crash(tmp_path):
    out = tmp_path / "run"
    res = usersim(
        "run",
        "--id",
        "B1-EI-01",
        "--id",
        "B1-CL-01",
        "--agent",
        "python:tests.integration.toy_agents:crashing_agent",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    assert res.returncode == 1  # errored conversations fail the run (CI)
    recs = records(out)
    assert len(recs) >= 2 and all(r["stop_reason"] == "agent_error" for r in recs)
    assert all("agent exploded" in r["stop_detail"] for r in recs)
    assert all(r["status"] in ("error", "failed") for r in recs)
    assert "report.html" in res.stdout


def test_weak_agent_fails_with_reasons(tmp_path):
    out = tmp_path / "weak"
    res = usersim(
        "run",
        "--id",
        "B1-EI-01",
        "--agent",
        "python:tests.integration.toy_agents:echo_agent",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    assert (
        res.returncode == 1
        and "2 of 2 conversation(s) failed or errored; pass rate 0/2 = 0.0%: exit 1" in res.stderr
    )
    for r in records(out):
        assert r["status"] == "failed"
        fail = [v for v in r["verdicts"] if v["verdict"] == "fail"]
        assert any("search_flights" in v["reason"] for v in fail)


def test_resume_keeps_finished_records_and_runs_only_missing(tmp_path):
    out = tmp_path / "r"
    usersim("run", "--id", "B1-CL-01", "--id", "B1-IF-01", "--out", str(out), "--no-progress")
    first = {r["id"]: r for r in records(out)}
    # without --resume an existing run directory is refused (nothing is overwritten)
    again = usersim("run", "--id", "B1-CL-01", "--out", str(out), "--no-progress", check=False)
    assert again.returncode != 0 and "--resume" in again.stderr
    # simulate a crash that lost one conversation
    lost = sorted(first)[0]
    db = sqlite3.connect(out / "results.sqlite")
    db.execute("DELETE FROM records WHERE id = ?", (lost,))
    db.commit()
    db.close()
    usersim("run", "--id", "B1-CL-01", "--id", "B1-IF-01", "--out", str(out), "--resume", "--no-progress")
    second = {r["id"]: r for r in records(out)}
    assert set(second) == set(first)
    for rid, rec in second.items():
        if rid != lost:
            assert (
                rec["started_at"] == first[rid]["started_at"]
                and rec["duration_s"] == first[rid]["duration_s"]
            )


def test_rescore_rejudges_without_rerunning(tmp_path, demo_dir):
    out = tmp_path / "rescored"
    usersim("rescore", str(demo_dir), "--out", str(out))
    before = {r["id"]: r for r in records(demo_dir)}
    after = {r["id"]: r for r in records(out)}
    assert set(before) == set(after)
    for rid in before:
        assert after[rid]["transcript"] == before[rid]["transcript"]
        assert [v["verdict"] for v in after[rid]["verdicts"]] == [
            v["verdict"] for v in before[rid]["verdicts"]
        ]


def test_promote_organic_record_to_static_regression_case(tmp_path, demo_dir):
    rec = next(r for r in records(demo_dir) if r["case_id"] == "C2-TD-04")
    res = usersim("promote", str(demo_dir), rec["id"], "--to", str(tmp_path / "reg"))
    path = Path(res.stdout.strip())
    usersim("validate", str(path))
    out = tmp_path / "replay"
    # C2-TD-04's rubric needs an LLM judge: without one the replay judges nothing (exit 3) unless accepted
    usersim("run", str(path), "--out", str(out), "--no-progress", "--allow-unjudged")
    (replayed,) = records(out)
    users = [m["content"] for m in rec["transcript"] if m["role"] == "user"]
    assert [m["content"] for m in replayed["transcript"] if m["role"] == "user"] == users
    div = next(v for v in replayed["verdicts"] if v["judge"] == "divergence")
    assert div["verdict"] == "pass", div["reason"]


def test_api_keys_never_reach_outputs(tmp_path):
    secret = "sk-test-SECRET-abcdef123456"
    out = tmp_path / "s"
    bad = usersim(
        "run",
        "--id",
        "B1-CL-01",
        "--agent",
        f"reference?api_key={secret}",
        "--out",
        str(out),
        "--no-progress",
        env={"OPENAI_API_KEY": secret},
        check=False,
    )
    assert bad.returncode != 0 and "Unknown agent" in bad.stderr
    assert secret not in bad.stdout + bad.stderr
    usersim(
        "run",
        "--id",
        "B1-CL-01",
        "--agent",
        "python:tests.integration.toy_agents:echo_agent",
        "--out",
        str(out),
        "--no-progress",
        env={"OPENAI_API_KEY": secret},
        check=False,
    )
    assert (out / "results.jsonl").is_file()
    for f in out.rglob("*"):
        if f.is_file():
            assert secret not in f.read_bytes().decode("utf-8", "ignore"), f


def test_demo_flawed_agent_is_caught_by_the_judges(demo_dir):
    flawed = {r["id"]: r for r in records(demo_dir / "flawed")}
    good = {r["id"]: r for r in records(demo_dir)}
    assert set(flawed) == set(good)
    for rid in ("B1-CL-01|group=A,r0", "B1-IF-01|group=A,r0", "B1-MR-02|group=A,r0"):
        assert good[rid]["status"] == "passed" and flawed[rid]["status"] == "failed"
    cl = next(v for v in flawed["B1-CL-01|group=A,r0"]["verdicts"] if v["judge"] == "tool_not_called")
    assert cl["verdict"] == "fail" and "search_flights was called" in cl["reason"]
    assert (
        flawed["B1-EI-01|group=A,r0"]["status"] == "passed"
    )  # a clear request: the flaws do not matter here


def test_bad_specs_fail_fast_with_did_you_mean(tmp_path):
    res = usersim("run", "--id", "B1-EI-01", "--agent", "refrence", "--out", str(tmp_path / "a"), check=False)
    assert res.returncode != 0 and "Unknown agent 'refrence'. Did you mean 'reference'?" in res.stderr
    res = usersim("run", "--id", "C2-TD-04", "--simulator", "rul", "--out", str(tmp_path / "b"), check=False)
    assert res.returncode != 0 and "Unknown simulator 'rul'. Did you mean 'rule'?" in res.stderr
    res = usersim(
        "run",
        "--id",
        "B1-EI-01",
        "--agent",
        "python:tests.integration.toy_agents:echo_agnet",
        "--out",
        str(tmp_path / "c"),
        check=False,
    )
    assert res.returncode != 0 and "Did you mean 'echo_agent'?" in res.stderr
    assert not (tmp_path / "a").exists()  # nothing half-written


def test_console_script_imports_user_agent_from_working_directory(tmp_path):
    import shutil

    (tmp_path / "my_agent.py").write_text(
        "def agent(messages, tools):\n    return {'role': 'assistant', 'content': '请问您从哪里出发、去哪里、哪天、几位？'}\n",
        encoding="utf-8",
    )
    exe = shutil.which("usersim", path=str(Path(sys.executable).parent))
    res = subprocess.run(
        [
            exe,
            "run",
            str(REPO / "usersim" / "cases" / "b1" / "B1-CL-01.yaml"),
            "--agent",
            "python:my_agent:agent",
            "--out",
            "run",
            "--no-progress",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    recs = records(tmp_path / "run")
    assert recs and all(r["status"] == "passed" for r in recs), [r["verdicts"] for r in recs]


def test_extra_judge_on_request_and_unknown_judge_is_refused(tmp_path):
    out = tmp_path / "drift"
    usersim(
        "run", "--id", "C2-TD-04", "--judge", "drift", "--out", str(out), "--no-progress", "--allow-unjudged"
    )
    (rec,) = records(out)
    drift = next(v for v in rec["verdicts"] if v["judge"] == "drift")
    assert drift["details"]["curve"] and drift["counts_toward_status"] is False
    bad = usersim("run", "--id", "C2-TD-04", "--judge", "drfit", "--out", str(tmp_path / "x"), check=False)
    assert bad.returncode != 0 and "Unknown judge 'drfit'. Did you mean 'drift'?" in bad.stderr


def test_demo_refuses_a_folder_it_did_not_write(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    res = usersim("demo", "--out", str(mine), check=False)
    assert res.returncode == 2 and "was not written by `usersim demo`" in res.stderr
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_demo_replaces_its_own_earlier_output(demo_dir):
    first = {p.name for p in demo_dir.iterdir()}
    assert ".usersim-demo" in first and "results.jsonl" in first
    usersim("demo", "--out", str(demo_dir))
    assert len(records(demo_dir)) == len(DEMO_IDS) + sum(1 for c in DEMO_IDS if c.startswith("B1"))
