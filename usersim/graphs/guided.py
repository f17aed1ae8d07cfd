"""Coverage-guided exploration: spend a case's budget of conversations in rounds.

Round 1 is a small diverse sample: each variant takes, on every variation axis (every finite trait of
the persona schema, and the reveal policy), the value tried least so far, so a few conversations
already try every value once. Later rounds split their slots between
  * mutations of failing and near-failing conversations (a neighbour: one axis changed, towards axis
    pairs not tried yet; or the same variant with a new seed), ranked by how near they came to failing
    (`nearness`), then of conversations that alone had some observed feature (a rare tool, stop, turns),
  * and under-covered regions: the variant covering most axis pairs never tried.
Everything draws from one RNG seeded by the case id and the run seed, and reads only records, so the
same --seed plans the same conversations.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from usersim.cases.schema import Case
from usersim.core.record import RunRecord
from usersim.graphs.coverage import Features
from usersim.graphs.runner import RunConfig, run_trials
from usersim.personas.schema import Persona
from usersim.personas.variation import (
    Pair,
    _candidate,
    _gain,
    all_pairs,
    mutate,
    pairs_of,
    variant_axes,
    with_levels,
)
from usersim.reports.coverage_map import Round

if TYPE_CHECKING:
    from usersim.graphs.trials import Trial

# sim_events kinds that show the simulated user had to be corrected or refused something
_STRAIN = {"retry", "rejected", "stop_refused", "proposal_refused", "guard"}
CANDIDATES = 20  # variants drawn per slot; the one covering most untried pairs wins
RARE_BONUS = 0.1  # below any near-failure signal but above a clean pass: novelty breaks ties
OBSERVED = ("event", "tool", "intercept", "turns", "stop_reason")  # what happened, beside the outcome


def nearness(record: RunRecord) -> float:
    """How near a conversation came to failing, from what its record holds: 1 for a failure; else the
    score's shortfall, failing checks that do not decide the status, a give-up or max_turns stop, the
    simulator having to retry or being refused, a fidelity suspicion or re-simulation, and an undecided
    status add up (below 1)."""
    if record.status in ("failed", "error"):
        return 1.0
    near = 0.0
    if record.score is not None:
        near += 0.5 * (1.0 - record.score)
    near += 0.2 * min(2, sum(v.verdict == "fail" and not v.counts_toward_status for v in record.verdicts))
    if record.stop_reason in ("gave_up", "max_turns"):
        near += 0.2
    if any(e.kind in _STRAIN for e in record.sim_events):
        near += 0.15
    if record.simulator_suspect or len(record.attempts) > 1:
        near += 0.15
    if record.status in ("unjudged", "inconclusive"):
        near += 0.1
    return min(near, 0.99)


@dataclass
class Pick:
    """One planned conversation: the variant's axis levels and its repeat (a new seed of a variant)."""

    levels: dict[str, Any]
    repeat: int = 0
    parent: str | None = None  # the trial id it mutates


@dataclass
class GuidedPlan:
    """The rounds of one case: what was planned, which variant ids the levels got."""

    base: Persona
    seed: int
    axes: dict[str, list[Any]] = field(init=False)
    rng: random.Random = field(init=False)
    picks: list[Pick] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # repr(levels) -> persona variant id

    def __post_init__(self) -> None:
        self.axes = variant_axes(self.base)
        base_id = self.base.id.split("~")[0]
        self.rng = random.Random(f"usersim-guided|{base_id}|{self.seed}")
        self.uncovered: set[Pair] = all_pairs(self.axes)

    # --- bookkeeping -----------------------------------------------------------------------------

    def persona(self, pick: Pick) -> Persona:
        """The persona variant of a pick (`<base>~v<k>`, k in order of first use)."""
        key = repr(sorted(pick.levels.items()))
        if key not in self.ids:
            self.ids[key] = f"{self.base.id.split('~')[0]}~v{len(self.ids) + 1}"
        return with_levels(self.base, pick.levels, self.ids[key])

    def _planned(self, levels: dict[str, Any], repeat: int = 0) -> bool:
        return any(p.levels == levels and p.repeat == repeat for p in self.picks)

    def _add(self, pick: Pick) -> Pick:
        while self._planned(pick.levels, pick.repeat):  # a variant planned already runs with a new seed
            pick = Pick(pick.levels, pick.repeat + 1, pick.parent)
        self.picks.append(pick)
        self.uncovered -= pairs_of(pick.levels, self.axes)
        return pick

    def _counts(self) -> dict[tuple[str, Any], int]:
        counts: dict[tuple[str, Any], int] = {}
        for p in self.picks:
            for a, v in p.levels.items():
                counts[(a, v)] = counts.get((a, v), 0) + 1
        return counts

    # --- the kinds of slot --------------------------------------------------------------------------

    def diverse(self) -> Pick:
        """A variant whose values were tried least so far (untried ones first), pairs as tie-break."""
        counts = self._counts()
        for _ in range(CANDIDATES):
            order = list(self.axes)
            self.rng.shuffle(order)
            row: dict[str, Any] = {}
            for a in order:
                scores = {v: (-counts.get((a, v), 0), _gain(a, v, row, self.uncovered)) for v in self.axes[a]}
                best = max(scores.values())
                row[a] = self.rng.choice([v for v in self.axes[a] if scores[v] == best])
            levels = {a: row[a] for a in self.axes}
            if not self._planned(levels):
                break
        return self._add(Pick(levels))

    def uncovered_region(self) -> Pick:
        """The variant covering most axis pairs never tried (diverse once every pair was tried)."""
        if not self.uncovered:
            return self.diverse()
        draws = [_candidate(self.axes, self.uncovered, self.rng) for _ in range(CANDIDATES)]
        fresh = [d for d in draws if not self._planned({a: d[a] for a in self.axes})] or draws
        best = max(fresh, key=lambda r: len(pairs_of(r, self.axes) & self.uncovered))
        return self._add(Pick({a: best[a] for a in self.axes}))

    def neighbour(self, parent: Pick, parent_id: str) -> Pick | None:
        """A mutation of a (near-)failing variant: one axis changed, or (one time in four, or when
        every neighbour was planned) the same variant with a new seed."""
        if self.rng.random() >= 0.25:
            for _ in range(CANDIDATES):
                levels = mutate(parent.levels, self.axes, self.rng, self.uncovered)
                if not self._planned(levels):
                    return self._add(Pick(levels, parent=parent_id))
        repeat = 1 + max(p.repeat for p in self.picks if p.levels == parent.levels)
        return self._add(Pick(dict(parent.levels), repeat=repeat, parent=parent_id))

    # --- rounds -----------------------------------------------------------------------------------

    def first_round(self, size: int) -> list[Pick]:
        return [self.diverse() for _ in range(size)]

    def next_round(self, size: int, ranked: list[tuple[Pick, str]]) -> list[Pick]:
        """`ranked`: earlier picks with their trial ids, nearest to failing first (only those with a
        positive nearness). Half the slots (rounded up) mutate them, the rest go to untried pairs."""
        out: list[Pick] = []
        exploit = math.ceil(size / 2) if ranked else 0
        for j in range(size):
            pick = None
            if j < exploit:
                parent, parent_id = ranked[j % len(ranked)]
                pick = self.neighbour(parent, parent_id)
            out.append(pick or self.uncovered_region())
        return out


