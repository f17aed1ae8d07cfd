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


def test_rates_count_error_as_judged_and_show_unjudged_and_inconclusive_left_out():
    recs = [
        record("B1-EI-01", status="passed", score=1.0),
        record("B1-EI-02", status="passed", score=1.0, difficulty="medium"),
        record("B1-CL-01", status="failed", score=0.0),
        record("B1-CL-02", status="unjudged"),
        record("C2-TD-04", status="error", difficulty="hard"),
        record("C2-TD-05", status="inconclusive", difficulty="hard", blame="simulator"),
    ]
    s = summarize(recs, {"run_id": "r"})
    t = s.totals
    assert (t.records, t.passed, t.failed, t.error, t.unjudged, t.inconclusive) == (6, 2, 1, 1, 1, 1)
    # the gate's rule: passed / (passed + failed + error); unjudged and inconclusive left out, and shown
    assert (t.judged, t.pass_rate) == (4, 0.5)
    assert t.left_out == {"unjudged": 1, "inconclusive": 1}
    assert t.pass_rate_text == "2/4 = 50.0% (left out: 1 unjudged, 1 inconclusive)"
    assert t.mean_score == pytest.approx(0.6667)
    assert s.by_dimension["B1"].pass_rate == pytest.approx(0.6667)
    assert s.by_dimension["B1"].pass_rate_text == "2/3 = 66.7% (left out: 1 unjudged)"
    assert s.by_dimension["C2"].pass_rate == 0.0  # the error is judged, and not a pass
    assert s.by_dimension["C2"].pass_rate_text == "0/1 = 0.0% (left out: 1 inconclusive)"
    assert s.inconclusive == ["C2-TD-05|r0"]
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


def test_accuracy_is_passed_over_decided_not_the_mean_partial_score():
    # seed 000: accuracy = pass rate. A failed run with a 0.9 partial score is a failure, and an
    # unjudged or error run decides nothing (it is counted beside the rate, never as 0 or as its score).
    recs = [
        record("C5-EI-01", length="4k", status="passed", score=1.0),
        record("C5-EI-01", length="4k", status="passed", score=1.0, repeat=1),
        record("C5-EI-01", length="32k", status="passed", score=1.0),
        record("C5-EI-01", length="32k", status="failed", score=0.9, repeat=1),
        record("C5-EI-01", length="32k", status="unjudged", score=0.8, repeat=2),
        record("C5-EI-01", length="32k", status="error", repeat=3),
        record("C5-LT-01", length="4k", status="passed"),
        record("C5-LT-01", length="4k", status="failed", repeat=1),
        record("C5-LT-01", length="32k", status="failed"),
        record("C5-LT-01", length="32k", status="failed", repeat=1, simulator_suspect=True),
        record("C5-LT-01", length="32k", status="inconclusive", repeat=2, blame="simulator"),
    ]
    lc = summarize(recs, {}).long_context
    cases = {c.case_id: c for c in lc.cases}
    ei = cases["C5-EI-01"]
    # 32k: 1 passed of 3 decided (passed, failed, error; the gate's rule), the unjudged left out;
    # the mean partial score would say 0.95
    assert ei.by_length == {"4k": 1.0, "32k": pytest.approx(0.3333)}
    long = ei.length_counts["32k"]
    assert (long.passed, long.failed, long.decided, long.unjudged, long.error) == (1, 1, 3, 1, 1)
    assert long.accuracy == pytest.approx(0.3333) and long.mean_score == pytest.approx(0.95)
    assert long.accuracy_text == "1/3 = 33.3% (left out: 1 unjudged)"
    assert ei.degradation_rate == pytest.approx(0.6667)
    lt = cases["C5-LT-01"]
    # the status decides: the simulator-suspect failure is a failure; the inconclusive run is left out
    assert lt.by_length == {"4k": 0.5, "32k": 0.0}
    assert (lt.length_counts["32k"].decided, lt.length_counts["32k"].inconclusive) == (2, 1)
    assert lt.length_counts["32k"].accuracy_text == "0/2 = 0.0% (left out: 1 inconclusive)"
    assert lt.degradation_rate == 1.0
    # all cases: 4k 3 passed / 4 decided, 32k 1 / 5
    assert lc.by_length == {"4k": 0.75, "32k": 0.2}
    assert (lc.length_counts["4k"].passed, lc.length_counts["4k"].decided) == (3, 4)
    assert (lc.length_counts["32k"].passed, lc.length_counts["32k"].decided) == (1, 5)
    assert (lc.length_counts["32k"].unjudged, lc.length_counts["32k"].error) == (1, 1)
    assert lc.degradation_rate == pytest.approx((0.75 - 0.2) / 0.75, abs=1e-3)


