"""write_outputs parses a small run's records once, for the summary, the report and the records
view the run returns; a run the runner kept in hand as it stored it (outputs.HOLD_RECORDS) hands
those records to its view past the report's transcript limit too; a run larger than the limit
that nothing kept is streamed, never held."""

from __future__ import annotations

import json

import usersim
from tests.support.parses import count_parses
from usersim.core.record import RunRecord
from usersim.graphs import outputs
from usersim.graphs.store import RunStore


def test_a_small_run_is_parsed_once_and_its_view_gives_the_records_of_results_jsonl(tmp_path, monkeypatch):
    out = tmp_path / "run"
    usersim.run(["B1-EI-01", "B1-EI-04"], agent="reference", repeats=2, out=out)
    store = RunStore(out / "results.sqlite")
    try:
        meta, n = store.get_meta(), len(store.briefs())
        seen = count_parses(monkeypatch)
        view = outputs.write_outputs(out, store, meta)
        assert seen[0] == n  # one parse per record: summary, report and view share them
        lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
        on_disk = [RunRecord.model_validate_json(line) for line in lines]
        assert list(view) == on_disk and view[3] == on_disk[3]
        assert seen[0] == 2 * n  # only the lines parsed just above for the comparison
    finally:
        store.close()
    assert json.loads((out / "summary.json").read_text())["meta"]["run_id"] == meta["run_id"]


def test_a_run_larger_than_the_report_limit_is_streamed_not_held(tmp_path, monkeypatch):
    out = tmp_path / "run"
    usersim.run(["B1-EI-01", "B1-EI-04"], agent="reference", repeats=2, out=out)
    store = RunStore(out / "results.sqlite")
    n = len(store.briefs())
    monkeypatch.setattr("usersim.reports.html.TRANSCRIPT_LIMIT", n - 1)  # one record over the limit
    try:
        view = outputs.write_outputs(out, store, store.get_meta())
    finally:
        store.close()
    seen = count_parses(monkeypatch)
    assert len(list(view)) == n and seen[0] == n  # iterating reads results.jsonl: nothing was kept


def test_a_run_kept_in_hand_past_the_report_limit_gives_its_records_without_parsing_them(
    tmp_path, monkeypatch
):
    # the report shows 3 transcripts; the run (more than 3, fewer than HOLD_RECORDS) was kept as stored
    monkeypatch.setattr("usersim.reports.html.TRANSCRIPT_LIMIT", 3)
    out = tmp_path / "run"
    result = usersim.run(["B1-EI-01", "B1-EI-04"], agent="reference", repeats=2, out=out)
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert 3 < len(lines) <= outputs.HOLD_RECORDS
    seen = count_parses(monkeypatch)
    records = list(result.records)  # what the CLI reads to print a line per conversation
    assert seen[0] == 0
    assert records == [RunRecord.model_validate_json(line) for line in lines]
