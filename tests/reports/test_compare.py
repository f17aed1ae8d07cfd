"""The compare core on crafted records: pairing and its reasons, divergence, moved checks, noise
apart from change, the statistics against scipy's own, and the shape of compare.json."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from tests.reports.factory import record
from usersim.core.record import TranscriptMessage
from usersim.core.verdict import Verdict
from usersim.reports import compare_stats as st
from usersim.reports.compare import compare_records
from usersim.reports.compare_models import COMPARE_SCHEMA_VERSION, Comparison


def run(spec: dict[str, str], *, seed_base: int = 1, agent: str = "a", **extra) -> list:
    """Records from {'CASE|repeat': status}."""
    out = []
    for key, status in spec.items():
        case_id, r = key.split("|")
        out.append(
            record(case_id, status=status, repeat=int(r), seed=seed_base + int(r), agent=agent, **extra)
        )
    return out


def talk(*turns: tuple[str, str]) -> list[TranscriptMessage]:
    msgs = []
    for n, (user, agent) in enumerate(turns, start=1):
        msgs += [
            TranscriptMessage(role="user", content=user, turn=n),
            TranscriptMessage(role="assistant", content=agent, turn=n),
        ]
    return msgs


# --- statistics: the library's numbers ------------------------------------------------------


def test_mcnemar_p_is_scipys_exact_binomial_test():
    for worse in range(0, 15):
        for better in range(0, 15):
            if worse + better:
                expected = stats.binomtest(worse, worse + better, 0.5).pvalue
                assert st.mcnemar_p(worse, better) == pytest.approx(expected, abs=1e-12), (worse, better)
    assert st.mcnemar_p(0, 0) == 1.0


def test_wilson_is_scipys_wilson_interval():
    for k, n in [(0, 1), (0, 9), (4, 9), (9, 9), (37, 50)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="wilson")
        assert st.wilson(k, n, 0.9) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_weighted_holm_with_equal_weights_is_holm():
    # Holm at 0.05: 0.005 <= 0.05/4, 0.01 <= 0.05/3, then 0.03 > 0.05/2 stops
    assert st.weighted_holm([0.01, 0.04, 0.03, 0.005], [1, 1, 1, 1], 0.05) == [True, False, False, True]
    # a heavier weight lets its hypothesis through first
    assert st.weighted_holm([0.03, 0.001], [0.9, 0.1], 0.05) == [True, True]
    assert st.weighted_holm([0.03, 0.026], [0.5, 0.5], 0.05) == [False, False]
    assert st.weighted_holm([0.03, 0.02], [0.5, 0.5], 0.05) == [
        True,
        True,
    ]  # 0.02 <= 0.025, then 0.03 <= 0.05


def test_newcombe_interval_covers_the_true_difference():
    rng = np.random.default_rng(4)
    p_a, p_b, n, hits, sims = 0.7, 0.5, 20, 0, 1500
    for _ in range(sims):
        a = rng.random(n) < p_a
        b = rng.random(n) < p_b
        both, worse = int((a & b).sum()), int((a & ~b).sum())
        better, neither = int((~a & b).sum()), int((~a & ~b).sum())
        low, high = st.newcombe_paired(both, worse, better, neither, 0.95)
        hits += low <= p_b - p_a <= high
    assert hits / sims >= 0.93


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    counts = [(3, 0, 7), (0, 1, 9), (2, 2, 6)]
    first = st.bootstrap_delta(counts, 0.95, seed=7)
    assert first == st.bootstrap_delta(counts, 0.95, seed=7)
    assert first[0] <= (1 - 5) / 30 <= first[1]


def test_missing_numpy_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(st.StatsUnavailable, match=r"pip install 'usersim-harness\[compare\]'"):
        st.require()


# --- pairing ---------------------------------------------------------------------------------


def test_cases_and_repeats_only_one_side_has_are_unpaired_with_the_reason():
    a = run({"X-01|0": "passed", "X-01|1": "passed", "X-01|2": "passed", "X-02|0": "passed"})
    b = run({"X-01|0": "passed", "X-01|1": "failed", "X-03|0": "passed"})
    c = compare_records(a, b)
    reasons = {(u.side, u.record_id): u.reason for u in c.unpaired}
    assert reasons == {
        ("A", "X-01|r2"): "A ran 3 repeat(s) of this variant, B 2",
        ("A", "X-02|r0"): "case not in run B (different suites)",
        ("B", "X-03|r0"): "case not in run A (different suites)",
    }
    assert c.suite.pairs == 2 and c.suite.worse == 1
    assert c.unpaired_reasons["case not in run B (different suites)"] == 1
    assert any("3 conversation(s) could not be paired" in w for w in c.warnings)


def test_different_seeds_pair_by_repeat_and_say_so_or_stay_unpaired_on_request():
    a = run({"X-01|0": "passed", "X-01|1": "failed"}, seed_base=100)
    b = run({"X-01|0": "passed", "X-01|1": "failed"}, seed_base=900)
    c = compare_records(a, b)
    assert c.suite.pairs == 2 and not any(p.same_seed for p in c.cases[0].flips + [])
    assert any("different seeds" in w and "less power" in w for w in c.warnings)
    strict = compare_records(a, b, same_seed_only=True)
    assert strict.suite.pairs == 0 and len(strict.unpaired) == 4
    assert {u.reason for u in strict.unpaired} == {
        "no conversation with the same seed in B (different run seeds)",
        "no conversation with the same seed in A (different run seeds)",
    }
    assert strict.verdict.exit_code == 2 and strict.verdict.line.startswith("nothing to compare")


def test_a_different_simulator_is_not_the_same_user():
    a = run({"X-01|0": "passed"}, mode="organic", simulator="rule")
    b = run({"X-01|0": "failed"}, mode="organic", simulator="openai:gpt-4o")
    c = compare_records(a, b)
    assert c.suite.pairs == 0
    assert c.unpaired[0].reason == "simulator differs (A rule, B openai:gpt-4o): not the same users"


def test_undecided_pairs_are_left_out_of_the_test_and_counted():
    a = run({"X-01|0": "passed", "X-01|1": "passed", "X-01|2": "unjudged"})
    b = run({"X-01|0": "inconclusive", "X-01|1": "failed", "X-01|2": "failed"})
    c = compare_records(a, b)
    case = c.cases[0]
    assert (case.pairs, case.decided, case.left_out, case.worse) == (3, 1, 2, 1)
    assert c.suite.left_out == 2


def test_error_counts_as_not_passing_like_the_gate():
    c = compare_records(run({"X-01|0": "passed"}), run({"X-01|0": "error"}))
    assert c.cases[0].worse == 1 and c.cases[0].flips[0].change == "worse"


# --- what differs inside a pair ------------------------------------------------------------------


def test_first_divergence_and_the_checks_that_moved():
    crit = "keywords {all: [confirmed]}"
    ok = [Verdict(judge="keywords", verdict="pass", reason="found", criterion=crit)]
    bad = [Verdict(judge="keywords", verdict="fail", reason="missing confirmed", criterion=crit)]
    a = [
        record(
            "X-01", status="passed", verdicts=ok, transcript=talk(("hi", "hello"), ("book it", "confirmed"))
        )
    ]
    b = [
        record("X-01", status="failed", verdicts=bad, transcript=talk(("hi", "hello"), ("book it", "sorry")))
    ]
    c = compare_records(a, b, links=("../a/report.html", "report.html"))
    flip = c.cases[0].flips[0]
    assert (flip.divergence_turn, flip.divergence_message, flip.same_transcript) == (2, 3, False)
    assert flip.a_link == "../a/report.html#r0" and flip.b_link == "report.html#r0"
    assert flip.moved == [f"keywords: {crit}"]
    assert c.cases[0].first_divergence == 2
    move = c.criteria[0]
    assert (move.judge, move.pass_to_fail, move.fail_to_pass, move.on_same_transcript) == (
        "keywords",
        1,
        0,
        0,
    )


def test_identical_transcripts_make_a_verdict_change_judge_noise():
    same = talk(("is it refundable?", "yes, within 30 days"))
    votes = {"votes": {"pass": 2, "fail": 1}, "agreement": 2 / 3}
    a = [
        record(
            "X-01",
            status="passed",
            transcript=same,
            verdicts=[Verdict(judge="llm_rubric", verdict="pass", reason="r", criterion="c", details=votes)],
        )
    ]
    b = [
        record(
            "X-01",
            status="failed",
            transcript=same,
            verdicts=[Verdict(judge="llm_rubric", verdict="fail", reason="r", criterion="c", details=votes)],
        )
    ]
    c = compare_records(a, b)
    assert c.cases[0].flips[0].same_transcript
    assert c.noise.same_transcript_pairs == 1 and c.noise.status_changes_on_same_transcript == 1
    assert c.criteria[0].on_same_transcript == 1
    assert any("identical transcripts" in n and "judge noise" in n for n in c.noise.notes)
    assert c.a.judge_noise.sampled_verdicts == 1 and c.a.judge_noise.split_verdicts == 1
    assert any("judges on A: 1 of 1 sampled verdicts split" in n for n in c.noise.notes)
    assert any("every pair has identical transcripts" in w and "none is the agent's" in w for w in c.warnings)


def test_agent_flip_rate_within_each_side_is_reported():
    a = run({"X-01|0": "passed", "X-01|1": "failed", "X-02|0": "passed", "X-02|1": "passed"})
    b = run({"X-01|0": "passed", "X-01|1": "passed", "X-02|0": "passed", "X-02|1": "passed"})
    c = compare_records(a, b)
    assert c.noise.agent_flip_rate_a == 0.5 and c.noise.agent_flip_rate_b == 0.0
    assert c.a.pass_hat_k.value == 0.5 and c.b.pass_hat_k.value == 1.0
    assert c.b.pass_hat_k.interval is not None and c.b.pass_hat_k.interval.low < 1.0


# --- the verdict -------------------------------------------------------------------------------


def test_a_consistent_drop_on_one_case_is_a_regression_and_the_rest_is_noise():
    spec_a = {f"X-01|{r}": "passed" for r in range(10)} | {f"X-02|{r}": "passed" for r in range(10)}
    spec_b = {f"X-01|{r}": "failed" for r in range(10)} | {f"X-02|{r}": "passed" for r in range(10)}
    spec_a["X-03|0"], spec_b["X-03|0"] = "failed", "passed"
    c = compare_records(run(spec_a), run(spec_b))
    by = {x.case_id: x for x in c.cases}
    assert by["X-01"].verdict == "significantly worse" and by["X-01"].p_value == pytest.approx(0.5**9)
    assert by["X-02"].verdict == "no change" and by["X-03"].verdict == "within noise"
    assert c.verdict.regression and c.verdict.exit_code == 1
    assert c.verdict.line.startswith("regression: 1 case(s) significantly worse (p < 0.05, Holm): X-01")
    assert "1 change(s) within noise" in c.verdict.line
    iv = by["X-01"].interval
    assert iv is not None and iv.high < 0 and iv.low >= -1


def test_few_repeats_flag_the_suite_without_naming_a_case():
    a = run({f"X-{i:02d}|0": "passed" for i in range(12)})
    b = run({f"X-{i:02d}|0": "failed" for i in range(12)})
    c = compare_records(a, b)
    assert c.suite.significant and not c.verdict.worse_cases and c.verdict.exit_code == 1
    assert "the suite is significantly worse (p < 0.05) though no single case is" in c.verdict.line


def test_compare_json_is_typed_and_versioned():
    c = compare_records(run({"X-01|0": "passed"}), run({"X-01|0": "failed"}))
    data = json.loads(c.model_dump_json())
    assert data["schema_version"] == COMPARE_SCHEMA_VERSION == 1
    assert Comparison.model_validate(data) == c
    assert "exact McNemar" in data["method"]["test"] and "Holm" in data["method"]["multiplicity"]
    assert data["costs"]["mean_duration_s"] == {"a": 0.1, "b": 0.1, "delta": 0.0}