def test_nothing_decided_at_a_length_gives_no_accuracy_and_no_rate():
    recs = [
        record("C5-EI-01", length="4k", status="passed"),
        record("C5-EI-01", length="32k", status="unjudged"),
    ]
    c = summarize(recs, {}).long_context.cases[0]
    assert c.by_length == {"4k": 1.0, "32k": None} and c.degradation_rate is None
    assert c.length_counts["32k"].unjudged == 1 and c.length_counts["32k"].decided == 0


def _positions(case_id, outcomes):
    """Records of one case at beginning/middle/end: outcomes maps position -> list of statuses."""
    out = []
    for pos, statuses in outcomes.items():
        for i, st in enumerate(statuses):
            out.append(record(case_id, length="32k", position=pos, status=st, repeat=i))
    return out


def test_lost_in_the_middle_is_decided_per_case_never_pooled():
    recs = (
        # MI-01: middle 1/2 below beginning 2/2 and end 2/2 -> lost in the middle
        _positions(
            "C5-MI-01",
            {
                "beginning": ["passed", "passed"],
                "middle": ["passed", "failed"],
                "end": ["passed", "passed"],
            },
        )
        # MI-02: only the middle was run (passed). MI-03: only beginning and end (failed).
        # Pooled by position they would read "middle 1/2 above beginning and end"; per case there
        # is no verdict for either.
        + _positions("C5-MI-02", {"middle": ["failed", "failed"]})
        + _positions("C5-MI-03", {"beginning": ["passed"], "end": ["passed"]})
        # MI-04: all three positions, middle not worse
        + _positions("C5-MI-04", {"beginning": ["failed"], "middle": ["passed"], "end": ["passed"]})
        # LI-01: the middle run exists but was not judged -> no verdict, said so
        + _positions("C5-LI-01", {"beginning": ["passed"], "middle": ["unjudged"], "end": ["passed"]})
    )
    lc = summarize(recs, {}).long_context
    cases = {c.case_id: c for c in lc.cases}
    mi1 = cases["C5-MI-01"]
    assert mi1.by_position == {"beginning": 1.0, "middle": 0.5, "end": 1.0}
    assert mi1.lost_in_the_middle is True and mi1.middle_drop == 0.5
    assert mi1.lost_in_the_middle_note == (
        "middle below beginning and end (beginning 2/2, middle 1/2, end 2/2; at 32k)"
    )
    assert mi1.position_lengths == ["32k"]
    assert cases["C5-MI-02"].lost_in_the_middle is None
    assert cases["C5-MI-02"].lost_in_the_middle_note.startswith("no verdict: no run at beginning, end")
    assert cases["C5-MI-03"].lost_in_the_middle is None
    assert "no run at middle" in cases["C5-MI-03"].lost_in_the_middle_note
    assert cases["C5-MI-04"].lost_in_the_middle is False
    li = cases["C5-LI-01"]
    assert li.lost_in_the_middle is None and "nothing decided at middle" in li.lost_in_the_middle_note
    assert li.position_counts["middle"].unjudged == 1
    assert lc.lost_in_the_middle_cases == ["C5-MI-01"]
    assert lc.position_checked == ["C5-MI-01", "C5-MI-04"]
    assert lc.position_incomplete == ["C5-LI-01", "C5-MI-02", "C5-MI-03"]
    dumped = build_summary(recs, {})["long_context"]
    assert "lost_in_the_middle" not in dumped  # no run-wide verdict pooled across cases
    mi1_json = next(c for c in dumped["cases"] if c["case_id"] == "C5-MI-01")
    assert mi1_json["position_counts"]["middle"] == {
        "records": 2,
        "passed": 1,
        "failed": 1,
        "unjudged": 0,
        "error": 0,
        "inconclusive": 0,
        "decided": 2,
        "accuracy": 0.5,
        "accuracy_text": "1/2 = 50.0%",
        "mean_score": None,
    }


