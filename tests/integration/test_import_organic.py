"""Every bank conversation of every import fixture, imported through the CLI with `--persona
--environment`, becomes an organic case that validates, that the correct bank agent passes with the
rule simulator playing the drafted persona (goal met, every check passing), and that the flawed
agent fails wherever one of its flaws bites. The expectations are data: FIXTURES below, one row per
fixture file."""

from __future__ import annotations

import json
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