def round_sizes(n: int) -> list[int]:
    """A case's budget n as rounds: a diverse first round of max(3, n/4), then rounds of max(2, n/5)."""
    first = min(n, max(3, math.ceil(n / 4)))
    sizes = [first]
    step = max(2, math.ceil(n / 5))
    while sum(sizes) < n:
        sizes.append(min(step, n - sum(sizes)))
    return sizes


def rare(features: list[Features]) -> set[str]:
    """Records holding a conversation feature value (an event fired, a tool, an intercept, a turn count,
    a stop reason) that no other conversation of the case had: an under-covered region of what happens."""
    counts = Counter((d, v) for f in features for d in OBSERVED for v in f.values.get(d, []))
    if len(features) < 2:
        return set()
    return {
        f.record_id
        for f in features
        if any(counts[(d, v)] == 1 for d in OBSERVED for v in f.values.get(d, []))
    }


def _ranked(trials: list[Trial], picks: dict[str, Pick], records: list[RunRecord]) -> list[tuple[Pick, str]]:
    """A case's earlier conversations worth mutating: those that failed or came near it, and those that
    alone had some conversation feature (RARE_BONUS); highest first, plan order on ties."""
    from usersim.graphs.explore import describe

    by_id = {r.id: r for r in records}
    odd = rare(describe(trials, records))
    ranked = [
        (nearness(by_id[t.id]) + (RARE_BONUS if t.id in odd else 0.0), i, t.id)
        for i, t in enumerate(trials)
        if t.id in by_id
    ]
    return [(picks[tid], tid) for score, _, tid in sorted(ranked, key=lambda x: (-x[0], x[1])) if score > 0]


async def run_guided(
    cases: list[Case], cfg: RunConfig, out_dir: Path, meta: dict[str, Any], n: int
) -> tuple[list[Trial], list[RunRecord], list[Round]]:
    """Run n conversations per case in guided rounds (round_sizes); returns the trials in plan order,
    the records, and what each round did. The variants' levels go into meta["explore"]["variants"]
    (promote rebuilds a variant from them)."""
    from usersim.graphs.explore import describe, variant_trial
    from usersim.personas.loader import resolve_persona

    plans = {c.id: GuidedPlan(resolve_persona(c), cfg.seed) for c in cases}
    trials: list[Trial] = []
    picks: dict[str, Pick] = {}
    records: list[RunRecord] = []
    rounds: list[Round] = []
    seen: set[tuple[str, str]] = set()
    for index, size in enumerate(round_sizes(n), start=1):
        fresh: list[Trial] = []
        for case in cases:
            plan = plans[case.id]
            mine = [t for t in trials if t.case.id == case.id]
            chosen = (
                plan.first_round(size) if index == 1 else plan.next_round(size, _ranked(mine, picks, records))
            )
            for pick in chosen:
                trial = variant_trial(case, plan.persona(pick), pick.repeat, cfg.seed)
                picks[trial.id] = pick
                fresh.append(trial)
        trials += fresh
        meta["explore"]["variants"] = {
            t.persona.id: picks[t.id].levels for t in trials if t.persona is not None
        }
        records = list(await run_trials(trials, replace(cfg, resume=cfg.resume or index > 1), out_dir, meta))
        features = describe(fresh, records)
        values = {(d, v) for f in features for d, vs in f.values.items() for v in vs}
        rounds.append(
            Round(
                index=index,
                kind="diverse" if index == 1 else "guided",
                conversations=len(fresh),
                mutations=sum(picks[t.id].parent is not None for t in fresh),
                mutated=sorted({p for t in fresh if (p := picks[t.id].parent)}),
                new_values=len(values - seen),
                failed=sum(f.status in ("failed", "error") for f in features),
            )
        )
        seen |= values
    return trials, records, rounds
