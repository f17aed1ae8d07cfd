"""Acceptance for examples/bank (bring your own domain), through the CLI in process: with the
default reveal policy and the rule simulator, the correct agent completes every case and the
flawed agent fails exactly the cases its five flaws touch, each for the reason of its flaw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import usersim

CASES = "examples/bank/cases"
FLAW_CASES = {  # case -> what the deciding failure must say
    # proposes the first card, not the one named: the user refuses, the card stays active
    "BANK-02": "cards K-3003: status=active (expected blocked)",
    # express by default ($15 fee): the user, who excludes express, refuses; nothing is ordered
    "BANK-03": "order_replacement_card was never called",
    "BANK-06": "transaction_id=T-4002 (expected T-4001)",  # the latest charge, not the one described
    "BANK-07": "verify_customer was never called",  # no identity check before the address change
    "BANK-08": "unexpected new disputes record D-1",  # disputed a charge older than 60 days
}


def records(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[int, dict[str, dict]]]:
    out = {}
    for agent in ("correct", "flawed"):
        path = tmp_path_factory.mktemp(agent)
        res = usersim(
            "run",
            CASES,
            "--agent",
            f"python:examples.bank.agent:{agent}",
            "--out",
            str(path),
            "--no-progress",
            check=False,
        )
        out[agent] = (res.returncode, records(path))
    return out


def test_example_validates():
    res = usersim("validate", CASES)
    assert res.returncode == 0 and "0 with problems" in res.stdout + res.stderr


def test_correct_agent_completes_every_case(runs):
    code, recs = runs["correct"]
    assert len(recs) >= 8
    bad = {k: r["verdicts"] for k, r in recs.items() if r["status"] != "passed"}
    assert not bad
    assert code == 0
    for r in recs.values():
        assert r["stop_reason"] == "goal_met"
        fs = next(v for v in r["verdicts"] if v["judge"] == "final_state")
        assert fs["verdict"] == "pass" and "nothing else changed" in fs["reason"]


def test_flawed_agent_fails_each_case_its_flaws_touch(runs):
    code, recs = runs["flawed"]
    assert code == 1
    failed = {k for k, r in recs.items() if r["status"] != "passed"}
    assert failed == set(FLAW_CASES)
    for case_id, evidence in FLAW_CASES.items():
        reasons = " | ".join(v["reason"] for v in recs[case_id]["verdicts"] if v["verdict"] == "fail")
        assert evidence in reasons, (case_id, reasons)


REFUSALS = {  # case -> (the user's refusal says, sim_events proposal_refused detail says)
    "BANK-02": ("the one ending in 7788", "fact card_last4: proposed 1111"),
    "BANK-03": ("express", "exclude: proposed express shipping"),
}


@pytest.mark.parametrize("case_id", sorted(REFUSALS))
def test_flawed_proposal_is_refused_with_the_reason(runs, case_id):
    """A proposal naming the wrong card (a fact of the persona) or express shipping (excluded by
    the persona's goal) is refused with the reason, never with a yes, and recorded in sim_events;
    the user keeps its goal (the refusals repeat) until the agent's repeats exhaust its patience."""
    _code, recs = runs["flawed"]
    rec = recs[case_id]
    words, detail = REFUSALS[case_id]
    users = [m["content"] for m in rec["transcript"] if m["role"] == "user"]
    refusal = users[3]  # the turn after the proposal
    assert words in refusal and ("No " in refusal or "No, " in refusal or refusal.startswith("No")), users
    assert not any("go ahead" in u.lower() or "yes" in u.lower() for u in users), users
    refused = [e for e in rec["sim_events"] if e["kind"] == "proposal_refused"]
    assert refused and detail in refused[0]["detail"], rec["sim_events"]
    assert not [e for e in rec["sim_events"] if e["kind"] == "proposal_accepted"]
    assert rec["stop_reason"] == "gave_up" and rec["blame"] == "agent", (rec["stop"], rec["blame"])


def test_fail_under_relaxes_the_exit_code(tmp_path):
    # the flawed agent passes 1 of these 2: --fail-under 0.5 accepts that, 60 (percent) does not
    for rate, code in (("0.5", 0), ("60", 1)):
        res = usersim(
            "run",
            CASES,
            "--id",
            "BANK-02",
            "--id",
            "BANK-04",
            "--agent",
            "python:examples.bank.agent:flawed",
            "--out",
            str(tmp_path / rate),
            "--no-progress",
            "--fail-under",
            rate,
            check=False,
        )
        assert res.returncode == code, res.stderr
        assert "pass rate 1/2 = 50.0%" in res.stderr


def test_bad_agent_spec_is_a_usage_error(tmp_path):
    res = usersim(
        "run",
        CASES,
        "--id",
        "BANK-01",
        "--agent",
        "python:examples.bank.agent:corect",
        "--out",
        str(tmp_path / "x"),
        check=False,
    )
    assert res.returncode == 2 and "Did you mean 'correct'?" in res.stderr


def test_the_domain_folder_itself_validates_and_lists_only_its_cases():
    """State tables and personas beside the cases are not reported as broken case files."""
    res = usersim("validate", "examples/bank", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 with problems" in res.stderr
    listed = usersim("cases", "list", "examples/bank", "--json")
    ids = sorted(c["id"] for c in json.loads(listed.stdout))
    attacks = usersim("cases", "list", "examples/bank/attacks", "--json")  # the attack suite's cases
    assert ids == sorted(
        [f"BANK-{i:02d}" for i in range(1, 11)] + [c["id"] for c in json.loads(attacks.stdout)]
    )
