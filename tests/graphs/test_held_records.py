"""A small run keeps its records as they are stored, with their report sections rendered then: at
the end nothing is parsed again and summary.json and report.html are byte for byte what the run
folder's store gives. A large or resumed run keeps nothing; a record changed after it was kept is
rendered anew."""

from __future__ import annotations

import usersim
from tests.reports.factory import record as make_record
from tests.support.parses import count_parses
from usersim.core.record import RunRecord, TranscriptMessage
from usersim.core.verdict import Verdict
from usersim.graphs import outputs
from usersim.graphs.outputs import HeldRecords
from usersim.graphs.store import RunStore
from usersim.reports.html_transcript import ANCHOR, placed, render_record, section

CASES = ["B1-EI-01", "B1-EI-04", "C2-TD-04"]  # static replays and an organic (rule simulator) case


def test_a_small_run_parses_nothing_at_the_end_and_writes_what_its_store_gives(tmp_path, monkeypatch):
    out = tmp_path / "run"
    seen = count_parses(monkeypatch)
    result = usersim.run(CASES, agent="reference", repeats=2, out=out)
    assert seen[0] == 0  # the summary, the report and result.records read the records kept
    n = len(result.records)  # B1 cases run as skill groups A and B
    assert n == 10 and seen[0] == 0
    summary, report = (out / "summary.json").read_bytes(), (out / "report.html").read_bytes()
    store = RunStore(out / "results.sqlite")
    try:  # the same outputs written the old way, every record parsed from the store
        outputs.write_outputs(out, store, store.get_meta())
    finally:
        store.close()
    assert seen[0] == n
    assert (out / "summary.json").read_bytes() == summary
    assert (out / "report.html").read_bytes() == report


def _record(content: str) -> RunRecord:
    return make_record(
        "C2-TD-04",
        status="failed",
        mode="organic",
        transcript=[
            TranscriptMessage(role="user", content=content, turn=1),
            TranscriptMessage(role="assistant", content='"<#>" & <b>', turn=1),
        ],
        verdicts=[Verdict(judge="keywords", verdict="fail", reason="missing <#>", evidence_turn=1)],
    )


def test_a_section_made_early_is_the_record_rendered_in_its_place():
    record = _record(f"text with the placeholder itself: {ANCHOR} and r0-m1")
    made = section(record)
    assert ANCHOR in made  # the anchors are left open ...
    for n in (0, 7, 199):  # ... and numbered where the page puts the record
        assert placed(made, n) == render_record(record, n)
        assert f'id="r{n}"' in placed(made, n) and ANCHOR not in placed(made, n)


def test_only_the_very_record_kept_uses_its_section():
    record = _record("hi")
    kept = HeldRecords(1)
    kept.add(record, record.model_dump_json())
    assert kept.records([(record.id, record.case_id, record.status)]) == [record]
    assert set(kept.sections([record])) == {record.id}
    changed = record.model_copy(update={"verdicts": []})  # e.g. the re-check added or took verdicts
    assert kept.sections([changed]) == {}


def test_a_large_resumed_or_oversized_run_keeps_nothing(monkeypatch):
    record = _record("hi")
    brief = [(record.id, record.case_id, record.status)]
    for kept in (HeldRecords(outputs.HOLD_RECORDS + 1), HeldRecords(1, stored_before=3), HeldRecords(0)):
        kept.add(record, record.model_dump_json())
        assert not kept.on and kept.records(brief) is None and kept.sections([record]) == {}
    monkeypatch.setattr(outputs, "HOLD_CHARS", 10)  # the JSON kept would pass the budget
    kept = HeldRecords(2)
    kept.add(record, record.model_dump_json())
    assert not kept.on and kept.records(brief) is None and kept.sections([record]) == {}


def test_a_record_missing_from_what_was_kept_sends_the_outputs_to_the_store():
    kept = HeldRecords(2)
    record = _record("hi")
    kept.add(record, record.model_dump_json())
    other = ("C-2|r0", "C-2", "passed")  # stored by someone else (a resumed run's earlier record)
    assert kept.records([(record.id, record.case_id, record.status), other]) is None
