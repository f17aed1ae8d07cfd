"""The statistics of `usersim compare` and `usersim plan-repeats` (numpy + scipy, the `compare` extra).

The unit is a *pair*: the same case variant and repeat run on side A (the baseline) and side B.
A pair is concordant (both passed, or both did not) or discordant: `worse` (A passed, B did not)
or `better` (A did not, B passed). Only discordant pairs carry evidence of a change.

- Test: exact McNemar, i.e. a two-sided binomial test of `worse` out of the discordant pairs
  against 1/2 (scipy.stats.binomtest). Exact, so it holds at the handful of repeats a case gets
  (the chi-square form needs ~10 discordant pairs), and it conditions on the pairing: a simulated
  user shared by both sides cancels out.
- Family: the suite-level test and one test per case with discordant pairs are decided together
  by Holm's weighted step-down (weight 1/2 on the suite, 1/(2m) on each of m cases), so the chance
  of any false "significant" — and so of a false regression verdict — is at most alpha for equal
  agents. Cases without a discordant pair cannot reject and are not in the family (conditional on
  the discordant counts the tests are exact, so choosing the family by them costs nothing).
- Intervals: per case Newcombe's paired score interval (method 10, from Wilson intervals) for
  B - A; over the suite a two-stage paired bootstrap (cases, then pairs within them; numpy's
  seeded Generator, so it is reproducible). The test speaks about this suite's cases; the suite
  interval also covers case-to-case spread (what a similar suite would show), so it is the wider
  of the two and can include 0 when the test rejects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import sqrt
from typing import Any

INSTALL_HINT = "usersim compare needs numpy and scipy: pip install 'usersim-harness[compare]'"
BOOTSTRAP_REPS = 4000


class StatsUnavailable(RuntimeError):
    """numpy or scipy is missing: the message says how to install them."""


def require() -> tuple[Any, Any]:
    """(numpy, scipy.stats), imported here so the rest of usersim never needs them."""
    try:
        import numpy
        from scipy import stats  # type: ignore[import-untyped]
    except ImportError as exc:
        raise StatsUnavailable(f"{INSTALL_HINT} ({exc})") from None
    return numpy, stats


def mcnemar_p(worse: int, better: int) -> float:
    """Exact two-sided McNemar p-value of `worse` vs `better` discordant pairs (1.0 when none):
    scipy.stats.binomtest(worse, worse + better, 0.5).pvalue, computed as `mcnemar_p_array` does
    (a test holds the two equal) because binomtest's general search is ~100 times slower."""
    return float(mcnemar_p_array(worse, better))


def mcnemar_p_array(worse: Any, better: Any) -> Any:
    """Vectorised `mcnemar_p`: for p = 1/2 binomtest's two-sided p-value is
    min(1, 2 * P(X <= min(worse, better))), X ~ Binomial(worse + better, 1/2)."""
    np, stats = require()
    worse, better = np.asarray(worse), np.asarray(better)
    n = worse + better
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(worse, better), np.maximum(n, 1), 0.5))
    return np.where(n == 0, 1.0, p)


def wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson score interval of k successes in n; (0, 1) when n is 0. The same numbers as
    scipy's binomtest(k, n).proportion_ci(method="wilson") (a test holds them equal), without
    its per-call overhead: z from scipy's normal quantile, then the score formula."""
    if n == 0:
        return 0.0, 1.0
    _, stats = require()
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    p = k / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, center - half), min(1.0, center + half)


def newcombe_paired(
    both: int, worse: int, better: int, neither: int, confidence: float
) -> tuple[float, float]:
    """Newcombe (1998) method 10: interval of p_B - p_A for paired binary outcomes.

    `both` passed on both sides, `worse` only A passed, `better` only B passed, `neither` none.
    """
    n = both + worse + better + neither
    if n == 0:
        return -1.0, 1.0
    p_a, p_b = (both + worse) / n, (both + better) / n
    l_a, u_a = wilson(both + worse, n, confidence)
    l_b, u_b = wilson(both + better, n, confidence)
    denom = (both + worse) * (better + neither) * (both + better) * (worse + neither)
    phi = (both * neither - worse * better) / sqrt(denom) if denom else 0.0
    delta = p_b - p_a
    low = delta - sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2))
    high = delta + sqrt(max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2))
    return max(-1.0, low), min(1.0, high)


