"""`usersim realism`: simulated users compared with human users on measurable traits.

Per trait (reports/realism_measures.py) each conversation gives one value. The two sides are
independent samples, so the difference of means (simulated − human) gets a percentile bootstrap
interval, resampling conversations within each side (seeded: the same runs give the same
interval). A trait is

- `within` the human range when that 95% interval contains 0 (the runs cannot tell the simulated
  users from the human ones on it);
- `outside` when the interval excludes 0 (the simulated users differ, by `difference`);
- `too few` when a side has fewer than MIN_PER_TRAIT conversations where the trait applies.

The standardized difference (difference / pooled standard deviation, capped at ±CAP) says how far
apart the two distributions are regardless of the trait's unit. Summary: the share of judged traits
within range, and the distance, the mean absolute standardized difference over judged traits (0 =
indistinguishable; 0.2 small, 0.5 medium, 0.8 large, Cohen's rule of thumb). The agent's success
rate under each side is reported apart: its difference is the inflation (how many points a
simulated user adds to the agent's pass rate).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import sqrt
from statistics import fmean, pstdev

from pydantic import BaseModel, Field

from usersim.reports.realism_measures import SUCCESS, TRAITS, Measured, Trait

MIN_PER_SIDE = 5  # conversations per side below which the report says nothing (exit 3)
MIN_PER_TRAIT = 3  # conversations where a trait applies, per side, to judge that trait
CONFIDENCE = 0.95
REPS = 2000
CAP = 5.0  # a standardized difference when a side does not vary at all


class Distribution(BaseModel):
    n: int = Field(description="Conversations where the trait applies.")
    mean: float | None = Field(default=None, description="Mean over them.")
    sd: float | None = Field(default=None, description="Population standard deviation.")
    values: list[float] = Field(default_factory=list, description="One value per conversation.")


class TraitResult(BaseModel):
    key: str
    label: str
    unit: str
    meaning: str
    rate: bool
    simulated: Distribution
    human: Distribution
    difference: float | None = Field(default=None, description="Simulated mean − human mean.")
    interval: tuple[float, float] | None = Field(default=None, description="95% bootstrap interval of it.")
    standardized: float | None = Field(default=None, description="Difference / pooled sd (±CAP).")
    status: str = Field(description="within | outside | too few")
    reason: str = Field(description="One line: what was measured and decided.")


class RealismReport(BaseModel):
    simulated_run: str
    human_run: str
    simulated_conversations: int
    human_conversations: int
    case_family: str | None = None
    traits: list[TraitResult]
    success: TraitResult = Field(description="The agent's pass rate under each side; difference = inflation.")
    within: int = Field(description="Traits within the human range.")
    judged: int = Field(description="Traits with enough conversations on both sides.")
    score: float | None = Field(default=None, description="within / judged.")
    distance: float | None = Field(
        default=None, description="Mean |standardized difference| over judged traits."
    )
    line: str = Field(description="The summary line the CLI prints last.")
    method: dict[str, str] = Field(default_factory=dict)
    calibration: list[dict] = Field(default_factory=list, description="Before/after rows of --calibrate.")


def distribution(values: list[float]) -> Distribution:
    if not values:
        return Distribution(n=0)
    return Distribution(n=len(values), mean=fmean(values), sd=pstdev(values), values=values)


def bootstrap_difference(
    sim: Sequence[float],
    human: Sequence[float],
    *,
    seed: int = 0,
    reps: int = REPS,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(sim) − mean(human), independent samples."""
    rng = random.Random(seed)
    ns, nh = len(sim), len(human)
    diffs = sorted(sum(rng.choices(sim, k=ns)) / ns - sum(rng.choices(human, k=nh)) / nh for _ in range(reps))
    tail = (1 - confidence) / 2
    lo = diffs[int(tail * (reps - 1))]
    hi = diffs[int((1 - tail) * (reps - 1) + 0.5)]
    return lo, hi


