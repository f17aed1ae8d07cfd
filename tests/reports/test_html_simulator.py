"""report.html: blame counts beside the pass rate, and simulator-suspects listed apart with their reason."""

from __future__ import annotations

import re

from usersim.core.verdict import Verdict
from usersim.reports.html import render_report
from usersim.reports.summary import build_summary

from .factory import record


def _fidelity(name: str, ok: bool, reason: str) -> Verdict:
    return Verdict(judge=name, verdict="pass" if ok else "fail", reason=reason, counts_toward_status=False)


def _records():
    suspect = record(
        "C2-PR-01",
        status="failed",
        blame="simulator",
        simulator_suspect=True,
        verdicts=[
            Verdict(judge="tool_called", verdict="fail", reason="booked nothing"),
            _fidelity("fidelity.leak", False, "turn 2 states the hidden budget 8000"),
            _fidelity("fidelity.language", True, "all turns in zh"),
        ],
    )
    agent_fail = record(
        "B1-CL-01",
        status="failed",
        blame="agent",
        verdicts=[
            Verdict(judge="asked_clarification", verdict="fail", reason="asked 0 questions, expected 3")
        ],
    )
    outage = record("B1-CL-02", status="error", blame="infrastructure", error="agent endpoint timed out")
    return [record("B1-EI-01", blame="none"), agent_fail, suspect, outage]


def _section(page: str) -> str:
    m = re.search(r'<section id="simulator-suspects">(.*?)</section>', page, re.S)
    assert m, "no blame / suspects section"
    return m.group(1)


def test_suspect_listed_with_failed_check_reason_and_link_normal_failure_not():
    records = _records()
    summary = build_summary(records, {"run_id": "r"})
    sec = _section(render_report(records, summary))
    suspects = re.search(r'<table class="suspects">(.*?)</table>', sec, re.S).group(1)
    # the suspect: id linked to its transcript (3rd record in the viewer -> #r2), the failed check and why
    assert '<a href="#r2">C2-PR-01|r0</a>' in suspects
    assert "fidelity.leak" in suspects and "turn 2 states the hidden budget 8000" in suspects
    assert "fidelity.language" not in suspects  # a passing fidelity check is not a reason
    assert "booked nothing" not in suspects  # the agent-facing verdict is not the simulator's fault
    # a normal (agent) failure and the outage are not suspects
    assert "B1-CL-01" not in suspects and "asked 0 questions" not in suspects
    assert "B1-CL-02" not in suspects
    assert 'id="r2"' in render_report(records, summary)  # the link has a target


def test_blame_counts_from_summary_beside_pass_rate():
    records = _records()
    summary = build_summary(records, {"run_id": "r"})
    assert summary["blame"] == {"agent": 1, "simulator": 1, "infrastructure": 1}
    blame = re.search(r'<table class="blame">(.*?)</table>', _section(render_report(records, summary)), re.S)
    rows = dict(re.findall(r"<tr><td>([^<]*)</td><td[^>]*>([^<]*)</td></tr>", blame.group(1)))
    # the gate's rule: the status decides (simulator_suspect is a display field), an error is judged
    # and not a pass: 1 passed / (1 passed + 2 failed + 1 error)
    assert rows["pass rate"] == "1/4 = 25.0%"
    assert (
        rows["blame agent"] == "1" and rows["blame simulator"] == "1" and rows["blame infrastructure"] == "1"
    )
    # counts are read from summary.json, not recomputed from the records
    summary["blame"] = {"agent": 7}
    sec = _section(render_report(records, summary))
    assert re.search(r"blame agent</td><td[^>]*>7<", sec) and "blame simulator" not in sec


def test_no_section_when_nothing_charged_or_suspect():
    records = [record("B1-EI-01")]
    page = render_report(records, build_summary(records, {"run_id": "r"}))
    assert 'id="simulator-suspects"' not in page


def test_every_inconclusive_conversation_is_listed_and_left_out_of_the_pass_rate():
    inconclusive = [
        record(
            f"C2-PR-{i:02d}",
            status="inconclusive",
            blame="simulator",
            verdicts=[_fidelity("fidelity.leak", False, f"attempt {i}: states the hidden budget")],
        )
        for i in range(7)
    ]
    records = [record("B1-EI-01", blame="none"), *inconclusive]
    sec = _section(render_report(records, build_summary(records, {"run_id": "r"})))
    assert "Inconclusive conversations (7, all listed)" in sec
    listed = re.search(r'<table class="inconclusive">(.*?)</table>', sec, re.S).group(1)
    assert all(f">{r.id}</a>" in listed for r in inconclusive)
    assert "attempt 6: states the hidden budget" in listed
    assert "1/1 = 100.0% (left out: 7 inconclusive)" in sec
