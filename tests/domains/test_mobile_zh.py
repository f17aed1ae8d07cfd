"""The Chinese mobile-plan domain through the CLI: the persona states its needs (≥ 10G, ≤ 60 元,
roaming) only in its opening message and in goal.constraints only the price; the rule simulator
must hold all of them, say yes to the plan that meets them and refuse the others with the reason."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import usersim

CASES = "tests/domains/mobile_zh/cases"


def _run(agent: str, out) -> tuple[int, str, dict]:
    res = usersim(
        "run",
        CASES,
        "--agent",
        f"python:tests.domains.mobile_zh.agent:{agent}",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    record = json.loads((out / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    return res.returncode, res.stdout, record


def _user_lines(record: dict) -> list[str]:
    return [m["content"] for m in record["transcript"] if m["role"] == "user" and m.get("content")]


@pytest.mark.parametrize("agent", ["correct", "polite"])
def test_an_agent_proposing_the_plan_that_meets_every_need_passes(agent, tmp_path):
    code, stdout, record = _run(agent, tmp_path)
    assert code == 0, stdout
    assert record["status"] == "passed" and record["stop_reason"] == "goal_met"
    # the go-ahead question gets a clear yes, not "你看着办吧"
    reply_to_offer = _user_lines(record)[3]
    assert "看着办" not in reply_to_offer and any(w in reply_to_offer for w in ("行", "好", "可以", "确认"))
    accepted = [e for e in record["sim_events"] if e["kind"] == "proposal_accepted"]
    assert (
        accepted and "min data 10G" in accepted[0]["detail"] and "require 国际漫游" in accepted[0]["detail"]
    )
    assert not [e for e in record["sim_events"] if e["kind"] == "proposal_refused"]


def test_an_agent_pushing_the_cheapest_then_the_dearest_plan_fails_with_the_reasons(tmp_path):
    code, stdout, record = _run("flawed", tmp_path)
    assert code == 1, stdout
    assert record["status"] == "failed" and record["blame"] == "agent"
    lines = _user_lines(record)
    # 38 元 / 5GB / no roaming: refused for the data and the roaming the opening asked for
    assert "5GB" in lines[3] and "10G" in lines[3] and "国际漫游" in lines[3]
    # 98 元: refused for the price, limit in the persona's words
    assert "60元" in lines[4]
    refused = [e["detail"] for e in record["sim_events"] if e["kind"] == "proposal_refused"]
    assert "min: proposed 5GB, limit 10G" in refused[0] and "require: proposed 不含国际漫游" in refused[0]
    assert "max_price: proposed 98, limit 60元" in refused[1]
    assert not [e for e in record["sim_events"] if e["kind"] == "proposal_accepted"]
