"""`usersim decay` through the CLI with the reference agent on the real graph: the fifth line
(semantic drift), the seed's strategy comparison table and SLA marks."""

from __future__ import annotations

import json

from tests.support.cli import usersim


def test_the_fifth_decay_line_is_semantic_drift(tmp_path):
    out = tmp_path / "w4"
    res = usersim(
        "decay",
        "--agent",
        "reference:window-4",
        "--tests",
        "memory,drift",
        "--turns",
        "3,8",
        "--repeats",
        "1",
        "--out",
        str(out),
    )
    assert "drift 3:100%  8:0%   stable_lower=8" in res.stdout
    data = json.loads((out / "decay.json").read_text(encoding="utf-8"))
    drift = data["curves"]["drift"]
    assert drift["measure"] == "stable_lower" and data["drift_stable_lower"] == 8
    assert [(p["turns"], p["score"]) for p in drift["points"]] == [(3, 1.0), (8, 0.0)]
    records = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    rec = next(r for r in records if r["case_id"] == "DECAY-drift-08")
    v = next(v for v in rec["verdicts"] if v["judge"] == "drift")
    # the instruction scrolled out of the 4-turn window: the replies lose the flights
    assert v["counts_toward_status"] and v["details"]["threshold"] == 70 and v["details"]["overall"] == 0
    assert rec["turns"] == 9  # instruction, min(8 - 1, 12) = 7 follow-ups, the sum-up request
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "语义漂移检测率（理解一致性保持）" in page and "Decay: token cost" in page


def test_strategy_comparison_table_from_window_full_and_summary_with_an_sla(tmp_path):
    out = tmp_path / "cmp"
    res = usersim(
        "decay",
        "--strategies",
        "full,window-4,summary",
        "--tests",
        "memory,drift",
        "--turns",
        "3,5,8",
        "--repeats",
        "1",
        "--sla",
        "customer_service",
        "--out",
        str(out),
    )
    lines = res.stdout.splitlines()
    table = lines[lines.index(next(x for x in lines if x.startswith("strategy"))) :]
    assert table[1].split() == ["full", "all", "no", "no", ">8", ">8", ">8", ">8", ">8", table[1].split()[-1]]
    assert table[2].split()[:5] == ["window-4", "4", "no", "no", "5"]
    assert table[3].strip() == "BELOW SLA memory: 客服 Agent ≥ 80% @ 10 轮 — below the line at 5, 8 turns"
    data = json.loads((out / "decay.json").read_text(encoding="utf-8"))
    assert data["kind"] == "strategies" and [r["strategy"] for r in data["strategies"]] == [
        "full",
        "window-4",
        "summary",
    ]
    rows = {r["strategy"]: r for r in data["strategies"]}
    # a measured difference: the window forgets the user at 5 turns, the full history never in the sweep
    assert rows["window-4"]["memory_half_life"] == 5 and rows["full"]["memory_half_life"] is None
    assert rows["window-4"]["agent"] == "reference:window-4" and rows["summary"]["window_turns"] == 4
    runs = data["runs"]
    full_tokens = [p["mean_agent_tokens"] for p in runs["full"]["curves"]["memory"]["points"]]
    window_tokens = [p["mean_agent_tokens"] for p in runs["window-4"]["curves"]["memory"]["points"]]
    assert (
        full_tokens[0] == window_tokens[0] and window_tokens[-1] < full_tokens[-1]
    )  # 3 turns fit the window
    assert rows["window-4"]["mean_agent_tokens"] < rows["full"]["mean_agent_tokens"]
    # the sweep stops at 8 < 10 turns: the full history's SLA is not measured, not "met" ...
    mark = runs["full"]["curves"]["memory"]["sla"][0]
    assert mark["met"] is None and mark["checked_turn"] is None and mark["below_turns"] == []
    # ... but the window's curve already fell below the 80% line at 5 and 8 turns: missed
    w = runs["window-4"]["curves"]["memory"]["sla"][0]
    assert w["met"] is False and w["below_turns"] == [5, 8]
    assert runs["window-4"]["sla_violations"] == [
        "memory: 客服 Agent ≥ 80% @ 10 轮 — below the line at 5, 8 turns"
    ]
    for name in ("full", "window-4", "summary"):
        assert (out / name / "decay.json").is_file() and (out / name / "report.html").is_file()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "用户画像注入" in page and "外部记忆" in page and "Token 消耗" in page
    assert "Memory score by turns, per strategy" in page
    assert "客服 Agent ≥ 80% @ 10 轮: BELOW SLA at 5, 8 turns" in page


def test_an_unknown_strategy_fails_before_any_sweep(tmp_path):
    res = usersim("decay", "--strategies", "full,windw-4", "--out", str(tmp_path / "x"), check=False)
    assert res.returncode == 1 and "Unknown option 'windw-4'" in res.stderr
    assert not (tmp_path / "x" / "full").exists()
