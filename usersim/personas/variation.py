"""Persona variants over trait axes with pairwise coverage (exploration runs many of them).

`vary(persona, n, seed)` returns n variants whose trait levels cover every pair of levels of
every two axes as soon as n allows (greedy AETG-style construction), deterministic per seed.
"""

from __future__ import annotations

import itertools
import random
from enum import Enum
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

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


# --- generic axes and mutation (coverage-guided exploration) -------------------------------------

TRAIT_PREFIX = "trait."
# Persona fields (beside the traits) a variant may set: each changes how facts come out, never what the
# user wants or knows. `language` is not one: a persona's facts and opening are written in its language.
VARIANT_FIELDS = ("reveal_policy",)
NUMERIC_BUCKETS = 3


def _bounds(field: FieldInfo) -> tuple[float, float] | None:
    lo = hi = None
    for m in field.metadata:
        lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
        hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
    return (float(lo), float(hi)) if lo is not None and hi is not None and hi > lo else None


def _strip_optional(annotation: Any) -> Any:
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        return args[0]
    return annotation


def field_domain(field: FieldInfo) -> list[Any] | None:
    """The values a field can take, read from its type: a Literal's or an Enum's values, bool, a
    bounded number's bucket representatives (see `bucket`), the items of a list of Literals; None for an
    open type (free text, an unbounded number)."""
    ann = _strip_optional(field.annotation)
    if get_origin(ann) is Literal:
        return list(get_args(ann))
    if ann is bool:
        return [False, True]
    if isinstance(ann, type) and issubclass(ann, Enum):
        return [m.value for m in ann]
    if get_origin(ann) in (list, set, frozenset, tuple) and get_args(ann):
        inner = _strip_optional(get_args(ann)[0])
        return list(get_args(inner)) if get_origin(inner) is Literal else None
    if ann in (int, float) and (b := _bounds(field)) is not None:
        width = (b[1] - b[0]) / NUMERIC_BUCKETS
        mids = [b[0] + width * (i + 0.5) for i in range(NUMERIC_BUCKETS)]
        return [round(m) for m in mids] if ann is int else mids
    return None


def is_multi(field: FieldInfo) -> bool:
    """A list-typed field: a conversation can hold several of its values at once."""
    return get_origin(_strip_optional(field.annotation)) in (list, set, frozenset, tuple)


def bucket(field: FieldInfo, value: Any) -> str:
    """A field value as a coverage label: a bounded number falls into one of NUMERIC_BUCKETS equal
    ranges ('0-3'), a bool is true/false, None is none, anything else its text."""
    ann = _strip_optional(field.annotation)
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "none"}[value]
    if ann in (int, float) and isinstance(value, (int, float)) and (b := _bounds(field)) is not None:
        width = (b[1] - b[0]) / NUMERIC_BUCKETS
        i = min(NUMERIC_BUCKETS - 1, max(0, int((value - b[0]) // width)))
        return f"{b[0] + i * width:g}-{b[0] + (i + 1) * width:g}"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def variant_axes(persona: Persona) -> dict[str, list[Any]]:
    """Every dimension a persona variant may set, with its values: each trait with a finite domain
    (read from the traits model, so a trait added to the schema is an axis with no code here), keyed
    `trait.<name>`, and the VARIANT_FIELDS. List-valued traits are left out (a level is one value)."""
    axes: dict[str, list[Any]] = {}
    for name, field in type(persona.traits).model_fields.items():
        values = field_domain(field)
        if values and not is_multi(field):
            axes[TRAIT_PREFIX + name] = values
    for name in VARIANT_FIELDS:
        values = field_domain(Persona.model_fields[name])
        if values:
            axes[name] = values
    return axes


def levels_of(persona: Persona, axes: dict[str, list[Any]]) -> dict[str, Any]:
    """The persona's current value on each axis."""
    return {
        a: getattr(persona.traits, a[len(TRAIT_PREFIX) :])
        if a.startswith(TRAIT_PREFIX)
        else getattr(persona, a)
        for a in axes
    }


def with_levels(persona: Persona, levels: dict[str, Any], variant_id: str) -> Persona:
    """`persona` with the axis levels set (`trait.<name>` keys set traits, others persona fields),
    as variant `variant_id`; `variation` records the levels, so the variant can be rebuilt from them."""
    traits = {a[len(TRAIT_PREFIX) :]: v for a, v in levels.items() if a.startswith(TRAIT_PREFIX)}
    fields = {a: v for a, v in levels.items() if not a.startswith(TRAIT_PREFIX)}
    unknown = [a for a in fields if a not in VARIANT_FIELDS]
    unknown += [t for t in traits if t not in type(persona.traits).model_fields]
    if unknown:
        raise ValueError(
            f"not a variation axis: {', '.join(unknown)} (axes: {', '.join(variant_axes(persona))})"
        )
    data = persona.model_dump()
    data["traits"] = {**data["traits"], **traits}
    data.update(fields)
    if "patience" in traits:  # as in `vary`: the varied trait, not a fixed patience_turns, decides patience
        data["stop_rules"] = {**data["stop_rules"], "patience_turns": None}
    base = persona.id.split("~")[0]
    k = variant_id.rsplit("~v", 1)[-1]
    data.update(id=f"{base}~v{k}", name=f"{persona.name.split(' (v')[0]} (v{k})", variation=dict(levels))
    return Persona.model_validate(data)
