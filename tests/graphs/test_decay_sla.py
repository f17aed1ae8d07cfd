"""SLA thresholds (seed 003: 客服 Agent ≥ 80% @ 10 轮): case/suite fields, validated with
file:line: field errors, and the curve points below them marked."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import usersim
from usersim.cases.loader import load_case
from usersim.cases.schema import SlaThreshold
from usersim.graphs.decay_sla import BUNDLED, load_sla
from usersim.graphs.decay_summary import summarize_decay

CS = SlaThreshold(scenario="客服 Agent", dimension="memory", min_score=0.8, at_turn=10)


def recs(scores: dict[int, float], test: str = "memory") -> list[dict]:
    return [{"case_id": f"DECAY-{test}-{n:02d}", "score": s, "status": "passed"} for n, s in scores.items()]


@pytest.mark.parametrize(
    ("scores", "met", "checked", "below"),
    [
        ({3: 1.0, 8: 0.9, 10: 0.85, 12: 0.4}, True, 10, []),  # 12 turns is past the SLA's length
        ({3: 1.0, 8: 0.9, 10: 0.7}, False, 10, [10]),
        ({3: 1.0, 5: 0.6, 8: 0.9, 12: 0.9}, False, 12, [5]),  # a dip before 10 turns misses it too
        ({3: 1.0, 8: 0.9, 12: 0.79}, False, 12, [12]),  # no point at 10: the next longer one decides
        ({3: 1.0, 8: 0.9}, None, None, []),  # never reaches 10 turns and never below: not measured
    ],
)
def test_a_curve_below_its_sla_is_marked(scores, met, checked, below):
    s = summarize_decay(recs(scores) + recs({3: 0.1}, "drift"), sla=[(CS, "cs.yaml")])
    (mark,) = s.curves["memory"].sla
    assert (mark.met, mark.checked_turn, mark.below_turns) == (met, checked, below)
    assert mark.label == "客服 Agent ≥ 80% @ 10 轮" and mark.source == "cs.yaml"
    assert s.curves["drift"].sla == []  # an SLA binds its own dimension only
    assert bool(s.sla_violations) is (met is False)


def test_bundled_suite_files_hold_the_seeds_three_slas():
    got = {
        s.scenario: (s.dimension, s.min_score, s.at_turn)
        for ref in ("customer_service", "data_analysis", "companion")
        for s, _ in load_sla(ref)
    }
    assert got == {
        "客服 Agent": ("memory", 0.8, 10),
        "数据分析 Agent": ("memory", 0.7, 20),
        "陪伴/闲聊": ("memory", 0.5, 50),
    }


def test_a_case_takes_the_sla_from_a_suite_file_it_includes(tmp_path):
    case = tmp_path / "cs-memory.yaml"
    case.write_text(
        f"include: {BUNDLED / 'customer_service.yaml'}\nid: CS-01\ndimension: MT\ntitle: t\n"
        "input: {message: 你好}\njudging: {scoring: {methods: [auto]}}\n",
        encoding="utf-8",
    )
    assert load_case(case).sla == [CS]
    assert [s for s, _ in load_sla(str(case))] == [CS]


def test_bad_sla_fields_are_named_with_file_line_and_field(tmp_path):
    case = tmp_path / "bad.yaml"
    case.write_text(
        "id: BAD-01\ndimension: MT\ntitle: t\ninput: {message: 你好}\njudging: {scoring: {methods: [auto]}}\n"
        "sla:\n- {dimension: memroy, min_score: 80, at_turn: 10}\n",
        encoding="utf-8",
    )
    res = usersim("validate", str(case), check=False)
    assert res.returncode == 2
    assert f"{case}:7: sla.0.dimension:" in res.stdout + res.stderr
    assert (
        f"{case}:7: sla.0.min_score: Input should be less than or equal to 1 (got 80)"
        in res.stdout + res.stderr
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text("sla:\n- {dimension: memory, min_score: 0.8}\n", encoding="utf-8")
    res = usersim("decay", "--sla", str(suite), "--out", str(tmp_path / "o"), check=False)
    assert res.returncode == 1 and f"{suite}:2: sla.0.at_turn: required field is missing" in res.stderr
    res = usersim("decay", "--sla", "customer_servce", "--out", str(tmp_path / "o"), check=False)
    assert "Did you mean 'customer_service'?" in res.stderr


def test_decay_json_and_report_mark_the_sla_miss(tmp_path):
    out = tmp_path / "w2"
    res = usersim(
        "decay",
        "--agent",
        "reference:window-2",
        "--tests",
        "memory",
        "--turns",
        "3,10",
        "--repeats",
        "1",
        "--sla",
        "customer_service",
        "--out",
        str(out),
    )
    assert (
        "BELOW SLA memory: 客服 Agent ≥ 80% @ 10 轮 — below the line at 3, 10 turns (0% at 10 turns)"
        in res.stdout
    )
    data = json.loads((out / "decay.json").read_text(encoding="utf-8"))
    assert data["curves"]["memory"]["sla"][0]["met"] is False
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Below SLA: memory: 客服 Agent ≥ 80% @ 10 轮" in page and "memory SLA: 客服 Agent" in page
