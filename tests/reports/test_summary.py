"""summary.json numbers on crafted records."""

from __future__ import annotations

import json

import pytest

from usersim.core.events import Usage
from usersim.core.verdict import Verdict
from usersim.reports.long_context import degradation_rate
from usersim.reports.summary import build_summary, summarize
from usersim.reports.summary_models import Summary

from .factory import record


def test_rates_count_error_and_unjudged_beside_the_pass_rate():
    recs = [
        record("B1-EI-01", status="passed", score=1.0),
        record("B1-EI-02", status="passed", score=1.0, difficulty="medium"),
        record("B1-CL-01", status="failed", score=0.0),
        record("B1-CL-02", status="unjudged"),
        record("C2-TD-04", status="error", difficulty="hard"),
    ]
    s = summarize(recs, {"run_id": "r"})
    assert (s.totals.records, s.totals.passed, s.totals.failed, s.totals.error, s.totals.unjudged) == (
        5,
        2,
        1,
        1,
        1,
    )
    # 2 of 3 decided; the unjudged and error conversations decide nothing
    assert s.totals.pass_rate == pytest.approx(0.6667)
    assert s.totals.mean_score == pytest.approx(0.6667)
    assert s.by_dimension["B1"].pass_rate == pytest.approx(0.6667)
    assert s.by_dimension["C2"].pass_rate is None
    assert s.by_dimension_difficulty["B1"]["easy"].passed == 1
    assert s.by_dimension_difficulty["B1"]["easy"].failed == 1
    assert s.by_dimension_difficulty["B1"]["medium"].pass_rate == 1.0
    assert s.by_category["B1-CL"].pass_rate == 0.0
    assert s.by_category["B1-EI"].pass_rate == 1.0


def test_pass_hat_k_and_flip_rate_across_repeats():
    recs = [record("B1-EI-01", repeat=i) for i in range(3)]
    recs += [record("B1-EI-02", repeat=i, status="failed" if i == 1 else "passed") for i in range(3)]
    recs += [record("B1-EI-03")]  # a single run is not a repeated variant
    rep = summarize(recs, {}).repeats
    assert rep.groups == 2
    assert rep.pass_hat_k == 0.5  # only EI-01 passed all 3
    assert rep.pass_at_k == 1.0
    assert rep.flip_rate == 0.5
    assert [g.case_id for g in rep.flips] == ["B1-EI-02"]
    # tau-bench estimator: EI-01 always 1; EI-02 C(2,k)/C(3,k) = 2/3, 1/3, 0
    assert rep.pass_hat_k_curve == {1: pytest.approx(0.8333), 2: pytest.approx(0.6667), 3: 0.5}


def test_repeats_of_different_variants_are_not_pooled():
    recs = [
        record("C5-EI-01", length="4k", repeat=0),
        record("C5-EI-01", length="32k", repeat=0, status="failed"),
    ]
    assert summarize(recs, {}).repeats.groups == 0


def _ab(case_id, a_status, b_status, *, triggered=False, tags=None):
    return [
        record(case_id, group="A", status=a_status, tags=tags),
        record(case_id, group="B", status=b_status, triggered=triggered, tags=tags),
    ]


def test_skill_impact_delta_thresholds_exemptions_and_red_line():
    recs = _ab("B1-EI-01", "passed", "failed")  # EI: no exemption, -100% -> red line
    # CL: 10 cases, one B failure caused by a skill trigger -> -10%, within the CL exemption
    for i in range(1, 11):
        recs += _ab(f"B1-CL-{i:02d}", "passed", "failed" if i == 1 else "passed", triggered=i == 1)
    # IF: -10% is within the summary target but beyond IF's 5% exemption
    for i in range(1, 11):
        recs += _ab(f"B1-IF-{i:02d}", "passed", "failed" if i == 1 else "passed")
    si = summarize(recs, {}).skill_impact
    rows = {d.dimension: d for d in si.dimensions}

    cl = rows["B1-CL"]
    assert (cl.cases, cl.delta, cl.verdict, cl.exempt, cl.target_met) == (10, -0.1, "exempt", True, True)
    assert "[skill-trigger-override]" in cl.note
    assert si.overrides == ["B1-CL-01"]

    iff = rows["B1-IF"]
    assert (iff.delta, iff.verdict, iff.exempt, iff.target_met) == (-0.1, "fail", False, True)
    assert "beyond the 5% exemption (meets the summary target >= -10%)" in iff.note

    ei = rows["B1-EI"]
    assert (ei.delta, ei.verdict, ei.red_line, ei.target) == (-1.0, "red_line", True, 0.0)
    assert si.red_line_dimensions == ["B1-EI"]

    cases = {c.case_id: c for c in si.cases}
    assert cases["B1-EI-01"].diagnosis == "skill"  # B failed while A passed: fix the skill
    assert cases["B1-CL-01"].override and cases["B1-CL-01"].b_failures_skill_triggered
    # 21 counted cases; worse in B and not overridden: B1-EI-01 and B1-IF-01
    assert si.skill_negative_rate == pytest.approx(2 / 21, abs=1e-4)
    assert si.by_dimension["B1"] == pytest.approx(-3 / 21 * 1.0, abs=1e-4)


