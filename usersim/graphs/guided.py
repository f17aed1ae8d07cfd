"""Coverage-guided exploration: spend a case's budget of conversations in rounds.

Round 1 is a covering design (personas/covering.py) over every variation axis (every finite trait
of the persona schema, and the reveal policy): when the budget allows it whole (at most half the
budget), every pair of axis values is tried in round 1; otherwise its first rows, each trying the
most pairs not tried yet. The random strategy runs the same design's first n rows, so both start
alike. Later rounds split their slots between
  * near failures (graphs/nearness.py), two thirds: recombinations of the failing and near-failing
    conversations (each axis takes one of their values, drawn by how near the conversations with
    that value came, `value_estimates`: a flaw that needs several settings at once, each of which
    alone degrades the conversation, is put together from the conversations that showed one), and
    neighbours of them when only one came near (one axis changed, to the value that came nearest,
    or the same variant with a new seed); conversations that alone had some observed feature (a
    rare tool, stop, turn count) count as slightly near;
  * and the design's next rows: the pairs still never tried.
Without any near miss (nor a conversation alone in some feature) every slot is a design row: guided
is then the random strategy itself.
Everything draws from RNGs seeded by the case's persona and the run seed, and reads only records, so
the same --seed plans the same conversations.
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
from usersim.graphs.nearness import nearness, value_estimates
from usersim.graphs.runner import RunConfig, run_trials
from usersim.personas.covering import CANDIDATES, Design, covering_size, design_seed
from usersim.personas.schema import Persona
from usersim.personas.variation import Pair, _gain, pairs_of, variant_axes, with_levels
from usersim.reports.coverage_map import Round

if TYPE_CHECKING:
    from usersim.graphs.trials import Trial

__all__ = ["GuidedPlan", "Pick", "nearness", "round_sizes", "run_guided"]

RARE_BONUS = 0.1  # below any near-failure signal but above a clean pass: novelty breaks ties
OBSERVED = ("event", "tool", "intercept", "turns", "stop_reason")  # what happened, beside the outcome
PARENTS = 5  # the nearest conversations a recombination draws its values from
RESEED = 0.2  # share of neighbours that rerun the same variant with a new seed
DESIGN_SHARE = 4  # of a later round's slots, one in DESIGN_SHARE (rounded down) goes to the design's rows
SHARPNESS = 3.0  # a recombination draws a value with probability ~ estimate ** SHARPNESS
PICK_OF = 3  # a recombination keeps, of its first PICK_OF children drawn, the one trying most untried pairs
RECOMBINE_EVERY = 1  # of the near-failure slots every k-th recombines (1: all), the others mutate


@dataclass
class Pick:
    """One planned conversation: the variant's axis levels and its repeat (a new seed of a variant)."""

    levels: dict[str, Any]
    repeat: int = 0
    parent: str | None = None  # the trial id it mutates (a recombination: the nearest of its parents)


Scored = tuple[Pick, str, float]  # an earlier pick, its trial id, its nearness (with RARE_BONUS)


