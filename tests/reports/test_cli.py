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
