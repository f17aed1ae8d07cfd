"""Known-answer validation of `usersim compare` (issue 25's "Done when"): simulated agents with known
pass probabilities, many comparisons through the compare core (records in, verdict out).

- equal agents (0.8 vs 0.8): the false-alarm rate of "significant regression" stays <= alpha
  (<= 6% over 200 comparisons at alpha 0.05);
- 0.8 vs 0.6 at the repeats plan-repeats asks for: the measured power matches its prediction
  within a few points; and plan-repeats' simulated power matches the exact power of McNemar's
  test computed independently here for one case.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from scipy import stats

from tests.reports.factory import record
from usersim.reports.compare import compare_records
from usersim.reports.compare_plan import plan, power

CASES = ["K-01", "K-02", "K-03", "K-04", "K-05"]


@cache
def conversation(case_id: str, repeat: int, passed: bool, agent: str):
    """One record (records are immutable: built once, reused across the simulated runs)."""
    return record(
        case_id, status="passed" if passed else "failed", repeat=repeat, seed=1000 * repeat + 1, agent=agent
    )


def side(rng: np.random.Generator, rates: dict[str, float], repeats: int, agent: str) -> list:
    """One run: every case `repeats` times, passing with its known probability; the seeds are
    the same on both sides (same case, same repeat), like two runs with the same --seed."""
    out = []
    for case_id, p in rates.items():
        for r in range(repeats):
            out.append(conversation(case_id, r, bool(rng.random() < p), agent))
    return out


def regression_rate(p_a: float, p_b: float, repeats: int, comparisons: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    flagged = alarms = 0
    for _ in range(comparisons):
        a = side(rng, dict.fromkeys(CASES, p_a), repeats, "python:agents:a")
        b = side(rng, dict.fromkeys(CASES, p_b), repeats, "python:agents:b")
        c = compare_records(a, b, alpha=0.05)
        assert c.suite.pairs == len(CASES) * repeats and not c.unpaired
        flagged += c.verdict.regression
        # 3: a worse-looking change its interval and corrected test disagree on (never green, never 1)
        assert c.verdict.exit_code == 1 if c.verdict.regression else c.verdict.exit_code in (0, 3)
        alarms += c.verdict.exit_code != 0
    assert p_a != p_b or alarms / comparisons <= 0.06, f"equal agents: not green {alarms} of {comparisons}"
    return flagged / comparisons


def test_equal_agents_raise_a_false_regression_at_most_alpha_of_the_time():
    rate = regression_rate(0.8, 0.8, repeats=10, comparisons=200, seed=11)
    assert rate <= 0.06, rate


def test_equal_agents_with_one_repeat_per_case_stay_under_alpha():
    # the suite test carries the verdict when every case has one pair
    rate = regression_rate(0.7, 0.7, repeats=1, comparisons=200, seed=12)
    assert rate <= 0.06, rate


def test_power_at_the_planned_repeats_matches_the_prediction():
    baseline = {c: (8, 10) for c in CASES}  # observed 80% on every case
    p = plan("baseline", baseline, 10, detect=0.2, target=0.8, alpha=0.05, sims=4000, seed=3)
    assert p.repeats is not None and p.power is not None and p.power >= 0.8
    measured = regression_rate(0.8, 0.6, repeats=p.repeats, comparisons=300, seed=21)
    # 300 comparisons: standard error ~2.3 points
    assert abs(measured - p.power) <= 0.07, (p.repeats, p.power, measured)
    # one repeat fewer must not already reach the target by much (the plan is the smallest count)
    below = power([0.8] * 5, [0.6] * 5, p.repeats - 1, 0.05, 4000, 3)
    assert below < 0.8 + 0.02


def exact_mcnemar_power(p_a: float, p_b: float, n: int, alpha: float) -> float:
    """Exact power of the two-sided exact McNemar test flagging B worse, n independent pairs:
    sum over the discordant count D and the worse count W of P(D, W) [p(W, D) <= alpha, W > D/2]."""
    worse, better = p_a * (1 - p_b), (1 - p_a) * p_b
    q = worse / (worse + better)
    total = 0.0
    for d in range(1, n + 1):
        pd = stats.binom.pmf(d, n, worse + better)
        for w in range(d + 1):
            if 2 * w > d and stats.binomtest(w, d, 0.5).pvalue <= alpha:
                total += pd * stats.binom.pmf(w, d, q)
    return total


@pytest.mark.parametrize(("p_a", "p_b", "n"), [(0.8, 0.6, 30), (0.9, 0.5, 12), (0.6, 0.55, 40)])
def test_simulated_power_of_one_case_matches_the_exact_power(p_a, p_b, n):
    exact = exact_mcnemar_power(p_a, p_b, n, 0.05)
    simulated = power([p_a], [p_b], n, 0.05, 8000, 5)
    assert abs(simulated - exact) <= 0.02, (exact, simulated)
