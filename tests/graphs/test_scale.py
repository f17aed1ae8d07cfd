"""Many conversations on one machine: at most --concurrency trials exist at a time, nothing of a
finished conversation stays in memory, results.jsonl / summary.json / report.html are streamed
from the store, and the report page of a large run stays bounded and says what it left out."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import usersim
from tests.reports.factory import record
from tests.support.cli import REPO
from tests.support.cli import usersim as cli
from usersim.core.gate import decide
from usersim.core.verdict import Verdict
from usersim.graphs.records_view import StoredRecords
from usersim.graphs.runner import bounded_pool
from usersim.judges.llm_rubric import C1_CRITERION
from usersim.reports.html import TRANSCRIPT_LIMIT
from usersim.reports.summary import build_summary, summarize

AGENTS = "python:tests.graphs.scale_agents"


# --- the worker pool -------------------------------------------------------------------------


async def test_the_pool_holds_at_most_concurrency_trials_and_yields_every_one():
    live, peak, started, consumed, ahead = 0, 0, 0, 0, 0

    async def run_one(trial):
        nonlocal live, peak, started
        started += 1
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0)
        live -= 1
        return f"record of {trial}"

    todo = [(i, f"t{i}") for i in range(50)]
    got = []
    async for ordinal, rec in bounded_pool(todo, 3, run_one):
        consumed += 1
        ahead = max(ahead, started - consumed)  # trials begun but not yet handed to the consumer
        assert len(asyncio.all_tasks()) <= 1 + 3  # this test's task and the three workers
        got.append((ordinal, rec))
    assert sorted(got) == [(i, f"record of t{i}") for i in range(50)]
    assert peak <= 3
    assert ahead <= 2 * 3  # in flight, or finished and waiting in the bounded queue


async def test_a_trial_that_raises_stops_the_pool_and_reaches_the_consumer():
    started = []

    async def run_one(trial):
        started.append(trial)
        await asyncio.sleep(0)
        if trial == 5:
            raise RuntimeError("the store is gone")
        return trial

    with pytest.raises(RuntimeError, match="the store is gone"):
        async for _ in bounded_pool([(i, i) for i in range(100)], 2, run_one):
            pass
    await asyncio.sleep(0)
    assert len(started) < 20  # the remaining trials were never begun
    assert len(asyncio.all_tasks()) == 1  # every worker was cancelled and awaited


def test_a_run_never_has_more_than_concurrency_conversations_materialised(tmp_path):
    seen = {"live": 0, "peak": 0, "tasks": 0, "calls": 0}

    async def agent(messages, tools):
        seen["calls"] += 1
        seen["live"] += 1
        seen["peak"] = max(seen["peak"], seen["live"])
        seen["tasks"] = max(seen["tasks"], len(asyncio.all_tasks()))
        await asyncio.sleep(0.01)
        seen["live"] -= 1
        return {"role": "assistant", "content": "好的"}

    # B1-EI-01 runs as skill groups A and B: 20 repeats are 40 conversations
    result = usersim.run("B1-EI-01", agent=agent, repeats=20, concurrency=3, out=tmp_path / "run")
    assert len(result.records) == 40 and seen["calls"] >= 40
    assert seen["peak"] <= 3
    # 40 pending conversations as tasks (what gathering them all made) would be 40+; the pool is
    # the run's own task, its three workers and what each conversation in flight runs on
    assert seen["tasks"] <= 1 + 3 * 4, seen


# --- the summary, streamed ---------------------------------------------------------------------


def _crafted() -> list:
    """Records with everything the summary reads beyond a plain run: LLM judge details, the
    rule-to-LLM re-check, the C1 rubric, judge errors, harness errors, inconclusive, red lines,
    long-context variants, skill groups, usage and context tokens."""
    llm = Verdict(
        judge="llm_rubric",
        verdict="pass",
        criterion="answers the question",
        reason="ok",
        details={
            "samples": 3,
            "models": ["m1", "m2"],
            "agreement": 0.67,
            "per_model": {"m1": {"agreement": 1.0}, "m2": {"agreement": 0.5}},
            "transcript": {"shortened": True},
        },
    )
    split = llm.model_copy(update={"verdict": "inconclusive", "reason": "no majority: 1 pass, 1 fail"})
    recheck = Verdict(
        judge="llm_rubric",
        verdict="fail",
        reason="re-check",
        counts_toward_status=False,
        details={"recheck": True},
    )
    c1 = Verdict(
        judge="llm_rubric",
        verdict="pass",
        criterion=C1_CRITERION,
        reason="4/5",
        details={"total": 4, "dimensions": {"task": 1, "clarity": 1}},
    )
    rule_pass = Verdict(judge="tool_called", verdict="pass", reason="called")
    judge_error = Verdict(judge="keywords", verdict="error", reason="the check raised KeyError")
    unjudged = Verdict(judge="llm_rubric", verdict="unjudged", reason="no judge model")
    measured = {"verbosity": "low", "reveal_policy": "gradually", "user_turns": 3, "mean_chars": 40.0}
    measured |= {"mean_facts_per_turn": 1.0, "max_facts_in_turn": 2}
    traits = Verdict(judge="fidelity.traits", verdict="pass", reason="followed", details=measured)
    late = {"verdict": "fail", "details": measured | {"user_turns": 5, "max_facts_in_turn": 4}}
    return [
        record("B1-EI-09", verdicts=[rule_pass, llm], usage={"judge": {"calls": 3, "prompt_tokens": 900}}),
        record("B1-EI-09", repeat=1, status="failed", verdicts=[rule_pass, split], context_tokens=[10, 40]),
        record("B1-CL-09", verdicts=[rule_pass, recheck], score=0.9),
        record("B1-CL-09", repeat=1, verdicts=[rule_pass, c1], score=1.0),
        record("B1-IF-09", status="error", verdicts=[judge_error]),
        record("B1-IF-09", repeat=1, status="error", verdicts=[], error="agent crashed: ConnectionError"),
        record("B1-MR-09", status="unjudged", verdicts=[rule_pass, unjudged]),
        record("B1-MR-09", repeat=1, status="inconclusive", simulator_suspect=True, blame="simulator"),
        record("B1-RL-09", status="failed", tags=["red_line"], blame="agent"),
        record("C5-LC-09", length="4k", position="beginning", status="passed", score=1.0),
        record("C5-LC-09", length="4k", position="middle", status="failed", score=0.2),
        record("C5-LC-09", length="16k", position="end", status="passed", score=0.8),
        record("B2-SK-09", group="A", status="passed"),
        record("B2-SK-09", group="B", status="failed", triggered=True),
        record("C2-TD-09", persona="p1", verdicts=[traits]),
        record(
            "C2-TD-09", repeat=1, persona="p1", status="failed", verdicts=[traits.model_copy(update=late)]
        ),
    ]


def test_the_streamed_summary_is_the_full_summary_on_a_mixed_run(tmp_path):
    run = usersim.run(
        ["B1-EI-01", "B1-CL-01", "MT-CONF-01", "C2-TD-04"],
        agent="reference:flaw=no-clarify",
        repeats=2,
        out=tmp_path / "run",
    )
    full = list(run.records) + _crafted()
    recheck_id = next(r.id for r in full if r.case_id == "B1-CL-09")  # the one with the re-check verdict
    meta = dict(run.summary["meta"]) | {
        "recheck": {"ids": [recheck_id], "rate": 0.2, "seed": 0, "eligible": {"B1": 1}, "sampled": {"B1": 1}}
    }
    whole = json.dumps(summarize(full, meta).model_dump(mode="json"), ensure_ascii=False, indent=2)
    streamed = json.dumps(build_summary(iter(full), meta), ensure_ascii=False, indent=2)
    assert streamed == whole
    s = json.loads(whole)
    # every part the per-record view must keep is exercised by these records
    assert s["grades"] and s["persona_traits"] and s["c1_rubric"] and s["judging"]["criteria"]
    assert s["recheck"] and s["judging"]["recheck"] and s["errors"] and s["unjudged"]
    assert s["long_context"]["cases"] and s["skill_impact"]["cases"] and s["repeats"]["groups"]
    assert s["token_growth"] and s["usage"] and s["inconclusive"] and s["red_line_hits"]
    assert {r["status"] for r in map(lambda r: r.model_dump(), full)} == {
        "passed",
        "failed",
        "error",
        "unjudged",
        "inconclusive",
    }


def test_the_run_summary_is_what_the_report_command_rebuilds_from_results_jsonl(tmp_path):
    out = tmp_path / "run"
    run = usersim.run(["B1-EI-01", "C2-TD-04"], agent="reference", repeats=2, out=out)
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    cli("report", str(out))
    assert json.loads((out / "summary.json").read_text(encoding="utf-8")) == written
    assert written == summarize(list(run.records), written["meta"], run_dir=out).model_dump(mode="json")


# --- the records a run returns -------------------------------------------------------------


def test_run_result_records_are_a_lazy_view_with_the_gate_of_the_full_records(tmp_path):
    result = usersim.run(["B1-EI-01", "B1-EI-04"], agent="reference", repeats=3, out=tmp_path / "run")
    view = result.records
    assert isinstance(view, StoredRecords) and len(view) == 2 * 2 * 3  # skill groups A and B
    full = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text("utf-8").splitlines()]
    assert [r.id for r in view] == [r["id"] for r in full]  # plan order, streamed
    assert view[2].id == full[2]["id"] and [r.id for r in view[1:3]] == [r["id"] for r in full[1:3]]
    for strict in (False, True):
        assert result.gate(strict=strict) == decide(list(view), strict=strict)
    assert result.counts == {s: sum(r["status"] == s for r in full) for s in result.counts}
    assert view == list(view)


# --- resume after a killed run ---------------------------------------------------------------


def _stored(out: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_resume_after_a_killed_run_keeps_finished_records_and_duplicates_none(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--id", "B1-EI-01", "--repeats", "8", "--concurrency", "2", "--agent", f"{AGENTS}:slow"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "usersim", *args, "--out", str(out), "--no-progress"],
        cwd=REPO,
        env={**os.environ, "SCALE_AGENT_DELAY": "0.5"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while _stored(out) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)  # mid-run: no cleanup, no final outputs
    finally:
        proc.wait()
    db = sqlite3.connect(out / "results.sqlite")
    before = dict(db.execute("SELECT id, record FROM records").fetchall())
    db.close()
    assert 3 <= len(before) < 16, "the run was to be killed mid-way"
    res = cli(*args, "--out", str(out), "--no-progress", "--resume", check=False)
    assert res.returncode == 1, res.stderr  # the slow agent fails the case: exit 1, not a crash
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == len(set(ids)) == 16  # every trial once, though the killed run appended some
    assert ids == [f"B1-EI-01|group={g},r{i}" for g in "AB" for i in range(8)]  # plan order
    after = {json.loads(line)["id"]: line for line in lines}
    for rid, text in before.items():  # the finished ones were kept as they were, not run again
        assert json.loads(after[rid]) == json.loads(text)
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["totals"]["records"] == 16


# --- the report page of a large run ----------------------------------------------------------


def test_the_report_of_a_large_run_is_bounded_and_says_what_it_left_out(tmp_path):
    out = tmp_path / "run"
    n = TRANSCRIPT_LIMIT + 100  # B1-EI-01 runs as skill groups A and B: n / 2 repeats
    res = cli(
        "run", "--id", "B1-EI-01", "--repeats", str(n // 2), "--concurrency", "16", "--agent", f"{AGENTS}:quick",
        "--out", str(out), "--no-progress", check=False,
    )  # fmt: skip
    assert res.returncode == 1, res.stderr  # every conversation failed
    page = (out / "report.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["totals"]["records"] == n and summary["totals"]["failed"] == n  # the summary: all
    shown = page.count('<details class="rec" ')
    assert shown == TRANSCRIPT_LIMIT, shown
    assert f"Transcripts ({TRANSCRIPT_LIMIT} of {n})" in page
    assert f"Left out: {n - TRANSCRIPT_LIMIT} ({n - TRANSCRIPT_LIMIT} not passed, 0 passed)" in page
    one = len(page) / shown
    assert len(page) < one * (TRANSCRIPT_LIMIT + 20)  # bounded by the shown transcripts, not the run
    cli("report", str(out))  # the rebuild from results.jsonl keeps the same bound
    again = (out / "report.html").read_text(encoding="utf-8")
    assert again.count('<details class="rec" ') == TRANSCRIPT_LIMIT and "Left out: 100" in again


def test_a_large_run_shows_every_non_passing_conversation_first_and_a_spread_of_passed():
    from usersim.reports.html import render_report

    records = [
        record("B1-EI-01", repeat=i, status="failed" if i % 50 == 0 else "passed") for i in range(1000)
    ]
    summary = build_summary(records, {"run_id": "big"})
    page = render_report(records, summary)
    failed = [r.id for r in records if r.status == "failed"]
    assert all(f"<b>{rid}</b>" in page for rid in failed)
    assert page.count('<details class="rec" ') == TRANSCRIPT_LIMIT
    assert "Left out: 800 (0 not passed, 800 passed)" in page
