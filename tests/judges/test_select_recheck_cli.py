"""Seed 003's 20% rule-to-LLM re-check through `usersim run` with the scripted judge server over
real HTTP: exactly ceil(20%) of the rule-passed auto-only conversations are re-checked, every
dimension within one conversation of its 20%; the same seed samples the same conversations on a
second run, on --resume and on rescore; the rule/LLM agreement is in summary.json and the report,
flagged when the deviation exceeds 10%."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path

import pytest

from tests.judges.test_judge_trust_cli import ECHO, judge_answer, records
from tests.support.cli import usersim
from tests.support.openai_stub import OpenAIStub

CASE = """\
id: {id}
dimension: {dim}
title: 复述
mode: static
input:
  message: 帮我订机票 {id}
judging:
  pass_criteria: [回复复述了用户的请求]
  scoring:
    methods: {methods}
  checks:
    - keywords: {{any: [{word}]}}
"""
# dimension -> (auto-only cases the echo agent passes, cases it fails, cases not auto-only)
SUITE = {"B1": (9, 2, 0), "C1": (2, 0, 1), "MT": (12, 1, 0), "C2": (7, 0, 0)}
ELIGIBLE = {d: n for d, (n, _, _) in SUITE.items()}


def write_suite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for dim, (ok, bad, mixed) in SUITE.items():
        kinds = [("ok", "[auto]", "收到")] * ok + [("bad", "[auto]", "从未说过")] * bad
        kinds += [("mix", "[auto, human]", "收到")] * mixed
        for i, (kind, methods, word) in enumerate(kinds):
            cid = f"{dim}-{kind.upper()}-{i:02d}"
            (folder / f"{cid}.yaml").write_text(
                CASE.format(id=cid, dim=dim, methods=methods, word=word), encoding="utf-8"
            )
    return folder


class Judge:
    """Agrees with the rules except on the MT conversations; records which case each request judged."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, body: dict) -> dict:
        text = body["messages"][0]["content"]
        cid = re.search(r"\b([A-Z0-9]+-(?:OK|BAD|MIX)-\d\d)\b", text).group(1)
        self.seen.append(cid)
        return judge_answer(body, "fail" if cid.startswith("MT-") else "pass")


@pytest.fixture
def judge(monkeypatch):
    j = Judge()
    stub = OpenAIStub(responder=j).start()
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stub-key-123456")
    monkeypatch.setenv("USERSIM_NO_CACHE", "1")  # every request reaches the judge: it counts what was asked
    yield j
    stub.stop()


def run(cases: Path, out: Path, *extra: str) -> dict:
    """`usersim run` of the suite (exit 1: the suite has cases the echo agent fails)."""
    args = [
        "run",
        str(cases),
        "--agent",
        ECHO,
        "--judge-model",
        "openai:j",
        "--out",
        str(out),
        "--no-progress",
    ]
    res = usersim(*args, *extra, check=False)
    assert res.returncode == 1, res.stdout + res.stderr
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def rechecked(out: Path) -> list[str]:
    return sorted(
        r["id"] for r in records(out) if any((v.get("details") or {}).get("recheck") for v in r["verdicts"])
    )


def test_exactly_twenty_percent_overall_and_within_one_per_dimension(tmp_path, judge):
    cases = write_suite(tmp_path / "cases")
    summary = run(cases, tmp_path / "run")
    rc = summary["recheck"]
    total = sum(ELIGIBLE.values())
    assert rc["eligible"] == total and rc["sampled"] == math.ceil(0.2 * total) == len(judge.seen)
    assert {d: n["eligible"] for d, n in rc["by_dimension"].items()} == ELIGIBLE
    for dim, n in rc["by_dimension"].items():
        assert n["sampled"] in (math.floor(0.2 * n["eligible"]), math.ceil(0.2 * n["eligible"])), dim
        assert abs(n["sampled"] - 0.2 * n["eligible"]) < 1
        assert sum(c.startswith(dim + "-") for c in judge.seen) == n["sampled"]
    assert sum(n["sampled"] for n in rc["by_dimension"].values()) == rc["sampled"]
    assert all("-OK-" in c for c in judge.seen)  # never a rule-failed or not auto-only conversation
    recs = records(tmp_path / "run")
    assert all(r["status"] == "passed" for r in recs if "-OK-" in r["case_id"])  # the re-check never decides
    assert len(rechecked(tmp_path / "run")) == rc["sampled"]


def test_agreement_is_reported_and_a_deviation_over_ten_percent_flagged(tmp_path, judge):
    cases = write_suite(tmp_path / "cases")
    summary = run(cases, tmp_path / "run")
    rc = summary["recheck"]
    mt = rc["by_dimension"]["MT"]["sampled"]
    assert mt >= 2  # 20% of 12
    assert rc["agreement"]["items"] == rc["sampled"]
    assert rc["agreement"]["agreement"] == round(1 - mt / rc["sampled"], 4)
    assert rc["deviation"] == round(mt / rc["sampled"], 4) and rc["deviation"] > 0.10 and rc["flagged"]
    assert rc["agreement_by_dimension"]["MT"]["agreement"] == 0.0
    assert rc["agreement_by_dimension"]["B1"]["agreement"] == 1.0
    assert sorted(rc["agreement_by_dimension"]["MT"]["disagreements"]) == sorted(
        i for i in rechecked(tmp_path / "run") if i.startswith("MT-")
    )
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    part = html[html.index('id="recheck"') :].split("</section>")[0]
    assert f"{rc['sampled']} of {rc['eligible']} rule-passed auto-only conversations" in part
    assert "is above 10%" in part and "check whether the rules are too coarse" in part


def test_same_seed_same_sample_on_rerun_resume_and_rescore(tmp_path, judge):
    cases = write_suite(tmp_path / "cases")
    run(cases, tmp_path / "a")
    first = rechecked(tmp_path / "a")
    run(cases, tmp_path / "b")
    assert rechecked(tmp_path / "b") == first
    other = run(cases, tmp_path / "c", "--seed", "7")
    assert other["recheck"]["sampled"] == len(first)  # another seed: another sample of the same size
    # resume: drop some records (one of them re-checked) and continue; the sample is the fresh run's
    db = sqlite3.connect(tmp_path / "a" / "results.sqlite")
    dropped = [first[0], "B1-OK-00|r0", "C2-OK-03|r0"]
    db.executemany("DELETE FROM records WHERE id = ?", [(i,) for i in dropped])
    db.commit()
    db.close()
    judge.seen.clear()
    run(cases, tmp_path / "a", "--resume")
    assert rechecked(tmp_path / "a") == first
    asked = {f"{c}|r0" for c in judge.seen}
    assert asked == set(dropped) & set(first)  # records re-checked before keep their verdicts
    judge.seen.clear()
    usersim("rescore", str(tmp_path / "a"), "--judge-model", "openai:j")
    assert rechecked(tmp_path / "a") == first and len(judge.seen) == len(first)


def test_without_a_judge_model_there_is_no_recheck(tmp_path):
    cases = write_suite(tmp_path / "cases")
    res = usersim(
        "run", str(cases), "--agent", ECHO, "--out", str(tmp_path / "run"), "--no-progress", check=False
    )
    assert res.returncode == 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["recheck"] is None and rechecked(tmp_path / "run") == []
