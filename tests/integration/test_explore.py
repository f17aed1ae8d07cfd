"""Exploration through the CLI: persona variants, branching from a checkpoint, failure clusters."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
import yaml

from tests.integration.test_cli_run import records, usersim
from usersim.cases.loader import find_case


def test_explore_variants_branches_and_clusters(tmp_path):
    out = tmp_path / "x"
    usersim(
        "explore",
        "--id",
        "C2-TD-04",
        "--n",
        "3",
        "--seed",
        "5",
        "--branch-at",
        "2",
        "--branches",
        "2",
        "--out",
        str(out),
    )
    recs = records(out)
    base = [r for r in recs if not r["branch"]]
    branches = [r for r in recs if r["branch"]]
    assert len(base) == 3
    assert len({r["variant"]["persona"] for r in base}) == 3
    assert all(r["variant"]["persona"].startswith("japan-first-trip~v") for r in base)
    by_id = {r["id"]: r for r in base}
    grown = [r for r in base if r["turns"] > 2]
    assert len(branches) == 2 * len(grown) and branches
    for b in branches:
        parent = by_id[b["branch"]["parent_id"]]
        assert b["branch"]["at_turn"] == 2
        shared = [m for m in parent["transcript"] if (m["turn"] or 0) <= 2]
        assert b["transcript"][: len(shared)] == shared  # the tree shares the checkpoint prefix
        assert b["turns"] >= 2
    clusters = json.loads((out / "clusters.json").read_text(encoding="utf-8"))
    failing = {r["id"] for r in recs if r["status"] in ("failed", "error")}
    assert {rid for c in clusters for rid in c["records"]} == failing
    assert all(c["count"] == len(c["records"]) and c["example_reason"] for c in clusters)


def test_explore_is_deterministic_per_seed(tmp_path):
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        usersim("explore", "--id", "C2-TD-04", "--n", "2", "--seed", "9", "--out", str(out))
        runs.append({r["id"]: r["transcript"] for r in records(out)})
    assert runs[0] == runs[1]


def test_explore_rejects_static_only_selection(tmp_path):
    res = usersim("explore", "--id", "B1-EI-01", "--n", "2", "--out", str(tmp_path / "s"), check=False)
    assert res.returncode != 0 and "organic" in res.stderr


# --- exploration closes the loop: a promoted failure is a regression case (issue 13) ----------------

FLAWED, FIXED = "reference:window-4", "reference"


def _explore_flawed(tmp_path, case_id: str, n: int, seed: int, *more: str):
    out = tmp_path / f"x-{case_id}"
    res = usersim(
        "explore", "--id", case_id, "--agent", FLAWED, "--simulator", "rule",
        "--n", str(n), "--seed", str(seed), "--out", str(out), *more,
    )  # fmt: skip
    return out, res, records(out)


@pytest.fixture(scope="module")
def e2e_explored(tmp_path_factory):
    return _explore_flawed(
        tmp_path_factory.mktemp("explore"), "C2-E2E-04", 8, 7, "--branch-at", "3", "--branches", "1"
    )


def _abandoned(recs: list[dict]) -> dict:
    """The first conversation that ended without the user's goal met (task_completion failed)."""
    return next(
        r
        for r in recs
        if r["status"] == "failed"
        and not r["branch"]
        and any(v["judge"] == "task_completion" and v["verdict"] == "fail" for v in r["verdicts"])
    )


def _longest_failure(recs: list[dict]) -> dict:
    """The longest failing conversation: a window-4 agent only forgets once there are more than 4 turns."""
    return max((r for r in recs if r["status"] == "failed"), key=lambda r: r["turns"])


def _run_promoted(tmp_path, path: Path, agent: str) -> dict:
    out = tmp_path / f"run-{path.stem}-{agent.replace(':', '_')}"
    usersim("run", str(path), "--agent", agent, "--out", str(out), "--no-progress", check=False)
    (rec,) = records(out)
    return rec


def _deciding_fails(rec: dict) -> set[str]:
    return {v["judge"] for v in rec["verdicts"] if v["counts_toward_status"] and v["verdict"] == "fail"}


def _divergence(rec: dict) -> dict:
    (v,) = [v for v in rec["verdicts"] if v["judge"] == "divergence"]
    assert v["counts_toward_status"] is False and v["verdict"] != "fail", v  # information, never a verdict
    return v