def standardized(sim: Distribution, human: Distribution) -> float | None:
    if sim.mean is None or human.mean is None or sim.sd is None or human.sd is None:
        return None
    diff = sim.mean - human.mean
    pooled = sqrt(((sim.n * sim.sd**2) + (human.n * human.sd**2)) / (sim.n + human.n))
    if pooled == 0:
        return 0.0 if diff == 0 else (CAP if diff > 0 else -CAP)
    return max(-CAP, min(CAP, diff / pooled))


def _fmt(v: float, rate: bool) -> str:
    return f"{v * 100:.0f}%" if rate else f"{v:.2f}"


def _pts(v: float, rate: bool) -> str:
    return f"{v * 100:+.0f} pts" if rate else f"{v:+.2f}"


def compare_trait(trait: Trait, sim: list[Measured], human: list[Measured], seed: int) -> TraitResult:
    s = distribution([m.values[trait.key] for m in sim if m.values.get(trait.key) is not None])  # type: ignore[misc]
    h = distribution([m.values[trait.key] for m in human if m.values.get(trait.key) is not None])  # type: ignore[misc]
    base = dict(key=trait.key, label=trait.label, unit=trait.unit, meaning=trait.meaning, rate=trait.rate)
    if s.n < MIN_PER_TRAIT or h.n < MIN_PER_TRAIT:
        why = (
            f"applies to {s.n} simulated and {h.n} human conversation(s); "
            f"{MIN_PER_TRAIT} per side are needed to judge it"
        )
        return TraitResult(**base, simulated=s, human=h, status="too few", reason=why)
    assert s.mean is not None and h.mean is not None
    diff = s.mean - h.mean
    lo, hi = bootstrap_difference(s.values, h.values, seed=seed)
    status = "within" if lo <= 0 <= hi else "outside"
    iv = f"[{_pts(lo, trait.rate)}, {_pts(hi, trait.rate)}]"
    reason = (
        f"simulated {_fmt(s.mean, trait.rate)} (n={s.n}) vs human {_fmt(h.mean, trait.rate)} (n={h.n}): "
        f"difference {_pts(diff, trait.rate)} {iv}; "
        + ("the interval contains 0" if status == "within" else "the interval excludes 0")
    )
    return TraitResult(
        **base,
        simulated=s,
        human=h,
        difference=diff,
        interval=(lo, hi),
        standardized=standardized(s, h),
        status=status,
        reason=reason,
    )


def build_report(
    sim: list[Measured],
    human: list[Measured],
    *,
    simulated_run: str,
    human_run: str,
    case_family: str | None = None,
    seed: int = 0,
) -> RealismReport:
    traits = [compare_trait(t, sim, human, seed + i) for i, t in enumerate(TRAITS)]
    success = compare_trait(SUCCESS, sim, human, seed + len(TRAITS))
    judged = [t for t in traits if t.status != "too few"]
    within = [t for t in judged if t.status == "within"]
    score = len(within) / len(judged) if judged else None
    distance = fmean(abs(t.standardized or 0.0) for t in judged) if judged else None
    outside = [t.label for t in judged if t.status == "outside"]
    line = f"realism: {len(within)}/{len(judged)} traits within the human range"
    if distance is not None:
        line += f", distance {distance:.2f}"
    if outside:
        line += "; outside: " + ", ".join(outside)
    if success.difference is not None:
        line += f"; agent success inflated by {success.difference * 100:+.0f} pts"
        if success.interval:
            line += f" [{success.interval[0] * 100:+.0f}, {success.interval[1] * 100:+.0f}]"
    return RealismReport(
        simulated_run=simulated_run,
        human_run=human_run,
        simulated_conversations=len(sim),
        human_conversations=len(human),
        case_family=case_family,
        traits=traits,
        success=success,
        within=len(within),
        judged=len(judged),
        score=score,
        distance=distance,
        line=line,
        method={
            "interval": f"{CONFIDENCE:.0%} percentile bootstrap of the difference of means, {REPS} "
            "resamples of conversations within each side (independent samples), seeded",
            "within": "the interval contains 0",
            "standardized": f"difference / pooled population sd, capped at ±{CAP:g}",
            "score": "traits within / traits judged",
            "distance": "mean |standardized difference| over traits judged",
            "minimum": f"{MIN_PER_SIDE} conversations per side; {MIN_PER_TRAIT} per side where a trait applies",
        },
    )
