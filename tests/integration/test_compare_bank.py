"""Issue 25 on examples/bank, through the CLI: the correct agent vs the flawed one is a significant
regression on exactly the five cases the flaws touch (and on nothing else); two runs of the same
agent with different seeds show no significant change.

Eight repeats: with five cases in the family each needs p <= 0.05 * 0.1 / 0.5 = 0.01 once the
suite is rejected, and eight of eight pass -> fail pairs give 2 / 2^8 = 0.0078.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.examples.test_bank_example import CASES, FLAW_CASES
from tests.support.cli import usersim

pytestmark = pytest.mark.slow  # three runs of 80 organic conversations

REPEATS = "8"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bank-compare")
    out = {}
    for name, agent, seed in (
        ("correct", "correct", "0"),
        ("again", "correct", "7"),
        ("flawed", "flawed", "0"),
    ):
        out[name] = root / name
        usersim(
            "run",
            CASES,
            "--agent",
            f"python:examples.bank.agent:{agent}",
            "--repeats",
            REPEATS,
            "--seed",
            seed,
            "--out",
            str(out[name]),
            "--no-progress",
            check=False,
        )
    return out


def test_the_flawed_agent_regresses_on_exactly_the_cases_its_flaws_touch(runs, tmp_path):
    res = usersim("compare", str(runs["correct"]), str(runs["flawed"]), "--out", str(tmp_path), check=False)
    assert res.returncode == 1, res.stdout + res.stderr
    data = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))
    assert sorted(data["verdict"]["worse_cases"]) == sorted(FLAW_CASES)
    assert data["verdict"]["better_cases"] == [] and data["verdict"]["within_noise"] == []
    verdicts = {c["case_id"]: c["verdict"] for c in data["cases"]}
    assert {c for c, v in verdicts.items() if v != "no change"} == set(FLAW_CASES)
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("regression: 5 case(s) significantly worse (p < 0.05, Holm): ")
    assert data["a"]["seed"] == data["b"]["seed"] == 0 and all(
        f["same_seed"] for c in data["cases"] for f in c["flips"]
    )
    # each flaw shows up as its own check moving pass -> fail
    moved = {(m["judge"], m["pass_to_fail"]) for m in data["criteria"]}
    assert ("final_state", 8) in moved
    for case in data["cases"]:
        if case["case_id"] in FLAW_CASES:
            assert case["worse"] == 8 and case["first_divergence"] is not None
            assert case["interval"]["high"] < 0


def test_the_same_agent_with_another_seed_shows_no_significant_change(runs, tmp_path):
    res = usersim("compare", str(runs["correct"]), str(runs["again"]), "--out", str(tmp_path), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    data = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))
    assert not data["verdict"]["regression"] and not data["verdict"]["improvement"]
    assert data["suite"]["decided"] == 80 and data["suite"]["worse"] == data["suite"]["better"] == 0
    assert res.stdout.strip().splitlines()[-1].startswith("no significant change: ")
    assert any("different seeds (A 0, B 7)" in w for w in data["warnings"])
