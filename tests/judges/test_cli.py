import json

from click.testing import CliRunner

from usersim.cli.judges import judges
from usersim.judges.human import QUEUED


def _write_run(tmp_path):
    recs = []
    for i in range(10):
        agree = i < 8
        recs.append(
            {
                "id": f"C-{i}|r0",
                "case_id": f"C-{i}",
                "status": "passed",
                "score": 1.0,
                "transcript": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                "verdicts": [
                    {"judge": "keywords", "verdict": "pass", "reason": "r", "criterion": "keywords {}"},
                    {
                        "judge": "llm_rubric",
                        "verdict": "pass" if agree else "fail",
                        "reason": "l",
                        "criterion": "c",
                    },
                ],
            }
        )
    recs[0]["verdicts"].append(
        {"judge": "human", "verdict": "unjudged", "reason": QUEUED, "criterion": "多余反问"}
    )
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8"
    )
    return run


def test_list_shows_judges_and_check_params():
    res = CliRunner().invoke(judges, ["list", "--json"])
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert {"rules", "llm_rubric", "milestones", "drift", "human", "task_completion"} <= {
        j["name"] for j in data["judges"]
    }
    tool_called = next(c for c in data["checks"] if c["name"] == "tool_called")
    assert [p["name"] for p in tool_called["params"]] == [
        "tool",
        "args",
        "min_calls",
        "spans",
        "or_each_of",
        "allow_error",
    ]


def test_calibrate_flags_rule_llm_deviation(tmp_path):
    run = _write_run(tmp_path)
    res = CliRunner().invoke(judges, ["calibrate", str(run / "results.jsonl")])
    assert res.exit_code == 0
    assert "rules vs llm_rubric: 10 items, agreement 80.0%, kappa 0.000, target >= 90% [FLAG]" in res.output
    assert "disagreements: C-8|r0, C-9|r0" in res.output


def test_review_export_then_import(tmp_path):
    run = _write_run(tmp_path)
    out = tmp_path / "review.jsonl"
    res = CliRunner().invoke(judges, ["review-export", str(run), "--to", str(out)])
    assert res.exit_code == 0 and "(1 queued, 2 calibration sample)" in res.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["label"] = "fail" if r["source"] == "queued" else r["verdict"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    res = CliRunner().invoke(judges, ["review-import", str(run), str(labels)])
    assert res.exit_code == 0, res.output
    assert "applied 1 human verdict(s) and 2 calibration label(s)" in res.output
    first = json.loads((run / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["status"] == "failed" and first["verdicts"][-1]["reason"] == "human label: fail"
    assert (run / "results.jsonl.bak").is_file()
    res = CliRunner().invoke(judges, ["calibrate", str(run), "--human", str(labels)])
    assert "llm_rubric vs human: 2 items, agreement 100.0%" in res.output


def test_review_import_errors_are_actionable(tmp_path):
    run = _write_run(tmp_path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"record_id": "C-0|r0", "criterion": "多余返问", "label": "pass"}\n', encoding="utf-8")
    res = CliRunner().invoke(judges, ["review-import", str(run), str(labels)])
    assert res.exit_code == 1
    assert "record 'C-0|r0' has no verdict for criterion '多余返问'. Did you mean '多余反问'?" in res.output