@dataclass
class GuidedPlan:
    """The rounds of one case: what was planned, which variant ids the levels got."""

    base: Persona
    seed: int
    axes: dict[str, list[Any]] = field(init=False)
    rng: random.Random = field(init=False)
    design: Design = field(init=False)
    picks: list[Pick] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # repr(levels) -> persona variant id

    def __post_init__(self) -> None:
        self.axes = variant_axes(self.base)
        base_id = self.base.id.split("~")[0]
        self.rng = random.Random(f"usersim-guided|{base_id}|{self.seed}")
        self.design = Design(self.axes, random.Random(design_seed(base_id, self.seed)))

    @property
    def uncovered(self) -> set[Pair]:
        """The axis-value pairs no planned conversation tried yet."""
        return self.design.uncovered

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
        self.design.add(pick.levels)
        return pick

    # --- the kinds of slot --------------------------------------------------------------------------

    def covering(self) -> Pick:
        """The design's next row: the variant trying most pairs never tried (values balanced after)."""
        return self._add(Pick(self.design.next_row()))

    def recombine(self, near: list[Scored], est: dict[tuple[str, Any], float], mean: float) -> Pick | None:
        """A variant made of the nearest conversations' values (the PARENTS nearest with distinct
        levels): each axis takes one of their values, drawn in proportion to how near the
        conversations with that value came. None when no new variant comes out."""
        parents: list[Scored] = []
        for s in near:
            if all(s[0].levels != p[0].levels for p in parents):
                parents.append(s)
        parents = parents[:PARENTS]
        if len(parents) < 2:
            return None
        children: list[dict[str, Any]] = []
        for _ in range(CANDIDATES):
            levels = {}
            for a in self.axes:
                values = list(dict.fromkeys(p[0].levels[a] for p in parents))
                weights = [(est.get((a, v), mean) + 1e-6) ** SHARPNESS for v in values]
                levels[a] = self.rng.choices(values, weights)[0]
            if not self._planned(levels) and levels not in children:
                children.append(levels)
        if not children:
            return None
        # of the children drawn, the ones trying most untried pairs (near failures and coverage at once)
        best = max(children[:PICK_OF], key=lambda c: len(pairs_of(c, self.axes) & self.uncovered))
        return self._add(Pick(best, parent=parents[0][1]))

    def neighbour(
        self, parent: Pick, parent_id: str, est: dict[tuple[str, Any], float] | None = None, mean: float = 0.0
    ) -> Pick:
        """A mutation of a (near-)failing variant: one axis changed, to the value whose conversations
        came nearest to failing compared with the parent's (ties: the change trying most untried
        pairs, then the RNG); or (one time in five, or when every neighbour was planned) the same
        variant with a new seed."""
        if self.rng.random() >= RESEED:
            options = [
                (a, v)
                for a in self.axes
                for v in self.axes[a]
                if v != parent.levels[a] and not self._planned({**parent.levels, a: v})
            ]

            def gain(option: tuple[str, Any]) -> tuple[float, int]:
                a, v = option
                e = est or {}
                rise = round(e.get((a, v), mean) - e.get((a, parent.levels[a]), mean), 6)
                rest = {k: x for k, x in parent.levels.items() if k != a}
                return rise, _gain(a, v, rest, self.uncovered)

            if options:
                best = max(map(gain, options))
                a, v = self.rng.choice([o for o in options if gain(o) == best])
                return self._add(Pick({**parent.levels, a: v}, parent=parent_id))
        repeat = 1 + max(p.repeat for p in self.picks if p.levels == parent.levels)
        return self._add(Pick(dict(parent.levels), repeat=repeat, parent=parent_id))

    # --- rounds -----------------------------------------------------------------------------------

    def first_round(self, size: int) -> list[Pick]:
        """The covering design's first `size` rows."""
        return [self.covering() for _ in range(size)]

    def next_round(self, size: int, scored: list[Scored]) -> list[Pick]:
        """`scored`: every earlier pick with its trial id and nearness. All slots but one in
        DESIGN_SHARE (rounded down) go to the near ones: recombinations of them (every RECOMBINE_EVERY-th slot), else a
        neighbour of the next nearest (so when only one came near, or no new recombination comes
        out); the rest to the design's next rows."""
        est, mean = value_estimates([(p.levels, n) for p, _, n in scored])
        ranked = sorted((s for s in scored if s[2] > 0), key=lambda s: -s[2])  # stable: plan order on ties
        out: list[Pick] = []
        exploit = size - size // DESIGN_SHARE if ranked else 0
        for j in range(size):
            pick = None
            if j < exploit:
                if j % RECOMBINE_EVERY == 0:
                    pick = self.recombine(ranked, est, mean)
                if pick is None:
                    parent, parent_id, _ = ranked[(j // RECOMBINE_EVERY) % len(ranked)]
                    pick = self.neighbour(parent, parent_id, est, mean)
            out.append(pick or self.covering())
        return out


def round_sizes(n: int, design: int | None = None) -> list[int]:
    """A case's budget n as rounds: a first round of the whole covering design when it takes at most
    half the budget (`design`: its size), else of max(3, n/4) rows; then rounds of max(2, n/5)."""
    first = design if design is not None and design <= n / 2 else max(3, math.ceil(n / 4))
    sizes = [min(n, first)]
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


def _scored(trials: list[Trial], picks: dict[str, Pick], records: list[RunRecord]) -> list[Scored]:
    """A case's earlier conversations with their nearness, plus RARE_BONUS for those that alone had
    some conversation feature; in plan order."""
    from usersim.graphs.explore import describe

    by_id = {r.id: r for r in records}
    odd = rare(describe(trials, records))
    return [
        (picks[t.id], t.id, nearness(by_id[t.id]) + (RARE_BONUS if t.id in odd else 0.0))
        for t in trials
        if t.id in by_id
    ]


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
    design = max(covering_size(p.axes, design_seed(p.base.id, cfg.seed)) for p in plans.values())
    for index, size in enumerate(round_sizes(n, design), start=1):
        fresh: list[Trial] = []
        for case in cases:
            plan = plans[case.id]
            mine = [t for t in trials if t.case.id == case.id]
            chosen = (
                plan.first_round(size) if index == 1 else plan.next_round(size, _scored(mine, picks, records))
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
                kind="covering" if index == 1 else "guided",
                conversations=len(fresh),
                mutations=sum(picks[t.id].parent is not None for t in fresh),
                mutated=sorted({p for t in fresh if (p := picks[t.id].parent)}),
                new_values=len(values - seen),
                failed=sum(f.status in ("failed", "error") for f in features),
            )
        )
        seen |= values
    return trials, records, rounds