def test_cl_drop_without_a_skill_trigger_is_not_exempt():
    recs = []
    for i in range(1, 11):
        recs += _ab(f"B1-CL-{i:02d}", "passed", "failed" if i == 1 else "passed", triggered=False)
    row = summarize(recs, {}).skill_impact.dimensions[0]
    assert (row.verdict, row.exempt) == ("fail", False)
    assert "Skill 未触发但仍未澄清" in row.note


def test_cl_drop_beyond_the_red_line_is_not_exempt_even_with_a_trigger():
    recs = []
    for i in range(1, 6):
        recs += _ab(f"B1-CL-{i:02d}", "passed", "failed" if i == 1 else "passed", triggered=True)
    si = summarize(recs, {}).skill_impact
    row = si.dimensions[0]
    assert (row.delta, row.verdict, row.exempt, row.red_line) == (-0.2, "red_line", False, True)
    assert si.overrides == [] and si.skill_negative_rate == 0.2


def test_group_a_below_floor_is_diagnosed_as_agent_problem():
    recs = _ab("B1-MR-01", "failed", "failed") + _ab("B1-MR-02", "passed", "passed")
    si = summarize(recs, {}).skill_impact
    row = si.dimensions[0]
    assert (row.rate_a, row.group_a_bar_met, row.verdict) == (0.5, False, "pass")
    assert "below the floor" in row.note
    assert {c.case_id: c.diagnosis for c in si.cases} == {"B1-MR-01": "agent", "B1-MR-02": "ok"}


def test_degradation_rate_formula():
    assert degradation_rate({"4k": 0.8, "16k": 0.7, "32k": 0.6}) == 0.25
    assert degradation_rate({"4k": 0.0, "32k": 0.0}) is None  # no baseline to degrade from
    assert degradation_rate({"16k": 0.5, "32k": 0.4}) is None


def test_gradient_per_case_and_overall():
    recs = [
        record("C5-EI-01", length="4k", score=1.0),
        record("C5-EI-01", length="16k", score=0.8),
        record("C5-EI-01", length="32k", score=0.6),
        record("C5-LT-01", length="4k", score=0.5),
        record("C5-LT-01", length="32k", score=0.5),
        record("C5-LT-01", length="32k", status="unjudged", repeat=1),  # no score: left out
    ]
    lc = summarize(recs, {}).long_context
    cases = {c.case_id: c for c in lc.cases}
    assert cases["C5-EI-01"].degradation_rate == pytest.approx(0.4)
    assert cases["C5-LT-01"].degradation_rate == 0.0
    assert lc.by_length == {"4k": 0.75, "16k": 0.8, "32k": 0.55}
    assert lc.degradation_rate == pytest.approx((0.75 - 0.55) / 0.75, abs=1e-4)


def test_lost_in_the_middle_position_means():
    recs = []
    for length in ("4k", "32k"):
        recs += [
            record("C5-MI-01", length=length, position="beginning", score=0.95),
            record("C5-MI-01", length=length, position="middle", score=0.7 if length == "32k" else 0.9),
            record("C5-MI-01", length=length, position="end", score=0.92),
        ]
    lc = summarize(recs, {}).long_context
    assert lc.by_length_position["32k"] == {"beginning": 0.95, "middle": 0.7, "end": 0.92}
    assert lc.by_position["middle"] == pytest.approx(0.8)
    assert lc.middle_drop == pytest.approx(0.15)
    assert lc.lost_in_the_middle is True
    assert lc.cases[0].by_position == {"beginning": 0.95, "middle": pytest.approx(0.8), "end": 0.92}


