"""Seed cases decide as their seeds say (issue #11): for each case whose checks were fixed, a correct
and a flawed python agent (tests/integration/seed_agents.py) run through `usersim run` in process.
A correct agent is never `failed` (its rule checks all pass; LLM-judged parts stay unjudged without a
judge model); a flawed one is `failed` by the auto criterion the seed decides it with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import usersim

AGENTS = "python:tests.integration.seed_agents:"
# Judges whose verdicts are not rule checks of the case (no LLM is reachable in tests).
NOT_RULES = ("llm_rubric", "human", "fidelity", "divergence", "drift")


def run_case(tmp_path: Path, case: str, agent: str, *extra: str) -> list[dict]:
    out = tmp_path / agent
    usersim(
        "run",
        f"usersim/cases/{case}.yaml",
        "--agent",
        AGENTS + agent,
        "--simulator",
        "rule",
        "--out",
        str(out),
        "--no-progress",
        *extra,
        check=False,
    )
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert records, f"no record for {case} / {agent}"
    return records


def rule_verdicts(record: dict) -> list[dict]:
    return [
        v
        for v in record["verdicts"]
        if not v["judge"].startswith(NOT_RULES) and v.get("counts_toward_status", True)
    ]


def assert_correct(records: list[dict]) -> None:
    for r in records:
        assert r["status"] not in ("failed", "error"), (r["case_id"], r["variant"], rule_verdicts(r))
        rules = rule_verdicts(r)
        assert rules and all(v["verdict"] == "pass" for v in rules), [
            (v["judge"], v["verdict"], v["reason"]) for v in rules
        ]


def assert_flawed(records: list[dict], judge: str, why: str) -> None:
    """Failed, and `judge` failed with `why` in its reason."""
    for r in records:
        assert r["status"] == "failed", (r["case_id"], r["status"], rule_verdicts(r))
        failing = [v for v in rule_verdicts(r) if v["verdict"] == "fail" and v["judge"] == judge]
        assert any(why in v["reason"] for v in failing), [
            (v["judge"], v["verdict"], v["reason"]) for v in rule_verdicts(r)
        ]


C5 = ("--length", "4k")  # one length is enough to decide; the seed's 32k expansion is slower

# case, correct agents, flawed agent, judge that fails it, reason fragment, extra args
CASES = [
    ("c5/C5-LT-01", ["lt01_round_trip", "lt01_two_one_ways"], "lt01_wrong_origin", "tool_called", "origin=广州 (expected place 深圳)", C5),
    ("c1/C1-SF-03", ["sf03_total_price"], "sf03_face_value", "keywords", "missing 行李", ()),
    ("c1/C1-SF-01", ["sf01_short_question"], "sf01_assumes_route", "asked_clarification", "search_flights was called before asking", ()),
    ("c1/C1-SF-07", ["sf07_sourced_times"], "sf07_estimated_times", "estimates", "2 estimated commute times (max 0): \"大约…10 分钟\"", ()),
    ("c1/C1-SB-03", ["sb03_switches_to_drive"], "sb03_gives_up", "tool_called", "travel_mode=TRANSIT (expected DRIVE)", ()),
    ("c1/C1-SM-02", ["sm02_uses_flight_times"], "sm02_no_skill_switch", "skill_triggered", "itinerary-planning was never triggered", ()),
    ("c2/C2-SV-01", ["sv01_states_shortage", "sv01_five_cities"], "sv01_silent_four", "step_completion", "0/2 steps", ()),
    ("c2/C2-TD-04", ["td04_stages_the_plan"], "td04_guesses_everything", "tool_called", "origin=北京 (expected place 上海)", ()),
    ("c2/C2-E2E-04", ["e2e04_guides_and_recommends"], "e2e04_overspends", "constraint", "violating price <= 8000: Apple MacBook Pro 14 M4", ()),
    ("b1/B1-MR-02", ["mr02_kyoto_three_nights"], "mr02_kyoto_one_night", "tool_called", "check_out - check_in = 1 days (expected 3)", ()),
    ("b1/B1-MR-03", ["mr03_weather_only"], "mr03_links_trip", "count", "你端午去厦门的时候", ()),
    ("mt/D-06", ["d06_analyses_expenses"], "d06_asks_back", "graded", "指代未消解 (0 points", ()),
    ("c5/C5-LS-02", ["ls02_uses_map"], "ls02_estimates", "tool_called", "was never called", C5),
    ("c5/C5-LC-01", ["lc01_excludes_apple"], "lc01_recommends_apple", "constraint", "violating brand not_in", C5),
    ("c2/C2-SR-03", ["sr03_table"], "sr03_includes_redmi", "constraint", "Redmi Note 13 (brand=小米)", ()),
    ("mt/D-14", ["d14_hokkaido"], "d14_keeps_osaka", "graded", "部分纠正 (40 points, pass at 80): carried out the new instruction (札幌, 第三天) but kept the old: 环球影城", ()),
    ("mt/D-08", ["d08_hotel"], "d08_restaurant", "graded", "指代未消解 (0 points, pass at 60)", ()),
]  # fmt: skip


@pytest.mark.parametrize(("case", "good", "bad", "judge", "why", "extra"), CASES, ids=[c[0] for c in CASES])
def test_correct_agent_is_never_failed_and_flawed_agent_fails(tmp_path, case, good, bad, judge, why, extra):
    for agent in good:
        assert_correct(run_case(tmp_path, case, agent, *extra))
    assert_flawed(run_case(tmp_path, case, bad, *extra), judge, why)


def test_c1_sf_03_one_way_search_without_passengers_is_not_a_gate(tmp_path):
    (rec,) = run_case(tmp_path, "c1/C1-SF-03", "sf03_total_price")
    call = next(
        t for m in rec["transcript"] for t in (m.get("tool_calls") or []) if t["name"] == "search_flights"
    )
    assert "return_date" not in call["arguments"] and "passengers" not in call["arguments"]
    assert rec["status"] == "unjudged"  # the seed's own criterion is the LLM rubric


def test_c1_sb_03_transit_fails_in_bangkok_on_both_map_tools(tmp_path):
    (rec,) = run_case(tmp_path, "c1/C1-SB-03", "sb03_switches_to_drive")
    results = {
        (m["name"], i): json.loads(m["content"])
        for i, m in enumerate(rec["transcript"])
        if m["role"] == "tool" and m["name"].startswith("compute_google_maps")
    }
    statuses = [
        (name, body.get("status")) for (name, _), body in sorted(results.items(), key=lambda x: x[0][1])
    ]
    assert statuses == [
        ("compute_google_maps_route_matrix", "ZERO_RESULTS"),
        ("compute_google_maps_routes", "ZERO_RESULTS"),  # TRANSIT on the single-route tool too
        ("compute_google_maps_routes", "OK"),  # the DRIVE retry answers
    ]


def test_c1_sm_02_flight_times_ignored_is_left_to_the_rubric_not_passed(tmp_path):
    # the seed's Fail (day 1 from 9 a.m.) is LLM-judged: without a judge it is unjudged, never passed
    (rec,) = run_case(tmp_path, "c1/C1-SM-02", "sm02_ignores_flight_times")
    assert rec["status"] == "unjudged"
    assert any(v["judge"] == "llm_rubric" and v["verdict"] == "unjudged" for v in rec["verdicts"])


def test_c2_e2e_04_model_deliverable_matches_without_the_space(tmp_path):
    (rec,) = run_case(tmp_path, "c2/C2-E2E-04", "e2e04_guides_and_recommends")
    assert rec["stop_reason"] == "goal_met"
    done = next(v for v in rec["verdicts"] if v["judge"] == "task_completion")
    assert done["verdict"] == "pass" and "model ('华为 MateBook'" in done["reason"]
    constraint = next(v for v in rec["verdicts"] if v["judge"] == "constraint")
    assert "not counted (named as excluded/rejected): 戴尔XPS 13 9340" in constraint["reason"]


def test_c2_td_04_no_hotel_tool_gate(tmp_path):
    (rec,) = run_case(tmp_path, "c2/C2-TD-04", "td04_stages_the_plan")
    called = {t["name"] for m in rec["transcript"] for t in (m.get("tool_calls") or [])}
    assert "search_hotels" not in called
    milestones = next(v for v in rec["verdicts"] if v["judge"] == "milestones")
    assert milestones["verdict"] == "pass" and "hotel" in milestones["details"]["reached"]


def test_c5_ls_01_skill_is_on_and_the_rubric_decides(tmp_path):
    for agent in ("ls01_switches_skill", "ls01_flight_logic"):
        (rec,) = run_case(tmp_path, "c5/C5-LS-01", agent, *C5)
        assert rec["status"] == "unjudged"  # LLM-judge only: never failed, never passed without a judge
    (rec,) = run_case(tmp_path, "c5/C5-LS-01", "ls01_switches_skill", *C5)
    skill = next(m for m in rec["transcript"] if m["role"] == "tool" and m["name"] == "load_skill")
    assert not skill["is_error"] and "itinerary-planning" in skill["content"]
