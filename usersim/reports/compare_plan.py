"""`usersim plan-repeats`: how many repeats per case a comparison needs to see a given drop.

The power is that of the procedure `usersim compare` applies (reports.compare_stats: exact McNemar
per case and over the suite, decided as one family by Holm's weighted step-down), estimated by
simulating it: every case keeps the pass rate it had in the baseline run on side A, side B loses
`detect` from it (or only one case does, for the per-case rows), and the two sides of a pair are
drawn independently. Independence is what different simulated users give; a deterministic
simulator with shared seeds makes the sides agree more often, so it usually needs fewer repeats
than planned here (the plan errs on the safe side).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.reports.compare_stats import mcnemar_p_array, require

SIMULATIONS = 4000
MAX_REPEATS = 200


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CasePlan(Strict):
    """Repeats needed to see a drop on one case alone (the other cases unchanged)."""

    case_id: str = Field(description="Case id.")
    baseline_rate: float = Field(description="Pass rate on the baseline (passed / decided).")
    baseline_runs: int = Field(description="Decided conversations of the case in the baseline.")
    target_rate: float = Field(description="The pass rate after the drop (never below 0).")
    repeats: int | None = Field(description="Repeats needed; null when not reached within max_repeats.")
    power: float | None = Field(
        description="Estimated power at `repeats` (or at max_repeats when unreached)."
    )


class Plan(Strict):
    """plan-repeats' answer (printed, and written with --json)."""

    baseline: str = Field(description="The baseline run folder.")
    detect: float = Field(description="The drop in pass rate to detect (0..1).")
    power_target: float = Field(description="The wanted chance of flagging the drop.")
    alpha: float = Field(description="Family-wise false-alarm rate of compare.")
    simulations: int = Field(description="Simulated comparisons per repeat count tried.")
    seed: int = Field(description="Seed of the simulation (numpy Generator).")
    repeats: int | None = Field(
        description="Repeats per case for a suite-wide drop of `detect` on every case; null when not "
        "reached within max_repeats."
    )
    power: float | None = Field(description="Estimated power at `repeats`.")
    repeats_one_case: int | None = Field(
        description="Repeats per case for a drop of `detect` on any ONE case alone (the others unchanged) "
        "to be flagged: the most any case needs; null when some case is not reached within max_repeats."
    )
    hardest_case: str | None = Field(description="The case needing the most repeats alone.")
    current_repeats: int = Field(description="Repeats the baseline ran per case variant (most common).")
    power_at_current: float = Field(description="Estimated power with the baseline's own repeats.")
    max_repeats: int = Field(description="Largest repeat count tried.")
    cases: list[CasePlan] = Field(default_factory=list, description="Per case: the drop on that case alone.")
    assumptions: str = Field(description="What the simulation assumes.")


def _holm_rows(p: Any, w: Any, alpha: float) -> Any:
    """Row-wise weighted Holm step-down (compare_stats.weighted_holm on every row at once)."""
    np, _ = require()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(w > 0, p / np.where(w > 0, w, 1), np.inf)
    order = np.argsort(ratio, axis=1, kind="stable")
    ps = np.take_along_axis(p, order, 1)
    ws = np.take_along_axis(w, order, 1)
    left = ws[:, ::-1].cumsum(axis=1)[:, ::-1]  # weight not yet rejected, the current one included
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (ws > 0) & (ps <= alpha * ws / np.where(left > 0, left, 1))
    rejected_sorted = np.cumprod(ok, axis=1).astype(bool)
    rejected = np.zeros_like(rejected_sorted)
    np.put_along_axis(rejected, order, rejected_sorted, 1)
    return rejected


def flagged(worse: Any, better: Any, alpha: float) -> Any:
    """Per simulated comparison (rows; columns are cases): did compare flag a regression?"""
    np, _ = require()
    sw, sb = worse.sum(1), better.sum(1)
    suite_p = mcnemar_p_array(sw, sb)
    case_p = mcnemar_p_array(worse, better)
    member = (worse + better) > 0
    m = member.sum(1)
    w_case = np.where(member, 0.5 / np.maximum(m, 1)[:, None], 0.0)
    p = np.concatenate([suite_p[:, None], case_p], axis=1)
    w = np.concatenate([np.full((len(sw), 1), 0.5), w_case], axis=1)
    rej = _holm_rows(p, w, alpha)
    worse_dir = np.concatenate([(sw > sb)[:, None], worse > better], axis=1)
    many = (rej & worse_dir).any(axis=1)
    single = (suite_p <= alpha) & (sw > sb)  # one case in the family: tested once at alpha
    return np.where(m <= 1, single, many)


