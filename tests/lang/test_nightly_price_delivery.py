"""C2-TD-04 through `usersim run` with the rule simulator: a hotel offer that shows only a nightly
price keeps goal_met however the price is written (issue 21), read by usersim.lang.quantity; the
same plan without a price leaves the hotel undelivered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import usersim

AGENTS = "python:tests.lang.nightly_agents:"


def run(tmp_path: Path, agent: str) -> dict:
    out = tmp_path / agent
    usersim(
        "run",
        "usersim/cases/c2/C2-TD-04.yaml",
        "--agent",
        AGENTS + agent,
        "--simulator",
        "rule",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    (rec,) = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return rec


@pytest.mark.parametrize(
    "agent, shown",
    [
        ("td04_yen_one_night", "¥680 一晚"),  # no persona keyword: the nightly price shows it
        ("td04_per_night_english", "$98 per night"),
        ("td04_yuan_each_night", "每晚"),  # the persona's own keyword is found first
        ("td04_each_night_first", "每晚"),
        ("td04_slash_night", "/晚"),
    ],
)
def test_a_nightly_price_written_any_way_delivers_the_hotel(tmp_path, agent, shown):
    rec = run(tmp_path, agent)
    assert rec["stop_reason"] == "goal_met", rec["stop_detail"]
    done = next(v for v in rec["verdicts"] if v["judge"] == "task_completion")
    assert done["verdict"] == "pass", done["reason"]
    assert f"hotel ('{shown.lower()}'" in done["reason"].lower()


def test_a_hotel_named_without_price_is_not_delivered(tmp_path):
    rec = run(tmp_path, "td04_no_hotel_price")
    assert rec["stop_reason"] != "goal_met"
    done = next(v for v in rec["verdicts"] if v["judge"] == "task_completion")
    assert done["verdict"] == "fail" and "missing: hotel" in done["reason"]
