"""A telecom domain written as a new user would (tests/examples/telecom), through the CLI: the
persona's scripted opening ("$35", "$120", a tau2-style "I'm Anya, user ID ... add-on 3RK2T9") is
its own and never a fidelity violation, the flawed agent's failures are blamed on the agent and
exit 1, the correct agent passes, also with a user that never says the goal is met.

Before issue #22 every one of these failures was excused as simulator-suspect and the run exited 0
(fidelity.invented flagged the opening's "$35" at message 0, fidelity.reveal the tau2 opening), and
the correct agent failed TEL-07 on task_completion because the user never stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import usersim

CASES = "tests/examples/telecom/cases"
AGENT = "python:tests.examples.telecom.agent:{}"
FLAWS = {  # case -> what its deciding failure says
    "TEL-01": "addons 3RK2T9: status=active (expected cancelled)",  # cancelled the first add-on
    "TEL-03": "credits CR-1: amount=120.0 (expected 85.0)",  # credited the whole bill for roaming
    "TEL-06": "lines L-502: plan_id=saver (expected globe_lite)",  # a traveller moved to no roaming
    "TEL-07": "credits CR-1: amount=120.0 (expected 85.0)",
    "TEL-09": "change_plan was never called",  # the no-roaming plan the user refused
}


def records(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[int, str, dict[str, dict]]]:
    out = {}
    for agent in ("correct", "flawed"):
        path = tmp_path_factory.mktemp(agent)
        res = usersim(
            "run", CASES, "--agent", AGENT.format(agent), "--out", str(path), "--no-progress", check=False
        )
        out[agent] = (res.returncode, res.stdout + res.stderr, records(path))
    return out


def fidelity(rec: dict) -> dict[str, dict]:
    return {v["judge"]: v for v in rec["verdicts"] if v["judge"].startswith("fidelity")}


def test_the_domain_validates():
    res = usersim("validate", CASES)
    assert "0 with problems" in res.stdout + res.stderr


def test_flawed_agent_fails_every_case_blamed_on_the_agent_with_exit_1(runs):
    code, console, recs = runs["flawed"]
    assert code == 1, console
    assert set(recs) == set(FLAWS)
    for case_id, evidence in FLAWS.items():
        r = recs[case_id]
        assert (r["status"], r["blame"], r["simulator_suspect"]) == ("failed", "agent", False), case_id
        reasons = " | ".join(v["reason"] for v in r["verdicts"] if v["verdict"] == "fail")
        assert evidence in reasons, (case_id, reasons)
    assert "simulator-suspect" not in console


def test_the_issue_command_now_exits_1(tmp_path):
    res = usersim(
        "run",
        CASES,
        "--id",
        "TEL-03",
        "--id",
        "TEL-06",
        "--agent",
        AGENT.format("flawed"),
        "--out",
        str(tmp_path / "o"),
        "--no-progress",
        check=False,
    )
    assert res.returncode == 1 and "failed: 2" in res.stdout + res.stderr


def test_the_scripted_opening_is_the_personas_own_never_a_violation(runs):
    for agent in ("correct", "flawed"):
        for case_id, r in runs[agent][2].items():
            fid = fidelity(r)
            assert fid["fidelity.invented"]["verdict"] == "pass", (agent, case_id, fid["fidelity.invented"])
            assert fid["fidelity.reveal"]["verdict"] == "pass", (agent, case_id, fid["fidelity.reveal"])
            for v in fid.values():  # the contract the blame reads
                d = v["details"]
                assert {"precision", "turn", "message_index", "kind", "caused"} <= set(d), v
                assert d["precision"] in ("high", "advisory") and v["counts_toward_status"] is False
                assert not (v["verdict"] == "fail" and d["precision"] == "high"), (agent, case_id, v)


def test_a_tau2_style_opening_with_a_confirmation_quoting_the_add_on_is_faithful(runs):
    r = runs["correct"][2]["TEL-01"]
    users = [m["content"] for m in r["transcript"] if m["role"] == "user"]
    assert users[0].startswith("Hi, I'm Anya Garcia, user ID anya_garcia_5901")
    assert "Yes, I confirm cancelling add-on 3RK2T9." in users  # not parroting the agent's proposal
    assert {k: v["verdict"] for k, v in fidelity(r).items()} == {k: "pass" for k in fidelity(r)}


def test_correct_agent_passes_also_when_the_user_never_stops(runs):
    code, console, recs = runs["correct"]
    assert code == 0, console
    assert {k: r["status"] for k, r in recs.items()} == {k: "passed" for k in FLAWS}
    never = recs["TEL-07"]
    assert never["stop_reason"] == "max_turns" and never["blame"] == "none"
    done = next(v for v in never["verdicts"] if v["judge"] == "task_completion")
    assert done["verdict"] == "pass"
    assert "the user never said the goal was met, but every item in force is evidenced" in done["reason"]


def test_a_crashing_fidelity_matcher_is_an_error_verdict_that_excuses_nothing(tmp_path, monkeypatch):
    import importlib

    for module in ("usersim.simulator.agenda", "usersim.simulator.persona_lint"):
        importlib.import_module(module)  # imported first, the simulator keeps the real matcher
    slots = importlib.import_module("usersim.simulator.slots")

    class Broken(slots.FactMatcher):
        def __init__(self, persona):
            raise RuntimeError("fact matcher exploded")

    monkeypatch.setattr(slots, "FactMatcher", Broken)
    for agent, code, status, blame in (("correct", 0, "passed", "none"), ("flawed", 1, "failed", "agent")):
        out = tmp_path / agent
        res = usersim(
            "run",
            CASES,
            "--id",
            "TEL-03",
            "--agent",
            AGENT.format(agent),
            "--out",
            str(out),
            "--no-progress",
            check=False,
        )
        rec = records(out)["TEL-03"]
        reveal = fidelity(rec)["fidelity.reveal"]
        assert reveal["verdict"] == "error" and "RuntimeError: fact matcher exploded" in reveal["reason"]
        assert reveal["counts_toward_status"] is False
        assert (res.returncode, rec["status"], rec["blame"], rec["simulator_suspect"]) == (
            code,
            status,
            blame,
            False,
        )


def lena(body: dict) -> dict:
    """A model playing lena-traveller that accepts a plan over her budget (the persona's max_price)."""
    said = [m["content"] for m in body["messages"][1:] if m["role"] == "user"]  # flipped: the agent
    last = (said[-1] if said else "").lower()
    move: dict = {"action": "continue", "message": "Okay."}
    if not any(m["role"] == "assistant" for m in body["messages"]):  # only the start cue so far
        move["message"] = (
            "I travel abroad every month and my Globe plan at $45 is too expensive. Can you move me to something cheaper?"
        )
    elif "has been moved to" in last:
        move = {"action": "stop", "reason": "the plan was changed"}
    elif "customer id" in last:
        move["message"] = "It's TC-1002."
    elif "shall i go ahead" in last:
        move["message"] = "Sounds good."
    return {"content": json.dumps(move), "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


def test_a_high_precision_violation_the_agent_acted_on_reaches_the_record(tmp_path):
    """The one path that still excuses: the user accepted a plan over its budget and the agent
    acted on that acceptance (fidelity.swayed, high precision, what the agent did named)."""
    import shutil

    from tests.support.openai_stub import OpenAIStub

    domain = tmp_path / "telecom"
    shutil.copytree(Path(CASES).parent, domain)
    (domain / "cases" / "tel-08-budget.yaml").write_text(
        "include: _suite.yaml\nid: TEL-08\ntitle: A traveller with a budget of $20\n"
        "persona: ../personas/lena-traveller.yaml\n"
        "persona_overrides: {goal: {description: A cheaper plan, required: [plan_change],"
        " deliverable_keywords: {plan_change: [has been moved to]}, constraints: {max_price: 20}}}\n"
        "judging:\n  checks:\n    - final_state: {expect: {lines: [{line_id: L-502, plan_id: globe_lite}]}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "o"
    with OpenAIStub(responder=lena) as stub:
        usersim(
            "run",
            str(domain / "cases"),
            "--id",
            "TEL-08",
            "--agent",
            AGENT.format("flawed"),
            "--simulator",
            "openai:sim-model",
            "--out",
            str(out),
            "--no-progress",
            env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-stub", "USERSIM_NO_CACHE": "1"},
            check=False,
        )
    rec = records(out)["TEL-08"]
    swayed = fidelity(rec)["fidelity.swayed"]
    assert swayed["verdict"] == "fail" and swayed["details"]["precision"] == "high", swayed
    assert "max_price: proposed 25, limit 20" in swayed["details"]["caused"]
    assert "tool change_plan" in swayed["details"]["caused"] and swayed["details"]["turn"] == 3
    # the stub user sways the same way on every derived seed: every attempt is suspect -> inconclusive
    assert (rec["status"], rec["blame"], rec["simulator_suspect"]) == ("inconclusive", "simulator", True)
    assert len(rec["attempts"]) == 3


def test_needs_said_only_in_the_opening_refuse_the_flawed_plan_and_accept_the_right_one(runs):
    """TEL-09's persona has no goal.constraints: "needs roaming" and "can't pay more than $40" are
    only in its opening. The flawed agent's no-roaming Saver is refused with the reason (never a
    yes); the correct agent's Globe Lite ($30, roaming) is accepted; the judges hold the same needs."""
    _code, _console, bad = runs["flawed"]
    rec = bad["TEL-09"]
    users = [m["content"] for m in rec["transcript"] if m["role"] == "user"]
    assert "roaming" in users[2] and "won't do" in users[2] or "need roaming" in users[2].lower(), users
    assert not any("go ahead" in u.lower() for u in users[1:]), users
    refused = [e for e in rec["sim_events"] if e["kind"] == "proposal_refused"]
    assert refused and "needs roaming" in refused[0]["detail"], rec["sim_events"]
    assert rec["stop_reason"] == "gave_up" and rec["blame"] == "agent"
    _code, _console, good = runs["correct"]
    ok = good["TEL-09"]
    assert ok["status"] == "passed" and ok["stop_reason"] == "goal_met", ok["verdicts"]
    accepted = [e for e in ok["sim_events"] if e["kind"] == "proposal_accepted"]
    assert accepted and "require roaming" in accepted[0]["detail"] and "$40" in accepted[0]["detail"]
    completion = next(v for v in ok["verdicts"] if v["judge"] == "task_completion")
    held = completion["details"]["constraints_in_force"]
    assert held["require"] == ["roaming"] and held["max"]["price"].startswith("$40"), held


def kai(body: dict) -> dict:
    """A model playing kai-roaming-budget that accepts the no-roaming plan it said it cannot use."""
    said = [m["content"] for m in body["messages"][1:] if m["role"] == "user"]
    last = (said[-1] if said else "").lower()
    move: dict = {"action": "continue", "message": "Okay."}
    if not any(m["role"] == "assistant" for m in body["messages"]):
        move["message"] = (
            "I work abroad a lot, so my plan needs roaming, and I can't pay more than $40 a month. "
            "My Globe plan is too expensive, can you move me to something cheaper?"
        )
    elif "has been moved to" in last:
        move = {"action": "stop", "reason": "the plan was changed"}
    elif "customer id" in last:
        move["message"] = "It's TC-1002."
    elif "shall i go ahead" in last:
        move["message"] = "Sounds good."
    return {"content": json.dumps(move), "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


def test_fidelity_holds_the_needs_of_the_opening_too(tmp_path):
    """A user that accepts the no-roaming plan after opening with "my plan needs roaming" is swayed:
    fidelity reads the goal in force (opening needs included), not only goal.constraints."""
    from tests.support.openai_stub import OpenAIStub

    out = tmp_path / "o"
    with OpenAIStub(responder=kai) as stub:
        usersim(
            "run",
            CASES,
            "--id",
            "TEL-09",
            "--agent",
            AGENT.format("flawed"),
            "--simulator",
            "openai:sim-model",
            "--out",
            str(out),
            "--no-progress",
            env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-stub", "USERSIM_NO_CACHE": "1"},
            check=False,
        )
    rec = records(out)["TEL-09"]
    swayed = fidelity(rec)["fidelity.swayed"]
    assert swayed["verdict"] == "fail", swayed
    assert "require" in swayed["reason"] and "roaming" in swayed["reason"], swayed
    assert rec["status"] != "passed", rec["status"]
