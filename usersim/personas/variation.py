"""Persona variants over trait axes with pairwise coverage (exploration runs many of them).

`vary(persona, n, seed)` returns n variants whose trait levels cover every pair of levels of
every two axes as soon as n allows (greedy AETG-style construction), deterministic per seed.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from usersim.core.registry import did_you_mean
from usersim.personas.schema import Persona

LEVELS = ["low", "medium", "high"]
DEFAULT_AXES: dict[str, list[Any]] = {
    "patience": LEVELS,
    "verbosity": LEVELS,
    "cooperativeness": LEVELS,
    "clarity": LEVELS,
    "typo_prone": [False, True],
}
# Axes that are not traits but persona fields.
_FIELD_AXES: dict[str, list[Any]] = {"reveal_policy": ["when_asked", "gradually", "all_at_once"]}
_TRAIT_AXES: dict[str, list[Any]] = {**{k: LEVELS for k in ("decisiveness", "tech_savvy")}, **DEFAULT_AXES}

Pair = tuple[tuple[str, Any], tuple[str, Any]]


def _axes(axes: dict[str, list[Any]] | list[str] | None) -> dict[str, list[Any]]:
    known = {**_TRAIT_AXES, **_FIELD_AXES}
    if axes is None:
        return dict(DEFAULT_AXES)
    spec = {name: known.get(name, []) for name in axes} if isinstance(axes, list) else dict(axes)
    for name, levels in spec.items():
        if name not in known:
            raise ValueError(
                f"Unknown variation axis '{name}'.{did_you_mean(name, set(known))} Available: {', '.join(sorted(known))}"
            )
        bad = [lv for lv in levels if lv not in known[name]]
        if bad or not levels:
            raise ValueError(
                f"axis '{name}' levels must be a non-empty subset of {known[name]}, got {levels}"
            )
    return spec


def all_pairs(axes: dict[str, list[Any]]) -> set[Pair]:
    """Every pair of levels of two different axes."""
    names = list(axes)
    return {
        ((a, va), (b, vb)) for a, b in itertools.combinations(names, 2) for va in axes[a] for vb in axes[b]
    }


def pairs_of(row: dict[str, Any], axes: dict[str, list[Any]]) -> set[Pair]:
    names = list(axes)
    return {((a, row[a]), (b, row[b])) for a, b in itertools.combinations(names, 2)}


def pairwise_coverage(rows: list[dict[str, Any]], axes: dict[str, list[Any]] | None = None) -> float:
    """Share of all level pairs covered by the rows (1.0 = full pairwise coverage)."""
    spec = _axes(axes)
    total = all_pairs(spec)
    covered = set().union(*(pairs_of(r, spec) for r in rows)) if rows else set()
    return len(covered & total) / len(total) if total else 1.0


def _gain(name: str, level: Any, row: dict[str, Any], uncovered: set[Pair]) -> int:
    """How many uncovered pairs setting axis `name` to `level` would cover, given `row`."""
    return sum(
        1
        for other, v in row.items()
        if ((name, level), (other, v)) in uncovered or ((other, v), (name, level)) in uncovered
    )


def _candidate(axes: dict[str, list[Any]], uncovered: set[Pair], rng: random.Random) -> dict[str, Any]:
    (a, va), (b, vb) = rng.choice(sorted(uncovered, key=repr))  # seed one uncovered pair
    row: dict[str, Any] = {a: va, b: vb}
    rest = [name for name in axes if name not in row]
    rng.shuffle(rest)
    for name in rest:  # then each remaining axis takes the level covering most new pairs
        gains = {lv: _gain(name, lv, row, uncovered) for lv in axes[name]}
        best = max(gains.values())
        row[name] = rng.choice([lv for lv in axes[name] if gains[lv] == best])
    return row


def pairwise_rows(axes: dict[str, list[Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """n rows of axis levels, greedily covering all pairs first."""
    uncovered = all_pairs(axes)
    rows: list[dict[str, Any]] = []
    for _ in range(n):
        if uncovered:
            candidates = [_candidate(axes, uncovered, rng) for _ in range(20)]
            row = max(candidates, key=lambda r: len(pairs_of(r, axes) & uncovered))
        else:  # everything covered: further variants are random, new combinations preferred
            row = {name: rng.choice(levels) for name, levels in axes.items()}
            for _try in range(20):
                if row not in rows:
                    break
                row = {name: rng.choice(levels) for name, levels in axes.items()}
        uncovered -= pairs_of(row, axes)
        rows.append({name: row[name] for name in axes})
    return rows


def vary(
    persona: Persona, n: int, seed: int, axes: dict[str, list[Any]] | list[str] | None = None
) -> list[Persona]:
    """n variants of `persona` (ids `<id>~v1`..`<id>~vN`), pairwise-covering the axes' levels."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    spec = _axes(axes)
    base_id = persona.id.split("~")[0]
    rng = random.Random(f"usersim-vary|{base_id}|{seed}")
    variants = []
    for k, row in enumerate(pairwise_rows(spec, n, rng), start=1):
        traits = persona.traits.model_copy(update={a: v for a, v in row.items() if a in _TRAIT_AXES})
        update: dict[str, Any] = {
            "id": f"{base_id}~v{k}",
            "name": f"{persona.name} (v{k})",
            "traits": traits,
            "variation": dict(row),
            **{a: v for a, v in row.items() if a in _FIELD_AXES},
        }
        if "patience" in row:  # the varied trait must decide patience, not a fixed patience_turns
            update["stop_rules"] = persona.stop_rules.model_copy(update={"patience_turns": None})
        variants.append(
            Persona.model_validate(
                {
                    **persona.model_dump(),
                    **{
                        k2: (v2.model_dump() if hasattr(v2, "model_dump") else v2)
                        for k2, v2 in update.items()
                    },
                }
            )
        )
    return variants
