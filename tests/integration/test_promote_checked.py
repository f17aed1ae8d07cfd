"""`usersim promote` writes a case only once it has run and stood for its record: it fails (passes)
with the record's agent as the record did, and passes with the correct agent given by --against.
A strict case cut at a turn where the agent had not gone wrong yet (issue 42: "it picked failing
turn 1") fails the correct agent too: it is never written, and the command says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO, usersim

BANK = str(REPO / "examples/bank/cases")
FLAWED, CORRECT = "python:examples.bank.agent:flawed", "python:examples.bank.agent:correct"


@pytest.fixture(scope="module")
def bank_flawed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bank") / "flawed"
    usersim(
        "run",
        BANK,
        "--id",
        "BANK-02",
        "--id",
        "BANK-08",
        "--agent",
        FLAWED,
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    return out


def _promote(run: Path, record: str, to: Path, *extra: str):
    return usersim("promote", str(run), record, "--to", str(to), *extra, check=False)


def _status(case: Path, agent: str, out: Path) -> str:
    usersim("run", str(case), "--agent", agent, "--out", str(out), "--no-progress", check=False)
    (row,) = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return row["status"]


def test_a_strict_case_the_correct_agent_also_fails_is_not_written(bank_flawed, tmp_path):
    to = tmp_path / "reg"
    res = _promote(bank_flawed, "BANK-02|r0", to, "--form", "strict", "--against", CORRECT, "--cases", BANK)
    assert res.returncode == 1
    assert "not written: no strict case from record BANK-02|r0 stands for it" in res.stderr
    assert f"failing turn 1: fails the correct agent too: with {CORRECT} it failed" in res.stderr
    assert "block_card was never called" in res.stderr and "--form prefix" in res.stderr
    assert not to.exists() or not list(to.iterdir())  # nothing left behind, not even the unchecked file
    # the prefix form lets the simulated user go on past the cut: it stands for the record
    ok = _promote(bank_flawed, "BANK-02|r0", to, "--against", CORRECT, "--cases", BANK)
    assert ok.returncode == 0, ok.stderr
    assert [p.name for p in to.iterdir()] == [Path(ok.stdout.strip()).name]


def test_strict_moves_past_a_turn_that_proves_nothing_and_the_case_separates_the_agents(
    bank_flawed, tmp_path
):
    to = tmp_path / "reg"
    res = _promote(bank_flawed, "BANK-08|r0", to, "--form", "strict", "--against", CORRECT, "--cases", BANK)
    assert res.returncode == 0, res.stderr
    path = Path(res.stdout.strip())
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["promoted_from"]["failing_turn"] > 1
    assert _status(path, FLAWED, tmp_path / "f") == "failed"
    assert _status(path, CORRECT, tmp_path / "c") == "passed"
    # an explicit --at-turn is taken as given: turn 2 is cut before the flaw, so nothing is written
    at2 = _promote(
        bank_flawed,
        "BANK-08|r0",
        tmp_path / "r2",
        "--form",
        "strict",
        "--at-turn",
        "2",
        "--against",
        CORRECT,
        "--cases",
        BANK,
    )
    assert at2.returncode == 1 and "failing turn 2: fails the correct agent too" in at2.stderr


def test_a_travel_seed_strict_case_the_reference_agent_fails_is_not_written(tmp_path):
    run = tmp_path / "run"
    usersim(
        "run",
        "--id",
        "C2-TD-04",
        "--agent",
        "reference:flaw=no-clarify",
        "--out",
        str(run),
        "--no-progress",
        check=False,
    )
    res = _promote(run, "C2-TD-04|r0", tmp_path / "reg", "--form", "strict", "--against", "reference")
    assert res.returncode == 1
    assert "failing turn 1: fails the correct agent too: with reference it failed" in res.stderr
    assert "search_flights was never called" in res.stderr
    assert not (tmp_path / "reg").exists() or not list((tmp_path / "reg").iterdir())
