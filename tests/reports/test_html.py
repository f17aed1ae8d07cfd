"""report.html: self-contained, escaped, and showing every record and verdict."""

from __future__ import annotations

import re
from html import escape

from usersim.core.verdict import Verdict
from usersim.reports.charts import line_chart
from usersim.reports.html import render_report, write_report
from usersim.reports.summary import build_summary

from .factory import record, transcript_record


def _page(records, meta=None, run_dir=None):
    return render_report(records, build_summary(records, meta or {"run_id": "run-1"}, run_dir=run_dir))


def _mixed_records():
    recs = [transcript_record()]
    recs.append(
        record(
            "B1-CL-01",
            status="failed",
            verdicts=[
                Verdict(
                    judge="asked_clarification",
                    verdict="fail",
                    reason="asked 1 question, expected at least 3",
                )
            ],
        )
    )
    for i in range(1, 4):
        recs += [
            record(f"B1-CL-{i:02d}", group="A"),
            record(f"B1-CL-{i:02d}", group="B", status="failed" if i == 1 else "passed", triggered=True),
        ]
    for length in ("4k", "32k"):
        for pos in ("beginning", "middle", "end"):
            recs.append(
                record(
                    "C5-MI-01",
                    length=length,
                    position=pos,
                    status="failed" if pos == "middle" and length == "32k" else "passed",
                    score=0.5 if pos == "middle" else 1.0,
                    context_tokens=[1000, 3000],
                )
            )
    recs.append(record("C5-MI-02", length="32k", position="middle", status="unjudged"))
    return recs


def test_page_is_self_contained():
    html = _page(_mixed_records())
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.IGNORECASE)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "<style>" in html and "<script>" in html and "<svg" in html


def test_transcript_text_is_escaped():
    html = _page([transcript_record()])
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "抱歉，查询超时 &amp; 请稍后 &quot;重试&quot;" in html
    # exactly one real script element: the page's own filter code
    assert html.count("<script>") == 1


def test_every_record_id_and_verdict_reason_is_shown():
    recs = _mixed_records()
    html = _page(recs)
    for n, r in enumerate(recs):
        assert f'id="r{n}"' in html
        assert f"<b>{escape(r.id)}</b>" in html
        for v in r.verdicts:
            assert v.reason in html
    assert "asked 1 question, expected at least 3" in html


def test_transcript_viewer_shows_tool_calls_results_and_markers():
    html = _page([transcript_record()])
    assert "search_flights" in html and "&quot;origin&quot;: &quot;上海&quot;" in html
    assert 'class="tag intercepted">intercepted' in html
    assert 'class="tag is-error">error' in html
    assert "turn 1" in html and "1 turn ·" in html
    assert "<pre>{\n &quot;error&quot;: &quot;timeout&quot;\n}</pre>" in html  # tool JSON indented
    # verdict evidence links to the message anchor
    assert 'href="#r0-m1"' in html and 'id="r0-m1"' in html
    assert 'data-status="unjudged"' in html and 'data-dimension="B1"' in html
    assert 'id="f-status"' in html and 'id="f-text"' in html


def test_sections_for_skill_impact_long_context_tokens_and_decay(tmp_path):
    (tmp_path / "decay.json").write_text(
        '{"points": [{"turns": 3, "memory": 1.0}, {"turns": 5, "memory": 0.4}], "summary": {"memory_half_life": 5}}',
        encoding="utf-8",
    )
    html = _page(_mixed_records(), run_dir=tmp_path)
    assert "[skill-trigger-override]" in html
    assert "Red line: skill_impact_delta &lt; -15% in B1-CL" in html  # 1 of 3 CL cases worse: -33%
    assert "Lost in the middle" in html and "degradation_rate" in html
    # C5-MI-01: 4k all passed, 32k middle failed -> per case: middle 1/2 below beginning 2/2, end 2/2
    assert (
        "Lost in the middle, per case" in html
        and "<b>C5-MI-01</b> of 1 case(s) with all three positions" in html
    )
    assert "middle below beginning and end (beginning 2/2, middle 1/2, end 2/2; at 4k, 32k)" in html
    assert "No verdict for 1 case(s) lacking a position: C5-MI-02." in html
    assert "no verdict: no run at beginning, end; nothing decided at middle" in html
    # accuracy is passed / decided with the undecided runs shown beside it
    assert "Accuracy is passed / decided" in html and "32k 2/3 = 66.7% (left out: 1 unjudged)" in html
    assert '<td class="num">3/3 = 100.0%</td>' in html  # C5-MI-01 at 4k
    assert '<td class="num">2/3 = 66.7%</td>' in html  # C5-MI-01 at 32k
    assert '<td class="num">0/0 = — (left out: 1 unjudged)</td>' in html  # C5-MI-02
    assert "Agent context tokens per user turn" in html
    assert "Decay: points" in html and "memory_half_life" in html
    assert "no judge model configured" in html  # unjudged reasons table


