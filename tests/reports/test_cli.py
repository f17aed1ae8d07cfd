"""`usersim report RUN_DIR` rebuilds summary.json and report.html from results.jsonl."""

from __future__ import annotations

import json

from click.testing import CliRunner

from usersim.cli.report import report

from .factory import record, transcript_record


def _write_results(run_dir, records):
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "results.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )


def test_report_rebuilds_summary_and_html(tmp_path):
    run = tmp_path / "run"
    _write_results(run, [transcript_record(), record("B1-CL-01", status="failed")])
    (run / "summary.json").write_text(json.dumps({"meta": {"run_id": "kept-run", "agent": "reference"}}))
    result = CliRunner().invoke(report, [str(run)])
    assert result.exit_code == 0, result.output
    assert "2 conversations: 0 passed, 1 failed, 0 error, 1 unjudged" in result.output
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["meta"]["run_id"] == "kept-run"  # the previous meta survives the rebuild
    assert (
        summary["totals"]["failed"] == 1 and summary["unjudged"][0]["reason"] == "no judge model configured"
    )
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "kept-run" in html and "B1-CL-01" in html


def test_report_without_previous_summary_takes_meta_from_records(tmp_path):
    run = tmp_path / "run"
    _write_results(run, [record()])
    assert CliRunner().invoke(report, [str(run)]).exit_code == 0
    meta = json.loads((run / "summary.json").read_text(encoding="utf-8"))["meta"]
    assert meta["run_id"] == "run-test" and meta["agent"] == "reference"


def test_missing_results_is_an_actionable_error(tmp_path):
    result = CliRunner().invoke(report, [str(tmp_path)])
    assert result.exit_code == 1
    assert "results.jsonl not found. Point RUN_DIR at the --out directory of `usersim run`." in result.output


def test_bad_line_names_file_line_and_field(tmp_path):
    run = tmp_path / "run"
    _write_results(run, [record()])
    bad = json.loads(record("B1-EI-02").model_dump_json())
    bad["status"] = "maybe"
    with (run / "results.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(bad) + "\n")
    result = CliRunner().invoke(report, [str(run)])
    assert result.exit_code == 1
    assert "results.jsonl:2: status: Input should be" in result.output


def test_main_cli_exposes_report():
    from click.testing import CliRunner

    from usersim.cli import main

    out = CliRunner().invoke(main, ["--help"]).output
    assert "report" in out and "Rebuild summary.json" in out
    assert main.get_command(None, "report").name == "report"


def test_report_shows_c5_accuracy_lost_in_the_middle_per_case_and_c1_scores(tmp_path):
    """Issue #11 acceptance through the CLI: summary.json and report.html carry accuracy as
    passed / decided with the decided counts, lost in the middle per case, the C1 0-5 distribution."""
    from usersim.core.verdict import Verdict
    from usersim.judges.llm_rubric import C1_CRITERION

    def c1(case_id, total, repeat=0):
        verdicts = [
            Verdict(judge="tool_called", verdict="pass", reason="ok"),
            Verdict(
                judge="llm_rubric",
                verdict="inconclusive",
                reason=f"C1 rubric {total}/5",
                criterion=C1_CRITERION,
                counts_toward_status=False,
                details={"total": total},
            ),
        ]
        return record(case_id, repeat=repeat, verdicts=verdicts)

    recs = [
        record("C5-MI-01", length="32k", position="beginning", status="passed", score=1.0),
        record("C5-MI-01", length="32k", position="middle", status="failed", score=0.9),
        record("C5-MI-01", length="32k", position="middle", status="unjudged", score=0.9, repeat=1),
        record("C5-MI-01", length="32k", position="end", status="passed", score=1.0),
        record("C5-MI-01", length="4k", position="middle", status="passed", score=1.0),
        record("C5-LT-01", length="4k", position="beginning", status="passed"),
        record("C5-LT-01", length="32k", position="beginning", status="error"),
        c1("C1-SF-01", 4),
        c1("C1-SF-01", 4, 1),
        c1("C1-SF-02", 1),
    ]
    run = tmp_path / "run"
    _write_results(run, recs)
    result = CliRunner().invoke(report, [str(run)])
    assert result.exit_code == 0, result.output
    s = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    lc = s["long_context"]
    # 32k: 2 passed of 4 decided (the gate's rule: LT-01's error is decided and not a pass; the
    # unjudged middle is left out, and shown)
    k32 = lc["length_counts"]["32k"]
    assert (k32["passed"], k32["decided"], k32["unjudged"], k32["error"], k32["accuracy"]) == (
        2,
        4,
        1,
        1,
        0.5,
    )
    assert k32["accuracy_text"] == "2/4 = 50.0% (left out: 1 unjudged)"
    assert lc["by_length"] == {"4k": 1.0, "32k": 0.5}
    assert lc["degradation_rate"] == 0.5
    mi = next(c for c in lc["cases"] if c["case_id"] == "C5-MI-01")
    assert mi["by_position"] == {"beginning": 1.0, "middle": 0.5, "end": 1.0}
    assert mi["lost_in_the_middle"] is True
    lt = next(c for c in lc["cases"] if c["case_id"] == "C5-LT-01")
    assert lt["lost_in_the_middle"] is None and "no run at middle, end" in lt["lost_in_the_middle_note"]
    assert (lc["lost_in_the_middle_cases"], lc["position_incomplete"]) == (["C5-MI-01"], ["C5-LT-01"])
    assert s["c1_rubric"]["distribution"] == {"0": 0, "1": 1, "2": 0, "3": 0, "4": 2, "5": 0}
    assert s["c1_rubric"]["mean_total"] == 3.0
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "32k 2/4 = 50.0% (left out: 1 unjudged)" in html
    assert "<b>C5-MI-01</b> of 1 case(s) with all three positions" in html
    assert "No verdict for 1 case(s) lacking a position: C5-LT-01." in html
    assert "3 run(s) scored, mean <b>3.00</b> / 5" in html