def test_promoted_prefix_case_fails_the_flawed_agent_again_and_passes_the_fixed_one(tmp_path, e2e_explored):
    out, res, recs = e2e_explored
    source = _abandoned(recs)
    # the explore output and the report offer the command line for each cluster's representative
    clusters = json.loads((out / "clusters.json").read_text(encoding="utf-8"))
    assert f"promote: usersim promote {out}" in res.stdout
    report = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="explore"' in report and "usersim promote" in report
    assert html.escape(clusters[0]["records"][0]) in report

    promoted = usersim("promote", str(out), source["id"], "--to", str(tmp_path / "reg"))
    path = Path(promoted.stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    origin = case["promoted_from"]
    assert origin["record_id"] == source["id"] and origin["agent"] == FLAWED
    assert origin["persona"] == source["variant"]["persona"] and origin["seed"] == source["seed"]
    assert origin["run_id"] and origin["simulator"] == "rule"
    assert any(f.startswith("task_completion:") for f in origin["failing"])
    # prefix + simulate: the recorded user turns up to the failing turn, then the persona goes on
    users = [m["content"] for m in source["transcript"] if m["role"] == "user"]
    k = origin["failing_turn"]
    assert 1 < k < len(users)
    assert case["mode"] == "organic" and [case["input"]["message"], *case["input"]["script"]] == users[:k]
    assert case["persona_overrides"]["id"] == source["variant"]["persona"]  # the variant is pinned
    assert case["judging"]["checks"] == find_case("C2-E2E-04").model_dump(mode="json")["judging"]["checks"]

    flawed = _run_promoted(tmp_path, path, FLAWED)
    assert flawed["status"] == "failed"
    assert "task_completion" in _deciding_fails(flawed)
    # deterministic per seed: the flawed agent walks the recorded conversation again, word for word
    assert [m["content"] for m in flawed["transcript"]] == [m["content"] for m in source["transcript"]]
    assert _divergence(flawed)["details"]["diverged"] is False

    fixed = _run_promoted(tmp_path, path, FIXED)
    assert fixed["status"] != "failed" and not _deciding_fails(fixed), fixed["verdicts"]
    assert fixed["stop_reason"] == "goal_met"  # the simulated user carried on and got what it wanted
    assert [m["content"] for m in fixed["transcript"] if m["role"] == "user"][:k] == users[:k]
    div = _divergence(fixed)
    assert div["details"]["diverged"] is True and div["details"]["first_divergent_turn"] <= k


def test_promoted_strict_case_judges_only_the_reply_at_the_failing_turn(tmp_path, e2e_explored):
    out, _, recs = e2e_explored
    source = _longest_failure(recs)
    promoted = usersim("promote", str(out), source["id"], "--to", str(tmp_path / "reg"), "--form", "strict")
    path = Path(promoted.stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    k = case["promoted_from"]["failing_turn"]
    assert case.get("mode", "static") == "static" and case["promoted_from"]["form"] == "strict"
    users = [m["content"] for m in source["transcript"] if m["role"] == "user"]
    assert case["input"]["message"] == users[k - 1]
    assert [m["content"] for m in case["input"]["history"] if m["role"] == "user"] == users[: k - 1]
    kinds = {next(iter(c)) for c in case["judging"]["checks"]}
    assert kinds and not kinds & {
        "stop_reason",
        "turns",
        "asked_clarification",
    }  # one reply, not a conversation
    assert not case["judging"].get("milestones")

    flawed = _run_promoted(tmp_path, path, FLAWED)
    assert flawed["status"] == "failed" and flawed["turns"] == 1
    fixed = _run_promoted(tmp_path, path, FIXED)
    assert fixed["status"] == "passed", fixed["verdicts"]
    assert fixed["stop_reason"] == "replay_complete"
    again = _run_promoted(tmp_path / "again", path, FLAWED)
    assert again["transcript"] == flawed["transcript"]  # deterministic


def test_promote_strict_form_of_the_same_failure_also_separates_the_agents(tmp_path, e2e_explored):
    out, _, recs = e2e_explored
    source = _abandoned(recs)
    path = Path(
        usersim(
            "promote", str(out), source["id"], "--to", str(tmp_path / "s"), "--form", "strict"
        ).stdout.strip()
    )
    assert _run_promoted(tmp_path, path, FLAWED)["status"] == "failed"
    assert _run_promoted(tmp_path, path, FIXED)["status"] == "passed"


def test_promote_at_turn_out_of_range_is_a_clear_error(tmp_path, e2e_explored):
    out, _, recs = e2e_explored
    rec = recs[0]
    res = usersim(
        "promote", str(out), rec["id"], "--to", str(tmp_path / "r"), "--at-turn", "99", check=False
    )  # fmt: skip
    assert res.returncode != 0 and "cannot promote at turn 99" in res.stderr


def test_a_promoted_branch_replays_past_its_checkpoint_and_reproduces_the_failure(tmp_path, e2e_explored):
    out, _, recs = e2e_explored
    branch = next(r for r in recs if r["branch"] and r["status"] == "failed")
    path = Path(usersim("promote", str(out), branch["id"], "--to", str(tmp_path / "b")).stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert (
        case["promoted_from"]["failing_turn"] >= branch["branch"]["at_turn"]
    )  # the shared prefix is replayed
    flawed = _run_promoted(tmp_path, path, FLAWED)
    assert flawed["status"] == "failed"
    assert [m["content"] for m in flawed["transcript"]] == [m["content"] for m in branch["transcript"]]
    assert _run_promoted(tmp_path, path, FIXED)["status"] != "failed"


# C2-TD-04 conversations end within 4 user turns (the reference agent delivers flights, itinerary and
# hotel by turn 3, the persona's hesitation comes at turn 4), so a 4-turn window never forgets
# anything there; a 2-turn window loses the departure city the user gave in turn 2.
TD_FLAWED = "reference:window-2"


def test_c2_td_04_promoted_prefix_case_fails_the_window_agent_again_and_passes_the_full_one(tmp_path):
    out = tmp_path / "x-td"
    usersim(
        "explore", "--id", "C2-TD-04", "--agent", TD_FLAWED, "--simulator", "rule",
        "--n", "8", "--seed", "9", "--out", str(out),
    )  # fmt: skip
    recs = records(out)
    source = _longest_failure(recs)
    assert source["turns"] > 4
    promoted = usersim("promote", str(out), source["id"], "--to", str(tmp_path / "reg"))
    path = Path(promoted.stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    origin = case["promoted_from"]
    assert origin["agent"] == TD_FLAWED and case["mode"] == "organic"  # prefix + simulate
    assert any(f.startswith("milestones:") for f in origin["failing"])
    k = origin["failing_turn"]
    users = [m["content"] for m in source["transcript"] if m["role"] == "user"]
    assert [case["input"]["message"], *case["input"].get("script", [])] == users[:k]

    flawed = _run_promoted(tmp_path, path, TD_FLAWED)
    assert flawed["status"] == "failed" and {"milestones", "tool_called"} <= _deciding_fails(flawed)
    assert [m["content"] for m in flawed["transcript"]] == [m["content"] for m in source["transcript"]]
    assert _divergence(flawed)["details"]["diverged"] is False

    fixed = _run_promoted(tmp_path, path, FIXED)
    assert fixed["status"] != "failed" and not _deciding_fails(fixed), fixed["verdicts"]
    assert [m["content"] for m in fixed["transcript"] if m["role"] == "user"][:k] == users[:k]
    (ms,) = [v for v in fixed["verdicts"] if v["judge"] == "milestones"]
    reached = ms["details"]["reached"]
    # the complete plan counts where it was delivered, not where 机票/酒店 were first mentioned
    assert reached["complete_plan"] >= max(reached["flights"], reached["itinerary"], reached["hotel"])
    replies = " ".join(m["content"] for m in fixed["transcript"] if m["role"] == "assistant")
    assert "具体指什么" not in replies  # "第一次弄这个" is no pointer to ask about
    assert _divergence(fixed)["details"]["diverged"] is True


# --- the same loop in a domain of one's own: examples/bank with its flawed and correct agents ---------

BANK_FLAWED, BANK_CORRECT = "python:examples.bank.agent:flawed", "python:examples.bank.agent:correct"


def test_bank_promoted_failure_fails_the_flawed_agent_again_and_passes_the_correct_one(tmp_path):
    out = tmp_path / "x-bank"
    usersim(
        "explore", "examples/bank/cases", "--id", "BANK-02", "--agent", BANK_FLAWED,
        "--simulator", "rule", "--n", "4", "--seed", "1", "--out", str(out),
    )  # fmt: skip
    recs = records(out)
    assert recs and all(r["status"] == "failed" for r in recs)  # it blocks the first of two cards
    source = recs[0]
    # no --cases: the exploration's own case folder is where promote finds BANK-02
    promoted = usersim("promote", str(out), source["id"], "--to", str(tmp_path / "reg"))
    path = Path(promoted.stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    origin = case["promoted_from"]
    assert origin["agent"] == BANK_FLAWED and case["mode"] == "organic"
    assert any(f.startswith("final_state:") for f in origin["failing"])
    # written elsewhere, the case still finds its persona file (relative to itself) and pins the variant
    persona_file = (path.parent / case["persona"]).resolve()
    assert not Path(case["persona"]).is_absolute() and persona_file.name == "priya-two-cards.yaml"
    assert persona_file.is_file()
    assert case["persona_overrides"]["id"] == source["variant"]["persona"]
    k = origin["failing_turn"]
    users = [m["content"] for m in source["transcript"] if m["role"] == "user"]
    assert [case["input"]["message"], *case["input"].get("script", [])] == users[:k]

    flawed = _run_promoted(tmp_path, path, BANK_FLAWED)
    assert flawed["status"] == "failed" and "final_state" in _deciding_fails(flawed)
    assert [m["content"] for m in flawed["transcript"]] == [m["content"] for m in source["transcript"]]

    correct = _run_promoted(tmp_path, path, BANK_CORRECT)
    assert correct["status"] == "passed", correct["verdicts"]
    assert correct["stop_reason"] == "goal_met"
    assert [m["content"] for m in correct["transcript"] if m["role"] == "user"][:k] == users[:k]
    blocked = [
        tc["arguments"]
        for m in correct["transcript"]
        for tc in m.get("tool_calls") or []
        if tc["name"] == "block_card"
    ]
    assert blocked == [{"card_id": "K-3003"}]  # the card the customer named, ending 7788
    assert _divergence(correct)["details"]["diverged"] is True