def bootstrap_delta(
    counts: Sequence[tuple[int, int, int]], confidence: float, seed: int, reps: int = BOOTSTRAP_REPS
) -> tuple[float, float]:
    """Two-stage paired bootstrap interval of the suite's p_B - p_A.

    `counts` per case: (worse, better, concordant) decided pairs. Each replicate draws the cases
    with replacement, then each drawn case's pairs with replacement (a multinomial of its own
    counts), keeping the two sides of a pair together, and recomputes (better - worse) / pairs;
    the interval is the percentile interval. Drawing the cases too keeps the interval honest when
    every case is all-or-nothing (deterministic agents), where resampling pairs alone gives a point.
    """
    np, _ = require()
    rng = np.random.default_rng(seed)
    kept = [c for c in counts if sum(c)]
    if not kept:
        return -1.0, 1.0
    n = np.array([sum(c) for c in kept])
    probs = np.array([[w / sum(c), b / sum(c), s / sum(c)] for c in kept for w, b, s in [c]])
    picks = rng.integers(0, len(kept), size=(reps, len(kept)))
    draws = rng.multinomial(n[picks], probs[picks])
    net = (draws[..., 1] - draws[..., 0]).sum(axis=1) / n[picks].sum(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(net, [tail, 1 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class FamilyDecision:
    """What Holm's weighted step-down decided for the suite and each case."""

    suite_p: float
    case_p: list[float]
    suite_rejected: bool
    case_rejected: list[bool]
    in_family: list[bool]  # cases with discordant pairs (the others cannot reject)


def weighted_holm(pvalues: Sequence[float], weights: Sequence[float], alpha: float) -> list[bool]:
    """Holm's weighted step-down (Holm 1979): hypotheses in order of p/w; the j-th is rejected
    while p_j <= alpha * w_j / (sum of the weights not yet rejected). Family-wise error <= alpha."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i] / weights[i])
    left = sum(weights)
    rejected = [False] * len(pvalues)
    for i in order:
        if pvalues[i] > alpha * weights[i] / left:
            break
        rejected[i] = True
        left -= weights[i]
    return rejected


def decide_family(counts: Sequence[tuple[int, int]], alpha: float) -> FamilyDecision:
    """The suite test and the per-case tests, as one family (see the module docstring).

    `counts` per case: (worse, better). With one case in the family the suite test is that case's
    test, so it is tested once at alpha.
    """
    worse = sum(w for w, _ in counts)
    better = sum(b for _, b in counts)
    suite_p = mcnemar_p(worse, better)
    case_p = [mcnemar_p(w, b) for w, b in counts]
    members = [i for i, (w, b) in enumerate(counts) if w + b]
    in_family = [bool(w + b) for w, b in counts]
    if len(members) <= 1:
        rejected = suite_p <= alpha
        return FamilyDecision(
            suite_p, case_p, rejected, [rejected and i in members for i in range(len(counts))], in_family
        )
    pvalues = [suite_p, *(case_p[i] for i in members)]
    weights = [0.5, *([0.5 / len(members)] * len(members))]
    decided = weighted_holm(pvalues, weights, alpha)
    case_rejected = [False] * len(counts)
    for slot, i in enumerate(members, start=1):
        case_rejected[i] = decided[slot]
    return FamilyDecision(suite_p, case_p, decided[0], case_rejected, in_family)


def regression_flagged(counts: Sequence[tuple[int, int]], decision: FamilyDecision) -> bool:
    """Some rejected hypothesis (the suite or a case) points to B being worse."""
    worse = sum(w for w, _ in counts)
    better = sum(b for _, b in counts)
    if decision.suite_rejected and worse > better:
        return True
    return any(r and w > b for r, (w, b) in zip(decision.case_rejected, counts))
