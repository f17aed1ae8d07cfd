"""Exploratory failure discovery: persona variants x seeds on organic cases, branching from a
checkpoint at turn k into several continuations, and failures clustered by judge reasons."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from usersim.cases.schema import Case
from usersim.core.record import RunRecord, Variant
from usersim.graphs.replay import state_at_turn
from usersim.graphs.runner import RunConfig, run_meta, run_trials
from usersim.graphs.trials import Trial, derive_seed
from usersim.reports.html_explore import cluster_failures, signature  # noqa: F401  (re-exported)


def persona_trials(cases: list[Case], n: int, seed: int) -> list[Trial]:
    """n persona variants (pairwise over trait axes) per organic case."""
    from usersim.personas.loader import resolve_persona
    from usersim.personas.variation import vary

    trials = []
    for case in cases:
        for persona in vary(resolve_persona(case), n, seed):
            variant = Variant(persona=persona.id)
            tid = f"{case.id}|{variant.key()}"
            trials.append(
                Trial(
                    id=tid,
                    case=case,
                    variant=variant,
                    seed=derive_seed(seed, tid),
                    skills_on=None,
                    persona=persona,
                )
            )
    return trials


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


async def explore(
    cases: list[Case],
    cfg: RunConfig,
    out_dir: Path,
    *,
    n: int,
    branch_at: int | None = None,
    branches: int = 0,
    case_paths: list[str] | None = None,
) -> tuple[list[RunRecord], list[dict[str, Any]]]:
    """Run the persona variants (and branches), cluster the failures into OUT/clusters.json. `case_paths`
    (where the cases came from, when not the bundled library) go into the meta for promote commands."""
    organic = [c for c in cases if c.mode == "organic"]
    if not organic:
        raise ValueError("explore needs organic cases (mode: organic); none were selected")
    base = persona_trials(organic, n, cfg.seed)
    meta = run_meta(cfg, out_dir, [c.id for c in organic]) | {
        "explore": {
            "n": n,
            "branch_at": branch_at,
            "branches": branches,
            "out_dir": str(out_dir),
            "cases": [str(Path(c).resolve()) for c in case_paths or []],  # promote finds the case here
        }
    }
    records = list(await run_trials(base, cfg, out_dir, meta))  # branching needs them together
    if branch_at and branches:
        more = branch_trials(base, records, branch_at, branches, cfg.seed)
        records = list(await run_trials(base + more, replace(cfg, resume=True), out_dir, meta))
    clusters = cluster_failures(records)
    (out_dir / "clusters.json").write_text(
        json.dumps(clusters, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    return records, clusters