def test_lost_in_the_middle_compares_positions_at_the_same_length():
    recs = [
        # EI-01: beginning and end only at 4k, middle only at 32k: never comparable
        record("C5-EI-01", length="4k", position="beginning", status="passed"),
        record("C5-EI-01", length="4k", position="end", status="passed"),
        record("C5-EI-01", length="32k", position="middle", status="failed"),
        # EI-02: all three at 4k (middle failed); at 32k only the middle (passed) -> 4k decides
        record("C5-EI-02", length="4k", position="beginning", status="passed"),
        record("C5-EI-02", length="4k", position="middle", status="failed"),
        record("C5-EI-02", length="4k", position="end", status="passed"),
        record("C5-EI-02", length="32k", position="middle", status="passed"),
    ]
    cases = {c.case_id: c for c in summarize(recs, {}).long_context.cases}
    ei1 = cases["C5-EI-01"]
    assert ei1.lost_in_the_middle is None and ei1.middle_drop is None
    assert "never decided at the same context length" in ei1.lost_in_the_middle_note
    ei2 = cases["C5-EI-02"]
    assert ei2.by_position["middle"] == 0.5  # all of the case's middle runs, shown
    assert (ei2.lost_in_the_middle, ei2.middle_drop, ei2.position_lengths) == (True, 1.0, ["4k"])
    assert ei2.lost_in_the_middle_note.endswith("(beginning 1/1, middle 0/1, end 1/1; at 4k)")


def _c1(case_id, details, repeat=0, verdict="inconclusive"):
    from usersim.judges.llm_rubric import C1_CRITERION

    return record(
        case_id,
        repeat=repeat,
        verdicts=[
            Verdict(judge="tool_called", verdict="pass", reason="checked"),
            Verdict(
                judge="llm_rubric",
                verdict=verdict,
                reason="C1 rubric",
                criterion=C1_CRITERION,
                counts_toward_status=False,
                details=details,
            ),
        ],
    )


def _dims(t, p, c, o, a):
    return {"trigger": t, "process": p, "constraints": c, "output_contract": o, "anti_pattern": a}


def test_c1_rubric_score_distribution():
    recs = [
        _c1("C1-SF-01", {"total": 5, "dimensions": _dims(1, 2, 1, 1, 0)}),
        _c1("C1-SF-01", {"total": 3, "dimensions": _dims(1, 1, 1, 0, 0)}, repeat=1),
        # no total: summed from the dimensions (1 + 2 + 0 + 1 - 1 = 3)
        _c1("C1-SF-02", {"dimensions": _dims(1, 2, 0, 1, -1)}),
        # only the flat dimension keys: 0 + 0 + 0 + 0 - 1 floors at 0
        _c1("C1-SF-03", _dims(0, 0, 0, 0, -1)),
        # no judge model: no score, counted as unscored
        _c1("C1-SF-04", None, verdict="unjudged"),
        record("B1-EI-01"),  # not a C1 rubric verdict
    ]
    c1 = summarize(recs, {}).c1_rubric
    assert c1 is not None
    assert (c1.scored, c1.unscored) == (4, 1)
    assert c1.distribution == {0: 1, 1: 0, 2: 0, 3: 2, 4: 0, 5: 1}
    assert c1.mean_total == 2.75
    assert c1.dimensions["process"] == pytest.approx(1.25) and c1.dimensions["anti_pattern"] == -0.5
    cases = {c.case_id: c for c in c1.cases}
    assert cases["C1-SF-01"].totals == [5, 3] and cases["C1-SF-01"].mean_total == 4.0
    assert cases["C1-SF-02"].totals == [3] and cases["C1-SF-03"].totals == [0]
    assert "C1-SF-04" not in cases
    dumped = json.loads(json.dumps(build_summary(recs, {}), ensure_ascii=False))
    assert dumped["c1_rubric"]["distribution"] == {"0": 1, "1": 0, "2": 0, "3": 2, "4": 0, "5": 1}
    # the score is informational: it never decides the records' status
    assert summarize(recs, {}).totals.passed == 6
    assert summarize([record("B1-EI-01")], {}).c1_rubric is None


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
    recs += [record("B1-EI-04", repeat=0), record("B1-EI-04", repeat=1, status="inconclusive")]
    recs += [record("B1-EI-05", repeat=0), record("B1-EI-05", repeat=1, status="error")]
    rep = summarize(recs, {}).repeats
    # an error repeat is judged and not a pass (EI-05 counts, and flips); unjudged and inconclusive
    # repeats leave their variant out, and the text says so
    assert (rep.groups, rep.undecided, rep.pass_hat_k, rep.flip_rate) == (2, 3, 0.5, 0.5)
    assert rep.left_out == {"variants with an unjudged repeat": 2, "variants with an inconclusive repeat": 1}
    assert rep.pass_hat_k_text == (
        "1/2 = 50.0% (left out: 2 variants with an unjudged repeat, 1 variants with an inconclusive repeat)"
    )
    assert rep.flip_rate_text.startswith("1/2 = 50.0% (left out: 2 variants")
    # a flip is a flip even beside an unjudged repeat
    assert [g.case_id for g in rep.flips] == ["B1-EI-03", "B1-EI-05"]
