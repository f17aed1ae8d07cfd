"""Decay sweeps (seed 003): the scripted test conversations and the summary math."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from usersim.core.registry import UnknownNameError
from usersim.graphs.decay import (
    CONFLICT_LEVELS,
    DEFAULT_TURNS,
    build_decay_case,
    build_decay_cases,
    expected_recall,
    parse_decay_id,
    run_decay,
    summarize_decay,
)

SYSTEM = {
    "context_strategy": "window",
    "window_turns": 4,
    "profile_injection": False,
    "external_memory": False,
    "temperature": 0.3,
}


def rec(case_id, score, status="passed", **kw):
    return {"case_id": case_id, "score": score, "status": status, "system_config": SYSTEM, **kw}


def test_memory_case_is_the_seed_script_at_n_turns():
    c = build_decay_case("memory", 5)
    assert c.id == "DECAY-memory-05" and c.mode == "static" and c.dimension == "MT"
    assert c.input.message == "我叫张三，在北京工作，做测试工程师的。"
    # seed 003's code: n - 1 small-talk turns after the probe, then the question
    assert len(c.input.script) == 5 and c.input.script[-1] == "你还记得我叫什么名字吗？在哪里工作？做什么的？"
    check = c.judging.checks[0]["memory_recall"]
    assert [f["expected"] for f in check["facts"]] == ["张三", "北京", "测试工程师"]
    assert check["threshold"] == 0.7  # seed 003: 4-6 turns should recall >= 70%
    # the small talk never mentions the planted facts
    assert not any(w in t for t in c.input.script[:-1] for w in ("张三", "北京", "测试"))


def test_fillers_are_seeded_and_never_arithmetic_for_calculation_probes():
    a, b = build_decay_case("memory", 20, seed=1), build_decay_case("memory", 20, seed=2)
    assert (
        a.input.script != b.input.script
        and a.input.script == build_decay_case("memory", 20, seed=1).input.script
    )
    # 20 turns: the seed caps the small talk at its 12 filler topics, none repeated
    assert len(a.input.script[:-1]) == 12 and len(set(a.input.script[:-1])) == 12
    sw = build_decay_case("switch", 12)
    assert sw.input.message == "帮我计算 25*4 等于多少。" and sw.input.script[0] == "给我写一首关于春天的诗。"
    assert sw.input.script[-1] == "刚才计算的结果是多少？"
    assert not any("计算" in t for t in sw.input.script[1:-1])
    assert sw.judging.checks == [{"keywords": {"any": ["100"]}}]
    assert (
        len(sw.input.script) == 11 + 1
    )  # the poem is one of the n - 1 = 11 turns between A and the way back


def test_conflict_levels():
    cases = build_decay_cases(["conflict"], [3, 8])
    assert [parse_decay_id(c.id) for c in cases[:4]] == [("conflict", lv, 3) for lv in CONFLICT_LEVELS]
    goal = build_decay_case("conflict:goal", 8)
    assert goal.input.message == "帮我分析华东区销售额。" and goal.input.script[-1] == "不对，改成分析全国。"
    assert goal.judging.checks == [{"keywords": {"any": ["全国", "整体"], "none": ["华东"]}}]
    assert len(build_decay_cases(["memory", "reference", "switch", "conflict"], DEFAULT_TURNS)) == 8 * 7


def test_bad_names_suggest_fixes():
    with pytest.raises(UnknownNameError, match="Unknown decay test 'memroy'. Did you mean 'memory'?"):
        build_decay_case("memroy", 5)
    with pytest.raises(UnknownNameError, match="Unknown conflict level 'gaol'. Did you mean 'goal'?"):
        build_decay_case("conflict:gaol", 5)
    with pytest.raises(ValueError, match="only conflict has levels"):
        build_decay_case("memory:goal", 5)
    with pytest.raises(ValueError, match="at least 3"):
        build_decay_case("memory", 2)


def test_expected_recall_table():
    assert [expected_recall(n) for n in (3, 5, 8, 12, 20)] == [0.9, 0.7, 0.5, 0.3, 0.3]


def test_summary_half_life_fail_point_and_stable_intervals():
    records = [
        rec("DECAY-memory-03", 1.0),
        rec("DECAY-memory-03", 1.0),
        rec("DECAY-memory-05", 0.67),
        rec("DECAY-memory-05", 0.33),  # mean 0.5: not below half
        rec("DECAY-memory-08", 0.33),
        rec("DECAY-memory-08", 0.17),  # mean 0.25 -> half-life 8
        rec("DECAY-memory-12", 0.0),
        rec("DECAY-memory-12", None, "unjudged"),  # unjudged is left out
        rec("DECAY-reference-03", None, "passed"),
        rec("DECAY-reference-05", 1.0),
        rec("DECAY-reference-08", 1.0),
        rec("DECAY-reference-12", 0.0),  # step: fail point 12
        rec("DECAY-switch-03", 1.0),
        rec("DECAY-switch-12", 1.0),
        *[rec(f"DECAY-conflict-{lv}-05", s) for lv, s in zip(CONFLICT_LEVELS, [1, 1, 0, 0])],
        *[rec(f"DECAY-conflict-{lv}-08", s) for lv, s in zip(CONFLICT_LEVELS, [1, 0, 0, 0])],
        rec("C5-EI-01", 0.0),  # not a decay case
    ]
    s = summarize_decay(records, agent="reference:window-4")
    assert (s.memory_half_life, s.reference_fail_point, s.switch_stable_lower, s.conflict_stable_lower) == (
        8,
        12,
        None,
        8,
    )
    mem = s.curves["memory"]
    assert [(p.turns, p.score, p.runs) for p in mem.points] == [
        (3, 1.0, 2),
        (5, 0.5, 2),
        (8, 0.25, 2),
        (12, 0.0, 1),
    ]
    assert [p.meets_expectation for p in mem.points] == [True, False, False, False]
    assert s.curves["reference"].points[0].score == 1.0  # passed without a score counts as 1
    assert s.curves["conflict"].points[0].score == 0.5 and s.curves["conflict"].measure == "stable_lower"
    assert all(c.system == SYSTEM for c in s.curves.values()) and s.system == SYSTEM


def test_run_decay_with_a_fake_runner_writes_decay_json(tmp_path):
    seen = {}

    async def fake_runner(cases, *, agent, out_dir, repeats, seed, concurrency, resume):
        seen.update(n=len(cases), agent=agent, repeats=repeats)
        out = []
        for c in cases:
            test, _, n = parse_decay_id(c.id)
            score = 1.0 if test != "memory" else (1.0 if n <= 5 else 0.0)  # a window of ~5 turns
            out += [rec(c.id, score, context_tokens=[50 * n]) for _ in range(repeats)]
        return out

    s = asyncio.run(
        run_decay(
            agent="reference:window-5",
            out_dir=str(tmp_path),
            turns=[3, 5, 8],
            tests=["memory", "switch"],
            repeats=2,
            runner=fake_runner,
        )
    )
    assert seen == {"n": 6, "agent": "reference:window-5", "repeats": 2}
    data = json.loads((tmp_path / "decay.json").read_text())
    assert data["memory_half_life"] == 8 and data["switch_stable_lower"] is None
    assert data["curves"]["memory"]["system"] == SYSTEM
    assert data["curves"]["memory"]["points"][2]["mean_context_tokens"] == 400
    assert s.agent == "reference:window-5"


def test_cli_decay(tmp_path, monkeypatch):
    from usersim.cli.longctx import decay
    from usersim.graphs import runner as graphs_runner

    async def fake_run_cases(cases, **kw):
        return [rec(c.id, 0.0 if "memory" in c.id else 1.0) for c in cases]

    monkeypatch.setattr(graphs_runner, "run_cases", fake_run_cases)
    res = CliRunner().invoke(
        decay,
        ["--agent", "reference", "--turns", "3,5", "--tests", "memory,reference", "--out", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
    assert "half_life=3" in res.output and (tmp_path / "decay.json").is_file()
    bad = CliRunner().invoke(decay, ["--agent", "reference", "--tests", "memroy", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "Did you mean 'memory'?" in bad.output
    called = []
    monkeypatch.setattr(graphs_runner, "run_cases", lambda *a, **k: called.append(1))
    nope = CliRunner().invoke(decay, ["--agent", "refrence", "--turns", "3", "--out", str(tmp_path / "x")])
    assert nope.exit_code == 1 and "Unknown agent 'refrence'. Did you mean 'reference'?" in nope.output
    assert called == []  # a bad SPEC fails before any conversation runs


def test_decay_through_the_real_graph_with_the_reference_agent(tmp_path):
    """End to end: scripted cases run by graphs.runner, decay.json written, report rebuilt with it."""
    s = asyncio.run(
        run_decay(agent="reference:window-2", out_dir=str(tmp_path), turns=[3], tests=["conflict"], repeats=1)
    )
    point = s.curves["conflict"].points[0]
    assert (point.turns, point.runs) == (3, 4)  # the four conflict levels, averaged as the seed does
    assert s.system.get("window_turns") == 2 and s.curves["conflict"].system == s.system
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted(r["case_id"] for r in records) == [
        f"DECAY-conflict-{lv}-03" for lv in sorted(CONFLICT_LEVELS)
    ]
    # probe, n - 1 = 2 small-talk turns, change of instruction: answered live
    assert all(r["turns"] == 4 for r in records)
    page = (tmp_path / "report.html").read_text()
    assert "Decay curves" in page and "min(n - 1, 12) small-talk turns" in page


def test_decay_tells_window_from_full_history_and_profile(tmp_path):
    """Seed 003's point: the curve measures the configuration. A 4-turn window forgets the user by
    turn 8; the same window with profile injection, or the full history, does not."""
    half_life = {}
    for spec in ("reference", "reference:window-4", "reference:window-4,profile"):
        s = asyncio.run(
            run_decay(
                agent=spec,
                out_dir=str(tmp_path / spec.replace(":", "_")),
                turns=[3, 8],
                tests=["memory"],
                repeats=1,
            )
        )
        half_life[spec] = s.memory_half_life
        assert s.curves["memory"].points[0].score == 1.0  # 3 turns: everyone remembers
    assert half_life == {"reference": None, "reference:window-4": 8, "reference:window-4,profile": None}


async def _decided(case, reply):
    """Every check of a decay case on a one-reply conversation: [(passed, reason)]."""
    from tests.judges.helpers import bot, state, user
    from usersim.judges.checks import run_check

    t = [user(case.input.message), bot("好的。"), user(case.input.script[-1]), bot(reply)]
    out = []
    for spec in case.judging.checks:
        v = await run_check(spec, transcript=t, case=case, state=state(t))
        out.append((v.verdict, v.reason))
    return out


@pytest.mark.parametrize(
    ("reply", "ok"),
    [
        ("好的，我来分析这份销售数据的月度趋势。", True),
        ("可以，请把数据发给我。", True),  # seed 003: 数据 counts
        ("好的，我先分析一下。", True),  # seed 003: 分析 counts
        ("你指的是什么？", False),
    ],
)
async def test_reference_check_is_the_seeds(reply, ok):
    c = build_decay_case("reference", 5)
    assert c.judging.checks == [{"keywords": {"any": ["销售", "数据", "分析"]}}]
    assert [v for v, _ in await _decided(c, reply)] == ["pass" if ok else "fail"]


@pytest.mark.parametrize(
    ("reply", "ok"),
    [
        ("好的，5*6 = 30。", True),
        ("改为计算 5 × 6，结果是 30。", True),
        ("6×5=30", True),
        ("2+3=5；改成 5*6 的话是 30。", False),  # the old answer is still there: a stray 5
        ("30（刚才的结果是 5）", False),
        ("好的，结果是 5。", False),  # no 30
    ],
)
async def test_instruction_conflict_needs_30_and_no_stray_5(reply, ok):
    c = build_decay_case("conflict:instruction", 3)
    verdicts = await _decided(c, reply)
    assert len(verdicts) == 2  # 30 present; no 5 once 5*6 is removed (seed 003 test_conflict)
    assert all(v == "pass" for v, _ in verdicts) is ok, verdicts