def test_token_growth_usage_stops_and_unjudged_reasons():
    unjudged = [Verdict(judge="llm_rubric", verdict="unjudged", reason="no judge model configured")]
    recs = [
        record(
            "B1-EI-01",
            context_tokens=[100, 200, 300],
            stop_reason="goal_met",
            usage={"agent": Usage(calls=3, prompt_tokens=600, completion_tokens=30, cost_usd=0.01)},
        ),
        record(
            "B1-EI-02",
            context_tokens=[100, 400],
            stop_reason="max_turns",
            status="unjudged",
            verdicts=unjudged,
            usage={"agent": Usage(calls=2, cached_calls=2), "simulator": Usage(calls=1, prompt_tokens=50)},
        ),
        record("B1-EI-03", status="unjudged", verdicts=unjudged, stop_reason="goal_met", error=None),
        record("B1-EI-04", status="error", verdicts=[], error="agent raised TimeoutError"),
    ]
    s = summarize(recs, {})
    assert [(t.turn, t.conversations, t.mean_tokens, t.max_tokens) for t in s.token_growth] == [
        (1, 2, 100.0, 100),
        (2, 2, 300.0, 400),
        (3, 1, 300.0, 300),
    ]
    assert s.usage["agent"].calls == 5 and s.usage["agent"].cached_calls == 2
    assert s.usage["total"].prompt_tokens == 650 and s.usage["total"].cost_usd == 0.01
    assert list(s.usage) == ["agent", "simulator", "total"]
    assert s.stop_reasons == {"goal_met": 2, "max_turns": 1, "none": 1}
    assert len(s.unjudged) == 1
    u = s.unjudged[0]
    assert (u.judge, u.reason, u.verdicts, len(u.records)) == (
        "llm_rubric",
        "no judge model configured",
        2,
        2,
    )
    assert [(e.judge, e.reason) for e in s.errors] == [("harness", "agent raised TimeoutError")]


def test_red_line_tagged_case_failures_are_listed():
    recs = [record("B1-IP-03", status="failed", tags=["red_line"]), record("B1-IP-04", status="failed")]
    hits = summarize(recs, {}).red_line_hits
    assert [h.case_id for h in hits] == ["B1-IP-03"]


def test_decay_json_included_when_present_and_tolerated_when_absent_or_broken(tmp_path):
    recs = [record()]
    assert build_summary(recs, {}, run_dir=tmp_path)["decay"] is None
    (tmp_path / "decay.json").write_text('{"points": [{"turns": 3, "memory": 1.0}]}', encoding="utf-8")
    assert build_summary(recs, {"args": {"out": str(tmp_path)}})["decay"]["points"][0]["memory"] == 1.0
    (tmp_path / "decay.json").write_text('{"points": [', encoding="utf-8")
    assert build_summary(recs, {}, run_dir=tmp_path)["decay"] is None


def test_summary_is_json_round_trippable_and_redacts_secrets():
    meta = {
        "run_id": "r1",
        "agent": "openai:gpt",
        "args": {"api_key": "sk-abc", "repeats": 3},
        "headers": ["Bearer xyz"],
        "max_tokens": 10,
    }
    out = build_summary([record()], meta)
    text = json.dumps(out, ensure_ascii=False)
    assert "sk-abc" not in text and "Bearer xyz" not in text
    assert out["meta"]["args"] == {"api_key": "***", "repeats": 3}
    assert out["meta"]["max_tokens"] == 10
    assert Summary.model_validate(json.loads(text)).totals.passed == 1


def test_variants_with_an_unjudged_repeat_are_left_out_of_pass_hat_k():
    recs = [record("B1-EI-01", repeat=i) for i in range(2)]
    recs += [record("B1-EI-02", repeat=0), record("B1-EI-02", repeat=1, status="unjudged")]
    recs += [
        record("B1-EI-03", repeat=0, status="failed"),
        record("B1-EI-03", repeat=1, status="unjudged"),
        record("B1-EI-03", repeat=2),
    ]
    rep = summarize(recs, {}).repeats
    assert (rep.groups, rep.undecided, rep.pass_hat_k, rep.flip_rate) == (1, 2, 1.0, 0.0)
    assert [g.case_id for g in rep.flips] == ["B1-EI-03"]  # a flip is a flip even beside an unjudged repeat