def power(
    p_a: Sequence[float], p_b: Sequence[float], repeats: int, alpha: float, sims: int, seed: int
) -> float:
    """Estimated chance that compare flags a regression with `repeats` pairs per case."""
    np, _ = require()
    rng = np.random.default_rng(seed)
    a, b = np.asarray(p_a, float), np.asarray(p_b, float)
    worse_p, better_p = a * (1 - b), (1 - a) * b
    probs = np.stack([worse_p, better_p, np.clip(1 - worse_p - better_p, 0, 1)], axis=1)
    probs = probs / probs.sum(axis=1, keepdims=True)
    draws = rng.multinomial(repeats, probs, size=(sims, len(a)))
    return float(flagged(draws[..., 0], draws[..., 1], alpha).mean())


def repeats_needed(
    p_a: Sequence[float], p_b: Sequence[float], target: float, alpha: float, sims: int, seed: int, top: int
) -> tuple[int | None, float]:
    """The smallest repeat count (doubling, then bisection) whose power reaches `target`."""
    lo, hi, found = 0, 1, None
    while hi <= top:
        pw = power(p_a, p_b, hi, alpha, sims, seed)
        if pw >= target:
            found = pw
            break
        lo, hi = hi, hi * 2
    if found is None:
        if hi // 2 < top:  # try the cap itself once
            pw = power(p_a, p_b, top, alpha, sims, seed)
            if pw >= target:
                lo, hi, found = hi // 2, top, pw
        if found is None:
            return None, power(p_a, p_b, top, alpha, sims, seed)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        pw = power(p_a, p_b, mid, alpha, sims, seed)
        if pw >= target:
            hi, found = mid, pw
        else:
            lo = mid
    return hi, found


def plan(
    baseline: str,
    rates: dict[str, tuple[int, int]],
    current_repeats: int,
    *,
    detect: float,
    target: float,
    alpha: float,
    sims: int = SIMULATIONS,
    seed: int = 0,
    top: int = MAX_REPEATS,
) -> Plan:
    """The plan from the baseline's per-case (passed, decided) counts."""
    ids = sorted(c for c, (_, n) in rates.items() if n)
    p_a = [rates[c][0] / rates[c][1] for c in ids]
    dropped = [max(0.0, p - detect) for p in p_a]
    n, pw = repeats_needed(p_a, dropped, target, alpha, sims, seed, top)
    cases = []
    for i, cid in enumerate(ids):
        one = list(p_a)
        one[i] = dropped[i]
        cn, cpw = repeats_needed(p_a, one, target, alpha, sims, seed, top)
        cases.append(
            CasePlan(
                case_id=cid,
                baseline_rate=round(p_a[i], 4),
                baseline_runs=rates[cid][1],
                target_rate=round(dropped[i], 4),
                repeats=cn,
                power=round(cpw, 4),
            )
        )
    unreached = [c for c in cases if c.repeats is None]
    hardest = unreached[0] if unreached else max(cases, key=lambda c: c.repeats or 0, default=None)
    return Plan(
        repeats_one_case=None if unreached or not cases else hardest.repeats if hardest else None,
        hardest_case=hardest.case_id if hardest else None,
        baseline=baseline,
        detect=detect,
        power_target=target,
        alpha=alpha,
        simulations=sims,
        seed=seed,
        repeats=n,
        power=round(pw, 4),
        current_repeats=current_repeats,
        power_at_current=round(power(p_a, dropped, current_repeats, alpha, sims, seed), 4),
        max_repeats=top,
        cases=cases,
        assumptions="each case keeps its baseline pass rate on side A and loses `detect` on side B; the two "
        "sides of a pair are independent (different simulated users; shared seeds with a deterministic "
        "simulator usually need fewer); the test is compare's own (exact McNemar, suite and cases as "
        "one Holm family at alpha)",
    )
