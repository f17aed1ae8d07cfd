"""A case regex that could hang a run is reported by `usersim validate` as file:line and exit 2, and
`usersim run` refuses it before any conversation; a safe one validates and decides (issue #22)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support.cli import usersim

TEMPLATE = (Path(__file__).parent / "data" / "regex_case.yaml").read_text(encoding="utf-8")


def _case(tmp_path: Path, pattern: str = "机票|酒店", about: str = "预算") -> Path:
    path = tmp_path / "RX-01.yaml"
    path.write_text(TEMPLATE.replace("PATTERN", pattern).replace("ABOUT", about), encoding="utf-8")
    return path


def _line(needle: str) -> int:
    return next(i for i, ln in enumerate(TEMPLATE.splitlines(), 1) if needle in ln)


def test_pathological_count_pattern_is_reported_with_file_and_line(tmp_path):
    path = _case(tmp_path, pattern="(a+)+$")
    res = usersim("validate", str(path), check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    out = res.stdout + res.stderr
    want = f"{path}:{_line('- count:')}: judging.checks.0: count.pattern: regex '(a+)+$' could take exponential time"
    assert want in out, out
    assert "a repeat inside a repeat" in out


def test_pathological_clarification_regex_is_reported(tmp_path):
    path = _case(tmp_path, about=r"(\\w+\\s?)+$")
    res = usersim("validate", str(path), check=False)
    out = res.stdout + res.stderr
    assert res.returncode == 2 and f"{path}:{_line('- asked_clarification:')}: judging.checks.1: " in out, out
    assert "asked_clarification.about" in out and "could take exponential time" in out


def test_run_refuses_the_case_before_any_conversation(tmp_path):
    path = _case(tmp_path, pattern="(a+)+$")
    start = time.perf_counter()
    res = usersim(
        "run", str(path), "--agent", "reference", "--out", str(tmp_path / "out"), "--no-progress", check=False
    )
    assert res.returncode == 2 and "nothing was run" in res.stderr
    assert time.perf_counter() - start < 30
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_safe_regex_validates_and_decides(tmp_path):
    # a lookbehind has no RE2 form: it runs on Python's re, being proven safe
    path = _case(tmp_path, pattern="(?<![\\\\d])(?:机票|酒店|花费|明细)", about="预算|多少")
    assert usersim("validate", str(path), check=False).returncode == 0
    out = tmp_path / "out"
    usersim("run", str(path), "--agent", "reference", "--out", str(out), "--no-progress", check=False)
    (rec,) = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    count = next(v for v in rec["verdicts"] if v["judge"] == "count")
    assert count["verdict"] in ("pass", "fail") and "distinct matches of /" in count["reason"]
