"""Every bank conversation of every import fixture, imported through the CLI with `--persona
--environment`, becomes an organic case that validates, that the correct bank agent passes with the
rule simulator playing the drafted persona (goal met, every check passing), and that the flawed
agent fails wherever one of its flaws bites. The expectations are data: FIXTURES below, one row per
fixture file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO, usersim

DATA = REPO / "tests/data/import"
SUITE = str(REPO / "examples/bank/cases/_suite.yaml")
AGENT = "python:examples.bank.agent:{}"

# fixture file -> {organic case id of each bank conversation: the flawed agent's status}; a
# conversation the flaws do not touch (a plain transfer, a forgotten id) passes both agents
FIXTURES: dict[str, dict[str, str]] = {
    "openai_chats.jsonl": {
        "conv_a90c33-dispute-sim": "failed",  # latest-charge: disputes the newest charge
        "conv_7d1e2a-transfer-sim": "passed",
        "conv_c02f9e-forgot-id-sim": "passed",
    },
    "langsmith_export.json": {
        "9d97601d-8f0b-5a82-b646-6f691bb64ade-sim": "failed",  # express-default shipping
    },
    "langsmith_runs.jsonl": {
        "conv-5e02-old-charge-sim": "failed",  # no-dispute-window
        "sess-7c1e-dispute-sim": "failed",
        "thr-2b9d-replacement-sim": "failed",
    },
    "langgraph_history.json": {
        "5f1c9e0a-07aa-4d3e-b1de-1a2b3c4d5e03-sim": "failed",
    },
    "langgraph_checkpoints.json": {
        "thread-bank-04-transfer-sim": "passed",
        "thread-bank-06-dispute-sim": "failed",
        "thread-bank-08-old-charge-sim": "failed",
    },
    "otel_traces.json": {
        "sess-bank-0142-sim": "passed",
    },
}


def run(cases: list[Path], agent: str, out: Path) -> dict[str, dict]:
    usersim(
        "run", *map(str, cases), "--agent", AGENT.format(agent), "--simulator", "rule",
        "--out", str(out), "--no-progress", check=False,
    )  # fmt: skip
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["case_id"]: r for r in rows}


@pytest.mark.parametrize("fixture", list(FIXTURES))
def test_each_fixtures_bank_conversations_replay_organically_pass_correct_fail_flawed(fixture, tmp_path):
    out = tmp_path / "imported"
    res = usersim("import", str(DATA / fixture), "--to", str(out), "--persona", "--environment", SUITE)
    assert res.stdout.strip().endswith("all valid"), res.stdout
    assert usersim("validate", str(out)).returncode == 0
    expected = FIXTURES[fixture]
    cases = [out / f"{case_id}.yaml" for case_id in expected]
    for path in cases:
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert case["mode"] == "organic" and (out / case["persona"]).is_file()
        persona = yaml.safe_load((out / case["persona"]).read_text(encoding="utf-8"))
        assert persona["goal"]["required"], f"{path.name}: a drafted goal with nothing required"
    correct = run(cases, "correct", tmp_path / "correct")
    assert {k: (r["status"], r["stop_reason"]) for k, r in correct.items()} == {
        k: ("passed", "goal_met") for k in expected
    }, {k: [v["reason"] for v in r["verdicts"] if v["verdict"] != "pass"] for k, r in correct.items()}
    flawed = run(cases, "flawed", tmp_path / "flawed")
    assert {k: r["status"] for k, r in flawed.items()} == expected
    for k, r in flawed.items():
        if expected[k] == "failed":  # failed by a case check, blamed on the agent, not the simulator
            assert r["blame"] == "agent", (k, r["blame"])
            assert any(
                v["verdict"] == "fail" and v["judge"] in ("tool_called", "final_state") for v in r["verdicts"]
            )


def test_the_bank_suite_exported_as_traces_and_imported_back_judges_like_the_suite(tmp_path):
    """The bank suite played by the correct agent, exported (`usersim otel export`) and imported
    back with drafted personas: every organic case passes the correct agent with its goal met, and
    the flawed agent fails exactly the conversations it fails in the hand-written suite (a card
    blocked or shipped wrong, the newest charge disputed, an address changed unverified, an old
    charge disputed); a drafted persona keeps the user's choices (express shipping) and names a
    volunteered date a date, not the card it was said with."""
    bank = str(REPO / "examples/bank/cases")
    usersim(
        "run", bank, "--agent", AGENT.format("correct"), "--out", str(tmp_path / "suite"), "--no-progress"
    )
    suite_flawed = run([REPO / "examples/bank/cases"], "flawed", tmp_path / "suite-flawed")
    usersim("otel", "export", str(tmp_path / "suite"), "--to", str(tmp_path / "traces.jsonl"))
    out = tmp_path / "imported"
    res = usersim(
        "import", str(tmp_path / "traces.jsonl"), "--to", str(out), "--persona", "--environment", SUITE
    )
    assert res.stdout.strip().endswith("all valid"), res.stdout + res.stderr
    organic = sorted(out.glob("*-sim.yaml"))
    assert len(organic) == len(suite_flawed) == 10

    def case_of(imported_id: str) -> str:
        return re.search(r"BANK-\d+", imported_id).group(0)

    correct = run(organic, "correct", tmp_path / "correct")
    assert {case_of(k): (r["status"], r["stop_reason"]) for k, r in correct.items()} == {
        k: ("passed", "goal_met") for k in suite_flawed
    }, {k: [v["reason"] for v in r["verdicts"] if v["verdict"] != "pass"] for k, r in correct.items()}
    flawed = run(organic, "flawed", tmp_path / "flawed")
    assert (
        {case_of(k) for k, r in flawed.items() if r["status"] == "failed"}
        == {k for k, r in suite_flawed.items() if r["status"] == "failed"}
        == {"BANK-02", "BANK-03", "BANK-06", "BANK-07", "BANK-08"}
    )

    persona = next(yaml.safe_load(p.read_text("utf-8")) for p in (out / "personas").glob("*bank-09*"))
    facts = {f["slot"]: f["value"] for f in persona["known_info"]}
    assert facts["shipping"] == "Express" and facts["dates"] == "yesterday" and "card" not in facts
