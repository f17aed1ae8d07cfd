"""Expand cases into trials: long-context lengths x positions, skill groups A/B, repeats."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from usersim.cases.schema import LENGTH_TOKENS, Case
from usersim.core.record import Variant


@dataclass
class Trial:
    """One conversation to run."""

    id: str
    case: Case  # for long-context variants: the expanded case
    variant: Variant
    seed: int
    skills_on: bool | None  # None = the case's own skill config
    persona: Any = None  # a Persona variant (exploration); None = the case's persona
    initial_state: dict[str, Any] | None = None  # start from a checkpoint (branching), else from scratch
    branch: dict[str, Any] | None = None  # {parent_id, at_turn, index} for branched continuations


def derive_seed(run_seed: int, trial_id: str) -> int:
    """Per-trial seed: sha256 of the run seed and the trial id (stable across reruns and resume)."""
    return int(hashlib.sha256(f"{run_seed}:{trial_id}".encode()).hexdigest()[:12], 16)


def plan_trials(
    cases: list[Case],
    *,
    repeats: int = 1,
    lengths: list[str] | None = None,
    positions: list[str] | None = None,
    seed: int = 0,
) -> list[Trial]:
    """Every (case, variant, repeat) to run, in a stable order."""
    trials: list[Trial] = []
    for case in cases:
        for length, position in _context_variants(case, lengths, positions):
            for group in case.skills.groups or [None]:
                for r in range(repeats):
                    variant = Variant(length=length, position=position, group=group, repeat=r)
                    tid = f"{case.id}|{variant.key()}"
                    tseed = derive_seed(seed, tid)
                    run_case = case
                    if length is not None:
                        # the filler depends on the case and variant, not the repeat: repeats see the same history
                        run_case = expanded(
                            case, length, position, derive_seed(seed, f"{case.id}|{length}|{position}")
                        )
                    skills_on = None if group is None else group == "B"
                    trials.append(
                        Trial(id=tid, case=run_case, variant=variant, seed=tseed, skills_on=skills_on)
                    )
    return trials


_EXPANDED: dict[tuple[str, str, str | None, int], Case] = {}


def expanded(case: Case, length: str, position: str | None, seed: int) -> Case:
    """The case expanded to `length` (deterministic per seed), built once per process for the same
    case content: repeats, and runs of several agents over one suite, share the history."""
    from usersim.cases.expand import expand_case

    key = (case.model_dump_json(), length, position, seed)
    if key not in _EXPANDED:
        if len(_EXPANDED) >= 512:
            _EXPANDED.clear()
        _EXPANDED[key] = expand_case(case, length, position, seed=seed).case
    return _EXPANDED[key]


def _context_variants(
    case: Case, lengths: list[str] | None, positions: list[str] | None
) -> list[tuple[str | None, str | None]]:
    spec = case.long_context
    if spec is None:
        return [(None, None)]
    chosen = lengths or list(spec.lengths) or list(LENGTH_TOKENS)
    out = []
    for length in chosen:
        seed_pos = spec.lengths[length].position if length in spec.lengths else None
        for pos in positions or [seed_pos]:
            out.append((length, pos))
    return out
