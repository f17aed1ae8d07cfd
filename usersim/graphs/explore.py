"""Exploratory failure discovery: persona variants x seeds on organic cases, branching from a
checkpoint at turn k into several continuations, failures clustered by judge reasons, and the
coverage map of the conversations' features.

Two strategies spend the budget of `n` conversations per case over the same axes (every finite trait
and the reveal policy, `personas.variation.variant_axes`): `random` (the first n rows of the
covering design, personas/covering.py, all at once) and `guided` (graphs.guided: a first round of
the same design, then rounds that recombine and mutate failing and near-failing conversations and
fill the pairs still untried).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from usersim.cases.schema import Case
from usersim.core.record import RunRecord, Variant
from usersim.graphs.coverage import Features, coverage_map, feature_space, features_of, merge_spaces
from usersim.graphs.replay import state_at_turn
from usersim.graphs.runner import RunConfig, run_meta, run_trials
from usersim.graphs.trials import Trial, derive_seed
from usersim.reports.coverage_map import CoverageMap, Round
from usersim.reports.html_explore import cluster_failures, signature  # noqa: F401  (re-exported)

Strategy = Literal["random", "guided"]


def persona_trials(cases: list[Case], n: int, seed: int) -> tuple[list[Trial], dict[str, dict[str, Any]]]:
    """n persona variants per organic case: the first n rows of the covering design over every
    variation axis; and each variant's levels by persona id (promote rebuilds a variant from them)."""
    from usersim.personas.covering import covering_rows, design_seed
    from usersim.personas.loader import resolve_persona
    from usersim.personas.variation import variant_axes, with_levels

    trials = []
    levels: dict[str, dict[str, Any]] = {}
    for case in cases:
        base = resolve_persona(case)
        base_id = base.id.split("~")[0]
        for k, row in enumerate(covering_rows(variant_axes(base), n, design_seed(base_id, seed)), start=1):
            persona = with_levels(base, row, f"{base_id}~v{k}")
            levels[persona.id] = row
            trials.append(variant_trial(case, persona, 0, seed))
    return trials, levels


def variant_trial(case: Case, persona: Any, repeat: int, seed: int) -> Trial:
    """The trial of one persona variant (repeat r: the same variant with another derived seed)."""
    variant = Variant(persona=persona.id, repeat=repeat)
    tid = f"{case.id}|{variant.key()}"
    return Trial(
        id=tid, case=case, variant=variant, seed=derive_seed(seed, tid), skills_on=None, persona=persona
    )


def branch_trials(
    base: list[Trial], records: list[RunRecord], at_turn: int, branches: int, seed: int
) -> list[Trial]:
    """For every base conversation that got past turn k: `branches` continuations from its turn-k
    checkpoint, each with its own simulator seed (a tree rooted at the shared prefix)."""
    by_id = {r.id: r for r in records}
    out = []
    for trial in base:
        record = by_id.get(trial.id)
        if record is None or record.error or record.turns <= at_turn:
            continue
        state = state_at_turn(record, at_turn)
        for b in range(branches):
            tid = f"{trial.id}|branch@{at_turn}.{b}"
            out.append(
                replace(
                    trial,
                    id=tid,
                    seed=derive_seed(seed, tid),
                    initial_state=state,
                    branch={"parent_id": trial.id, "at_turn": at_turn, "index": b},
                )
            )
    return out


def describe(trials: list[Trial], records: list[RunRecord]) -> list[Features]:
    """The features of every record, in the trials' (plan) order."""
    by_id = {r.id: r for r in records}
    return [features_of(by_id[t.id], t.persona, t.case) for t in trials if t.id in by_id]


def explore_coverage(
    cases: list[Case], trials: list[Trial], records: list[RunRecord], strategy: str, rounds: list[Round]
) -> tuple[CoverageMap, list[Features]]:
    """The coverage map of an exploration and the features it was built from."""
    from usersim.personas.loader import resolve_persona
    from usersim.personas.variation import variant_axes

    spaces = []
    for case in cases:
        base = resolve_persona(case)
        spaces.append(feature_space(case, base, set(variant_axes(base))))  # both strategies steer them all
    features = describe(trials, records)
    return coverage_map(features, merge_spaces(spaces), strategy, rounds), features


def _write_coverage(out_dir: Path, cov: CoverageMap, features: list[Features], meta: dict[str, Any]) -> None:
    """OUT/coverage.json, and the map in the stored meta so that the report (and `usersim report`)
    shows it; the report is written again with it."""
    from usersim.graphs.outputs import write_outputs
    from usersim.graphs.store import RunStore

    data = cov.model_dump(mode="json") | {"features": [f.model_dump(mode="json") for f in features]}
    (out_dir / "coverage.json").write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    meta["explore"]["coverage"] = cov.model_dump(mode="json")
    store = RunStore(out_dir / "results.sqlite")
    try:
        store.set_meta(meta)
        records = store.records()
    finally:
        store.close()
    write_outputs(out_dir, records, meta)


async def explore(
    cases: list[Case],
    cfg: RunConfig,
    out_dir: Path,
    *,
    n: int,
    branch_at: int | None = None,
    branches: int = 0,
    case_paths: list[str] | None = None,
    strategy: Strategy = "random",
) -> tuple[list[RunRecord], list[dict[str, Any]], CoverageMap]:
    """Run n persona variants per case by `strategy` (and branches), cluster the failures into
    OUT/clusters.json and map the coverage into OUT/coverage.json. `case_paths` (where the cases
    came from, when not the bundled library) go into the meta for promote commands."""
    organic = [c for c in cases if c.mode == "organic"]
    if not organic:
        raise ValueError("explore needs organic cases (mode: organic); none were selected")
    meta = run_meta(cfg, out_dir, [c.id for c in organic]) | {
        "explore": {
            "n": n,
            "strategy": strategy,
            "branch_at": branch_at,
            "branches": branches,
            "out_dir": str(out_dir),
            "cases": [str(Path(c).resolve()) for c in case_paths or []],  # promote finds the case here
        }
    }
    rounds: list[Round] = []
    if strategy == "guided":
        from usersim.graphs.guided import run_guided

        base, records, rounds = await run_guided(organic, cfg, out_dir, meta, n)
    else:
        base, meta["explore"]["variants"] = persona_trials(organic, n, cfg.seed)
        records = list(await run_trials(base, cfg, out_dir, meta))  # branching needs them together
    trials = list(base)
    if branch_at and branches:
        more = branch_trials(base, records, branch_at, branches, cfg.seed)
        trials += more
        records = list(await run_trials(trials, replace(cfg, resume=True), out_dir, meta))
    clusters = cluster_failures(records)
    (out_dir / "clusters.json").write_text(
        json.dumps(clusters, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    cov, features = explore_coverage(organic, trials, records, strategy, rounds)
    _write_coverage(out_dir, cov, features, meta)
    return records, clusters, cov
