"""Seed 001's complexity curve (复杂度衰减曲线) from a CLI run of C2-CD-01..04: summary.json's
`complexity` holds the success rate at 2 / 5 / 8 / 10 task steps, computed from the records, and
report.html charts it."""

from __future__ import annotations

import json

from tests.support.cli import usersim

CD = ["C2-CD-01", "C2-CD-02", "C2-CD-03", "C2-CD-04"]


def test_c2_run_gives_success_rate_by_task_steps(tmp_path):
    out = tmp_path / "run"
    ids = [a for c in CD for a in ("--id", c)]
    usersim("run", "usersim/cases", *ids, "--repeats", "2", "--out", str(out), "--no-progress", check=False)
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert len(recs) == 8 and {r["steps"] for r in recs} == {2, 5, 8, 10}
    (curve,) = summary["complexity"]
    assert curve["dimension"] == "C2"
    assert [p["steps"] for p in curve["points"]] == [2, 5, 8, 10]
    for p in curve["points"]:
        mine = [r for r in recs if r["steps"] == p["steps"]]
        assert p["cases"] == sorted({r["case_id"] for r in mine}) and p["conversations"] == 2
        passed = sum(r["status"] == "passed" for r in mine)
        judged = sum(r["status"] in ("passed", "failed", "error") for r in mine)
        assert (p["passed"], p["judged"]) == (passed, judged)
        assert p["success_rate"] == (passed / judged if judged else None)
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html[html.index('id="complexity"') :]
    assert "Success rate by task steps" in section and "<svg" in section
    assert "C2-CD-04" in section.split("</section>")[0]


def test_one_step_count_is_no_curve(tmp_path):
    out = tmp_path / "run"
    usersim("run", "usersim/cases", "--id", "C2-CD-01", "--out", str(out), "--no-progress", check=False)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["complexity"] == []
    assert 'id="complexity"' not in (out / "report.html").read_text(encoding="utf-8")
