"""维度五 library cases through the CLI: MT-DRIFT-01 answered by scripted agents at each level of
seed 003's scale is scored 100 / 70 / 30 / 0 with the reason, pass at the threshold 70."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import usersim
from usersim.cases.loader import find_case

CASE = "usersim/cases/mt/MT-DRIFT-01.yaml"


def _run(tmp_path, agent: str) -> dict:
    out = tmp_path / agent
    usersim(
        "run",
        CASE,
        "--agent",
        f"python:tests.judges.drift_agents:{agent}",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return rec


def _drift(rec: dict) -> dict:
    return next(v for v in rec["verdicts"] if v["judge"] == "drift")


@pytest.mark.parametrize(
    "agent, level, status, reason_part",
    [
        ("anchored", 100, "passed", "per turn: t1=100, t2=100, t3=100, t4=100, t5=100, t6=100, t7=100"),
        ("pulled_back", 70, "passed", "agent-initiated drift (主动扩展) in turn(s) 3, 4, 5"),
        ("stayed_off", 30, "failed", "t6=30, t7=30"),
        ("forgot", 0, "failed", "t6=0, t7=0"),
    ],
)
def test_each_level_of_the_seed_scale(tmp_path, agent, level, status, reason_part):
    rec = _run(tmp_path, agent)
    v = _drift(rec)
    assert v["details"]["overall"] == level and v["details"]["threshold"] == 70
    assert rec["status"] == status and rec["score"] == level / 100
    assert v["counts_toward_status"] is True and v["criterion"] == "semantic drift (threshold 70)"
    assert v["reason"].startswith(f"drift score {level} (lexical)") and reason_part in v["reason"]


def test_pulled_back_curve_returns_after_the_users_pull_back(tmp_path):
    curve = _drift(_run(tmp_path, "pulled_back"))["details"]["curve"]
    assert [p["anchoring"] for p in curve] == [100, 100, 0, 0, 0, 100, 100]
    assert [p["kind"] for p in curve][2:5] == ["off_topic"] * 3  # the agent's own move, not the user's


def test_a_last_reply_without_content_is_uncertain_not_scored(tmp_path):
    rec = _run(tmp_path, "acknowledges")
    v = _drift(rec)
    assert v["verdict"] == "unjudged" and rec["status"] == "unjudged"
    assert v["reason"].startswith("uncertain: the last reply (turn 7) has no content words")


def test_library_drift_cases_use_the_judge_with_the_seeds_threshold():
    for cid, turns in (("MT-DRIFT-01", 7), ("MT-DRIFT-02", 10)):
        case = find_case(cid)
        assert case.judging.drift_threshold == 70 and case.category == "DRIFT"
        assert 1 + len(case.input.script) == turns and 6 <= turns <= 11  # instruction + 5-10 follow-ups
    listed = usersim("cases", "list", "--json").stdout
    assert "MT-DRIFT-01" in listed and "MT-DRIFT-02" in listed
