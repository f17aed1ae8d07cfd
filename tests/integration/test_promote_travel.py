"""A promoted case travels: it references the domain's files (state, tools, policy, persona) by
paths relative to itself, so the domain folder with its regressions copied to another folder on
another path still validates and runs; its title is in the case's language; the strict form keeps
final_state, judged on the state the replayed history left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from tests.support.cli import REPO, usersim

FLAWED, CORRECT = "python:examples.bank.agent:flawed", "python:examples.bank.agent:correct"


def records(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]


def test_promoted_bank_cases_travel_to_another_folder_and_keep_their_checks(tmp_path):
    bank = tmp_path / "a" / "bank"
    shutil.copytree(REPO / "examples/bank", bank)
    run = tmp_path / "a" / "run"
    usersim(
        "run",
        str(bank / "cases"),
        "--id",
        "BANK-03",
        "--agent",
        FLAWED,
        "--out",
        str(run),
        "--no-progress",
        check=False,
    )
    (rec,) = records(run)
    assert rec["status"] == "failed"
    paths = {}
    for form in ("prefix", "strict"):
        res = usersim(
            "promote",
            str(run),
            rec["id"],
            "--to",
            str(bank / "regressions"),
            "--form",
            form,
            "--cases",
            str(bank / "cases"),
        )
        paths[form] = Path(res.stdout.strip())
    for form, path in paths.items():
        text = path.read_text(encoding="utf-8")
        case = yaml.safe_load(text)
        assert str(tmp_path) not in text  # no absolute path anywhere
        assert case["environment"]["state"] == "../state.yaml"
        assert case["environment"]["tools"][0] == {"python": "../bank_tools.py"}
        assert case["policy"] == "../policy.md"  # referenced, not inlined
        assert case["persona"] == "../personas/tom-replacement.yaml"
        assert "回归" not in case["title"] and "regression" in case["title"]  # an English case
        kinds = [next(iter(c)) for c in case["judging"]["checks"]]
        assert "final_state" in kinds and "tool_called" in kinds, (form, kinds)
    # the domain with its regressions, moved elsewhere: the old folder is gone
    moved = tmp_path / "b" / "deeper" / "bank"
    shutil.copytree(bank, moved)
    shutil.rmtree(tmp_path / "a")
    regs = moved / "regressions"
    res = usersim("validate", str(regs))
    assert "0 with problems" in res.stdout + res.stderr
    out = tmp_path / "b" / "flawed"
    again = {r["case_id"]: r for r in records_of(regs, FLAWED, out, "--simulator", "rule")}
    strict, prefix = again[paths["strict"].stem], again[paths["prefix"].stem]
    fs = next(v for v in strict["verdicts"] if v["judge"] == "final_state")
    # the same failure on the moved copy: the agent insists on express shipping, the user (who
    # excludes it) refuses, and no replacement is ever ordered
    assert fs["verdict"] == "fail" and "replacement_orders R-1 missing" in fs["reason"]
    assert prefix["status"] == "failed"
    fixed = {
        r["case_id"]: r for r in records_of(regs, CORRECT, tmp_path / "b" / "correct", "--simulator", "rule")
    }
    assert fixed[prefix["case_id"]]["status"] == "passed", fixed[prefix["case_id"]]["verdicts"]


def records_of(folder: Path, agent: str, out: Path, *extra: str) -> list[dict]:
    usersim("run", str(folder), "--agent", agent, "--out", str(out), "--no-progress", *extra, check=False)
    return records(out)


def test_a_chinese_case_promotes_with_a_chinese_title_and_strict_keeps_every_reply_check(tmp_path):
    run = tmp_path / "run"
    usersim(
        "run",
        "usersim/cases/b1/B1-IF-01.yaml",
        "--agent",
        "reference",
        "--out",
        str(run),
        "--no-progress",
        check=False,
    )
    rec = records(run)[0]
    res = usersim("promote", str(run), rec["id"], "--to", str(tmp_path / "reg"), "--form", "strict")
    case = yaml.safe_load(Path(res.stdout.strip()).read_text(encoding="utf-8"))
    assert "严格回归" in case["title"] and "strict regression" not in case["title"]
    source = yaml.safe_load((REPO / "usersim/cases/b1/B1-IF-01.yaml").read_text(encoding="utf-8"))
    kept = [next(iter(c)) for c in case["judging"]["checks"]]
    dropped = [next(iter(c)) for c in source["judging"]["checks"] if next(iter(c)) not in kept]
    # what a one-reply case cannot judge is said, never silently dropped
    for kind in dropped:
        assert kind in case.get("notes", ""), (kind, case.get("notes"))
