"""`usersim compare`, `usersim plan-repeats` and `usersim run --baseline` through the CLI, on real
runs of seeded python agents with known pass probabilities (tests/integration/compare_agents.py)
over two static cases: equal agents show no significant change, a 0.9 -> 0.3 agent is a
significant regression, and the exit codes say so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import usersim
from usersim.reports.compare import compare_records, load_run

CASES = "tests/integration/data/compare"
REPEATS = "12"


def run(out: Path, agent: str, seed: str, *extra: str, check: bool = False):
    return usersim(
        "run",
        CASES,
        "--agent",
        f"python:tests.integration.compare_agents:{agent}",
        "--repeats",
        REPEATS,
        "--concurrency",
        "1",
        "--out",
        str(out),
        "--no-progress",
        *extra,
        env={"COMPARE_AGENT_SEED": seed},
        check=check,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("known")
    out = {}
    for name, agent, seed in (("a", "p90", "1"), ("same", "p90", "2"), ("worse", "p30", "3")):
        out[name] = root / name
        run(out[name], agent, seed)
    return out


def compare_json(path: Path) -> dict:
    return json.loads((path / "compare.json").read_text(encoding="utf-8"))


def test_equal_agents_show_no_significant_change(runs, tmp_path):
    res = usersim("compare", str(runs["a"]), str(runs["same"]), "--out", str(tmp_path), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("no significant change: ") and "within noise" in last
    data = compare_json(tmp_path)
    assert not data["verdict"]["regression"] and data["suite"]["pairs"] == 24
    assert data["suite"]["decided"] == 24 and not data["unpaired"]
    # the agent is noisy on both sides: its flip rate is reported apart from the change
    for side, run_dir in (("a", runs["a"]), ("b", runs["same"])):
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        assert data["noise"][f"agent_flip_rate_{side}"] == summary["repeats"]["flip_rate"] > 0
    assert (tmp_path / "compare.html").is_file()


def test_a_worse_agent_is_a_significant_regression_and_exits_1(runs, tmp_path):
    res = usersim("compare", str(runs["a"]), str(runs["worse"]), "--out", str(tmp_path), check=False)
    assert res.returncode == 1, res.stdout + res.stderr
    data = compare_json(tmp_path)
    assert data["verdict"]["regression"] and data["suite"]["significant"]
    assert data["suite"]["delta"] < -0.3
    assert data["verdict"]["line"].startswith("regression: ")
    lines = {line.split()[0]: line for line in res.stdout.splitlines() if line.startswith("CONFIRM-")}
    assert set(lines) == {"CONFIRM-01", "CONFIRM-02"}
    for case in data["cases"]:
        assert case["worse"] > case["better"]
        assert case["verdict"] in ("significantly worse", "within noise")
        flip = next(f for f in case["flips"] if f["change"] == "worse")
        assert flip["divergence_turn"] == 1  # the first reply already differs
        page, anchor = flip["a_link"].split("#")
        assert (tmp_path / page).resolve() == (runs["a"] / "report.html").resolve() and anchor.startswith("r")
    # the CLI writes what the core computes from the same records
    a, _ = load_run(runs["a"])
    b, _ = load_run(runs["worse"])
    core = compare_records(a, b)
    assert [c["p_value"] for c in data["cases"]] == [c.p_value for c in core.cases]
    assert data["verdict"]["worse_cases"] == core.verdict.worse_cases


def test_compare_writes_into_run_b_by_default(runs):
    usersim("compare", str(runs["a"]), str(runs["same"]))
    assert (runs["same"] / "compare.json").is_file() and (runs["same"] / "compare.html").is_file()


def test_plan_repeats_from_the_observed_pass_rates(runs):
    res = usersim("plan-repeats", "--baseline", str(runs["a"]), "--detect", "0.6", "--json")
    plan = json.loads(res.stdout)
    rates = {c["case_id"]: c["baseline_rate"] for c in plan["cases"]}
    assert set(rates) == {"CONFIRM-01", "CONFIRM-02"} and all(0.6 < r <= 1 for r in rates.values())
    assert plan["current_repeats"] == 12 and plan["repeats"] is not None and plan["repeats"] <= 12
    assert plan["power"] >= 0.8 and plan["power_at_current"] >= plan["power"] - 0.05
    small = usersim("plan-repeats", "--baseline", str(runs["a"]), "--detect", "10")  # points
    assert "to detect it on every case at once (the suite): " in small.stdout
    assert (
        "to detect a drop of 10 points with power 80% at alpha 0.05 on any one case alone: " in small.stdout
    )


def test_run_baseline_folds_a_regression_into_the_exit_code(runs, tmp_path):
    # --fail-under 0: the gate alone is green, so the exit code is compare's
    res = run(tmp_path / "same", "p90", "4", "--baseline", str(runs["a"]), "--fail-under", "0")
    assert res.returncode == 0, res.stdout + res.stderr
    assert compare_json(tmp_path / "same")["verdict"]["exit_code"] == 0
    res = run(tmp_path / "worse", "p30", "5", "--baseline", str(runs["a"]), "--fail-under", "0")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "pass rate" in res.stderr and "regression: " in res.stdout
    assert "--baseline: compare exits 1" in res.stderr
    assert (tmp_path / "worse" / "compare.html").is_file()


def test_run_baseline_that_is_not_a_run_is_refused_before_running(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = run(tmp_path / "out", "p90", "1", "--baseline", str(empty))
    assert res.returncode == 2
    assert f"--baseline: {empty}/results.jsonl not found" in res.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_runs_of_different_suites_cannot_be_compared(runs, tmp_path):
    other = tmp_path / "other"
    usersim(
        "run",
        "examples/bank/cases",
        "--id",
        "BANK-04",
        "--agent",
        "python:examples.bank.agent:correct",
        "--out",
        str(other),
        "--no-progress",
    )
    res = usersim("compare", str(runs["a"]), str(other), "--out", str(tmp_path / "c"), check=False)
    assert res.returncode == 2
    assert "case not in run B (different suites)" in res.stdout
    assert res.stdout.strip().splitlines()[-1].startswith("nothing to compare")
    # run --baseline with a baseline of another suite: the run happens, then exit 2
    res = usersim(
        "run",
        "examples/bank/cases",
        "--id",
        "BANK-04",
        "--agent",
        "python:examples.bank.agent:correct",
        "--out",
        str(tmp_path / "b2"),
        "--no-progress",
        "--baseline",
        str(runs["a"]),
        check=False,
    )
    assert res.returncode == 2 and "--baseline: compare exits 2 (the gate alone: exit 0)" in res.stderr
    assert (tmp_path / "b2" / "results.jsonl").is_file() and (tmp_path / "b2" / "compare.json").is_file()


def test_missing_results_and_missing_scipy_are_usage_errors(runs, tmp_path, monkeypatch):
    res = usersim("compare", str(runs["a"]), str(tmp_path), check=False)
    assert res.returncode == 2 and f"{tmp_path}/results.jsonl not found" in res.stderr
    monkeypatch.setitem(sys.modules, "scipy", None)
    res = usersim("compare", str(runs["a"]), str(runs["same"]), check=False)
    assert res.returncode == 2
    assert "pip install 'usersim-harness[compare]'" in res.stderr
