"""Graded scores (seed 003) through `usersim run`: every reply of the YAML data under
tests/judges/data/graded/ is said by a scripted agent, and the graded check must decide its level
(conflict 100/80/40/0, implicit 100/0, reference and topic switch 100/80/60, or uncertain), say
why, pass or fail at the seed's threshold, and summary.json must count the levels."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from tests.judges.graded_support import graded_verdict, run
from tests.support.cli import usersim

FILES = [
    "conflict_zh.yaml",
    "conflict_en.yaml",
    "conflict_more.yaml",
    "implicit.yaml",
    "reference_switch.yaml",
]
POINTS = {
    "immediate": 100, "confirmed": 80, "partial": 40, "none": 0, "recognized": 100, "ignored": 0,
    "direct": 100, "indirect": 80, "multi_entity": 60, "no_referent": 100, "unresolved": 0,
    "once": 100, "twice": 80, "alternating": 60, "lost": 0,
}  # fmt: skip
NAMES = {"immediate": "立即纠正", "confirmed": "确认后纠正", "partial": "部分纠正", "none": "不纠正"}


@pytest.fixture(scope="module")
def graded_run(tmp_path_factory):
    return run(FILES, tmp_path_factory.mktemp("graded"))


def test_every_reply_gets_its_level(graded_run):
    entries, recs, _ = graded_run
    assert len(recs) == len(entries) > 70
    wrong = []
    for r in recs:
        want = entries[r["case_id"]]["level"]
        got = (graded_verdict(r).get("details") or {}).get("level")
        if got != want:
            wrong.append(f"{r['case_id']} {entries[r['case_id']]['say'][-1][:50]!r}: want {want}, got {got}")
    assert not wrong, "\n".join(wrong)


def test_level_carries_points_reason_and_the_seed_threshold(graded_run):
    entries, recs, _ = graded_run
    for r in recs:
        level = entries[r["case_id"]]["level"]
        v = graded_verdict(r)
        if level == "uncertain":
            assert v["verdict"] == "unjudged" and v["reason"].startswith("uncertain:"), v
            assert r["status"] == "unjudged" and r["score"] is None
            continue
        d = v["details"]
        assert d["points"] == POINTS[level]
        assert v["score"] == pytest.approx(POINTS[level] / 100)
        assert r["score"] == pytest.approx(POINTS[level] / 100)  # the case's score is the level's
        assert v["reason"].startswith(f"{d['level_name']} ({d['points']} points, pass at {d['pass_at']})")
        if level in NAMES:
            assert d["level_name"] == NAMES[level] and d["pass_at"] == 80
        assert v["verdict"] == ("pass" if d["points"] >= d["pass_at"] else "fail")
        assert r["status"] == ("passed" if v["verdict"] == "pass" else "failed")


def test_reasons_name_the_evidence(graded_run):
    entries, recs, _ = graded_run
    by_level = {entries[r["case_id"]]["level"]: graded_verdict(r) for r in recs}
    assert "kept the old" in by_level["partial"]["reason"]
    assert "asked to confirm first" in by_level["confirmed"]["reason"]
    assert "acts." in by_level["confirmed"]["reason"]  # the language layer's cue that read the question
    assert "not carried out" in by_level["none"]["reason"] or "repeats" in by_level["none"]["reason"]
    assert "pointed out that the premise changed" in by_level["recognized"]["reason"]
    assert "grading." in by_level["recognized"]["reason"] or "polarity." in by_level["recognized"]["reason"]


def test_summary_counts_levels_per_dimension_and_scale(graded_run):
    entries, recs, summary = graded_run
    want: Counter = Counter()
    for r in recs:
        want[(r["dimension"], graded_verdict(r)["details"]["scale"], entries[r["case_id"]]["level"])] += 1
    grades = summary["grades"]
    got = Counter(
        {
            (g["dimension"], g["scale"], lv["level"]): lv["count"]
            for g in grades
            for lv in g["levels"]
            if lv["count"]
        }
    )
    for g in grades:
        got[(g["dimension"], g["scale"], "uncertain")] = g["uncertain"]
    assert +got == want
    assert all(g["conversations"] == sum(lv["count"] for lv in g["levels"]) + g["uncertain"] for g in grades)
    conflict = next(g for g in grades if g["scale"] == "conflict")
    assert [lv["name"] for lv in conflict["levels"]][:4] == ["立即纠正", "确认后纠正", "部分纠正", "不纠正"]
    assert conflict["mean_points"] is not None and 0 < conflict["mean_points"] < 100


def test_grading_field_is_validated(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "id: BAD-1\ndimension: MT\ntitle: t\ninput: {message: hi}\n"
        "judging:\n  scoring: {methods: [auto]}\n  grading: {scale: reference, scenario: sideways}\n"
        "  checks: [{graded: {done: [{keywords: {any: [x]}}]}}]\n",
        encoding="utf-8",
    )
    res = usersim("validate", str(bad), check=False)
    assert res.returncode == 2
    assert (
        "grading.scenario of a reference case must be one of direct, indirect, multi_entity, no_referent"
        in (res.stdout + res.stderr)
    )
    bad.write_text(
        "id: BAD-2\ndimension: MT\ntitle: t\ninput: {message: hi}\n"
        "judging:\n  scoring: {methods: [auto]}\n  checks: [{graded: {new: [x]}}]\n",
        encoding="utf-8",
    )
    res = usersim("validate", str(bad), check=False)
    assert res.returncode == 2 and "judging.grading (its scale) is missing" in res.stdout + res.stderr


def _judge_passes(body: dict) -> dict:
    """Every criterion of the prompt passes, citing the start of the last assistant message."""
    text = body["messages"][0]["content"]
    ids = [int(i) for i in re.findall(r"^(\d+)\. \[(?:REQUIREMENT|FAILURE EVENT)", text, re.MULTILINE)]
    turn, quote = re.findall(r"^\[(\d+)\] ASSISTANT: (.{4})", text, re.MULTILINE)[-1]
    results = [
        {
            "criterion_id": i,
            "evidence": [{"turn": int(turn), "quote": quote}],
            "reasoning": "ok",
            "verdict": "pass",
        }
        for i in ids
    ]
    return {"content": json.dumps({"results": results}, ensure_ascii=False)}


def test_uncertain_levels_are_escalated_to_the_judge_model(tmp_path, monkeypatch):
    from tests.support.openai_stub import OpenAIStub

    stub = OpenAIStub(responder=_judge_passes).start()
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stub-key-123456")
    try:
        entries, recs, summary = run(FILES, tmp_path, "--judge-model", "openai:j", only="uncertain")
    finally:
        stub.stop()
    assert len(recs) == len(entries) >= 4 and len(stub.requests) >= len(recs)
    for r in recs:
        v = graded_verdict(r)
        assert v["verdict"] == "pass" and v["details"]["escalated"] is True
        assert v["reason"].startswith("escalated to the LLM judge (rule reading uncertain:")
        assert v["details"]["rule_details"]["level"] == "uncertain"
    for g in summary["grades"]:
        assert g["uncertain"] == g["conversations"] and g["escalated"] == {"pass": g["conversations"]}