def test_c1_rubric_section_shows_the_score_distribution():
    from usersim.judges.llm_rubric import C1_CRITERION

    def c1(case_id, total, repeat=0):
        v = Verdict(
            judge="llm_rubric",
            verdict="inconclusive",
            reason=f"C1 rubric {total}/5",
            criterion=C1_CRITERION,
            counts_toward_status=False,
            details={"total": total},
        )
        return record(
            case_id, repeat=repeat, verdicts=[Verdict(judge="tool_called", verdict="pass", reason="ok"), v]
        )

    html = _page([c1("C1-SF-01", 5), c1("C1-SF-01", 4, 1), c1("C1-SF-02", 2)])
    assert "C1 skill rubric (seed 004, 0-5)" in html
    assert "3 run(s) scored, mean <b>3.67</b> / 5" in html
    # distribution row: totals 0..5 -> 0, 0, 1, 0, 1, 1
    assert (
        "<tr><td>runs</td>" + "".join(f'<td class="num">{n}</td>' for n in (0, 0, 1, 0, 1, 1)) + "</tr>"
    ) in html
    assert "C1 0-5 score distribution (runs per total)" in html
    assert "seed 004 sets no pass line" in html
    assert "C1 skill rubric (seed 004, 0-5)" not in _page([record("B1-EI-01")])


def test_no_api_key_reaches_the_page(tmp_path):
    meta = {"run_id": "r", "args": {"api_key": "sk-secret-123"}, "agent": "openai:gpt-4o"}
    path = write_report(tmp_path / "out" / "report.html", [record()], build_summary([record()], meta))
    html = path.read_text(encoding="utf-8")
    assert "sk-secret-123" not in html and "openai:gpt-4o" in html


def test_environment_api_key_is_masked_everywhere(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k-live-0123456789")
    rec = record(transcript=[{"role": "assistant", "content": "my key is k-live-0123456789"}])
    html = render_report(
        [rec], build_summary([rec], {"run_id": "r", "base_url": "http://x/?t=k-live-0123456789"})
    )
    assert "k-live-0123456789" not in html and "my key is ***" in html


def test_empty_run_renders():
    html = _page([])
    assert "Transcripts (0)" in html


def test_chart_labels_are_escaped():
    svg = line_chart("a<b", ["<x>"], {"s&t": [0.5]})
    assert "a&lt;b" in svg and "&lt;x&gt;" in svg and "s&amp;t" in svg and "<x>" not in svg


def test_long_replayed_history_is_folded_but_present():
    from usersim.core.record import TranscriptMessage

    history = [
        TranscriptMessage(role="user" if i % 2 == 0 else "assistant", content=f"filler {i}", turn=0)
        for i in range(10)
    ]
    live = [
        TranscriptMessage(role="user", content="我对什么过敏？", turn=1),
        TranscriptMessage(role="assistant", content="你对海鲜过敏。", turn=1),
    ]
    rec = record("C5-EI-01", length="32k", transcript=history + live, history_len=10)
    html = _page([rec])
    assert '<details class="history"><summary>10 replayed history messages</summary>' in html
    assert "filler 9" in html and 'id="r0-m10"' in html
    assert html.index("filler 9") < html.index("我对什么过敏")
