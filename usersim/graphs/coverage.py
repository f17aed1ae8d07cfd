"""Features of explored conversations and the coverage of their feature space.

Each conversation is described by what its persona variant set (every trait, read generically from
the traits model, the reveal policy, the language) and by what happened (scripted events fired, tools
called, intercepts hit, user turns, stop reason, outcome). The possible values of each dimension come
from the schema (Literal and Enum fields, bool, bounded numbers in buckets), the case (its tools and
intercepts) and the persona (its events), so the map can say what was never tried.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import Case
from usersim.core.events import StopReason
from usersim.core.record import RunRecord
from usersim.core.verdict import Status
from usersim.personas.schema import Event, Persona
from usersim.personas.variation import TRAIT_PREFIX, all_pairs, bucket, field_domain, is_multi
from usersim.reports.coverage_map import CoverageMap, DimensionCoverage, PairCoverage, Round

NONE = "none"
DEFAULT_MAX_TURNS = 10  # as the conversation graph (graphs.nodes) when neither case nor persona sets one
TURN_BUCKETS = ((1, 1), (2, 3), (4, 6), (7, 10), (11, 15), (16, None))
PERSONA_FIELDS = ("reveal_policy", "language")  # persona fields beside the traits that shape a conversation
PAIRS_SHOWN = 40
_MISSED = re.compile(r"^event #(\d+) ")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Features(Strict):
    """One explored conversation as feature values (a dimension may hold several: tools called)."""

    record_id: str = Field(description="The record's id.")
    case_id: str = Field(description="Its case.")
    persona: str | None = Field(description="The persona variant it ran.")
    status: Status = Field(description="Its status.")
    values: dict[str, list[str]] = Field(description="Dimension -> the values this conversation had.")


@dataclass(frozen=True)
class Dimension:
    """A feature dimension: who sets it, whether exploration steers it, its possible values."""

    source: str  # persona | conversation
    possible: tuple[str, ...] | None  # None: open (only tried values are known)
    steerable: bool = False


def event_label(index: int, event: Event) -> str:
    """How a persona's scripted event is named in the map: `#0 say`, `#1 change_fact destination`."""
    return f"#{index} {event.kind}" + (f" {event.slot}" if event.slot else "")


def turn_bucket(turns: int) -> str:
    for lo, hi in TURN_BUCKETS:
        if hi is None or turns <= hi:
            return f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")
    return str(turns)  # unreachable: the last bucket is open


def persona_values(persona: Persona) -> dict[str, list[str]]:
    """Every trait (each field of the traits model, bucketed) and the PERSONA_FIELDS, as labels."""
    out: dict[str, list[str]] = {}
    for name, field in type(persona.traits).model_fields.items():
        value = getattr(persona.traits, name)
        labels = [bucket(field, v) for v in value] if is_multi(field) else [bucket(field, value)]
        out[TRAIT_PREFIX + name] = labels or [NONE]
    for name in PERSONA_FIELDS:
        out[name] = [bucket(Persona.model_fields[name], getattr(persona, name))]
    return out


def _intercept_labels(case: Case) -> list[str]:
    return [f"#{i} {ic.intercept_tool}" for i, ic in enumerate(case.tool_intercepts)]


def conversation_values(record: RunRecord, persona: Persona | None, case: Case) -> dict[str, list[str]]:
    """What happened: events fired, tools called, intercepts hit, turns, stop reason, outcome."""
    from usersim.sandbox.intercepts import find_intercept

    out: dict[str, list[str]] = {}
    if persona is not None and persona.events:
        missed = {
            int(m[1])
            for e in record.sim_events
            if e.kind == "event_missed" and (m := _MISSED.match(e.detail))
        }
        fired = [event_label(i, e) for i, e in enumerate(persona.events) if i not in missed]
        out["event"] = fired or [NONE]
    out["tool"] = sorted({e.name for e in record.tool_trace}) or [NONE]
    if not case.tool_intercepts:
        return out | _outcome(record)
    labels = _intercept_labels(case)
    hits = []
    for e in record.tool_trace:
        ic = (
            find_intercept(case.tool_intercepts, e.name, e.arguments, e.call_number)
            if e.intercepted
            else None
        )
        if ic is not None:
            hits.append(labels[case.tool_intercepts.index(ic)])
    out["intercept"] = sorted(set(hits)) or [NONE]
    return out | _outcome(record)


def _outcome(record: RunRecord) -> dict[str, list[str]]:
    return {
        "turns": [turn_bucket(record.turns)],
        "stop_reason": [record.stop_reason or NONE],
        "outcome": [record.status],
    }


def features_of(record: RunRecord, persona: Persona | None, case: Case) -> Features:
    """One record (and the persona variant it ran) as features."""
    values = persona_values(persona) if persona is not None else {}
    return Features(
        record_id=record.id,
        case_id=record.case_id,
        persona=record.variant.persona,
        status=record.status,
        values=values | conversation_values(record, persona, case),
    )


def _case_tools(case: Case) -> list[str]:
    from usersim.sandbox.base import Sandbox

    names = [s.get("function", {}).get("name") or s.get("name") for s in Sandbox(case).tool_schemas()]
    return [n for n in names if n]


def feature_space(case: Case, persona: Persona, steered: set[str]) -> dict[str, Dimension]:
    """The dimensions of one case's explorations and their possible values; `steered`: the axes the
    strategy varies."""
    dims: dict[str, Dimension] = {}
    for name, field in type(persona.traits).model_fields.items():
        values = field_domain(field)
        possible = tuple(bucket(field, v) for v in values) if values is not None else None
        dims[TRAIT_PREFIX + name] = Dimension("persona", possible, TRAIT_PREFIX + name in steered)
    for name in PERSONA_FIELDS:
        values = field_domain(Persona.model_fields[name]) or []
        dims[name] = Dimension("persona", tuple(map(str, values)), name in steered)
    if persona.events:
        dims["event"] = Dimension(
            "conversation", (*(event_label(i, e) for i, e in enumerate(persona.events)), NONE)
        )
    dims["tool"] = Dimension("conversation", (*_case_tools(case), NONE))
    if case.tool_intercepts:
        dims["intercept"] = Dimension("conversation", (*_intercept_labels(case), NONE))
    max_turns = case.max_turns or persona.max_turns or DEFAULT_MAX_TURNS
    dims["turns"] = Dimension(
        "conversation", tuple(turn_bucket(lo) for lo, _ in TURN_BUCKETS if lo <= max_turns)
    )
    # replay_complete ends a static case; user_stopped only a person in the seat (`usersim play`)
    organic_stops = [s for s in get_args(StopReason) if s not in ("replay_complete", "user_stopped")]
    dims["stop_reason"] = Dimension("conversation", tuple(organic_stops))
    dims["outcome"] = Dimension("conversation", tuple(get_args(Status)))
    return dims


def merge_spaces(spaces: list[dict[str, Dimension]]) -> dict[str, Dimension]:
    """Several cases' spaces as one: each dimension's possible values are the union, in order."""
    out: dict[str, Dimension] = {}
    for space in spaces:
        for name, dim in space.items():
            old = out.get(name)
            if old is None:
                out[name] = dim
                continue
            possible = (
                None
                if old.possible is None or dim.possible is None
                else tuple(dict.fromkeys((*old.possible, *dim.possible)))
            )
            out[name] = Dimension(old.source, possible, old.steerable or dim.steerable)
    return out


def pair_keys(values: dict[str, list[str]], dims: list[str]) -> set[Any]:
    """The (dimension, value) pairs of two steerable dimensions one conversation had."""
    rows = {d: values[d][0] for d in dims if values.get(d)}
    return all_pairs({d: [v] for d, v in rows.items()})


def coverage_map(
    features: list[Features],
    space: dict[str, Dimension],
    strategy: str,
    rounds: list[Round] | None = None,
) -> CoverageMap:
    """What the conversations (in plan order) tried of the space, and what they never tried."""
    dimensions = []
    covered = total = 0
    for name, dim in space.items():
        tried = Counter(v for f in features for v in f.values.get(name, []))
        possible = list(dim.possible) if dim.possible is not None else None
        never = [v for v in possible if v not in tried] if possible is not None else []
        if possible is not None:
            covered += len(possible) - len(never)
            total += len(possible)
        dimensions.append(
            DimensionCoverage(
                name=name,
                source=dim.source,  # type: ignore[arg-type]
                steerable=dim.steerable,
                possible=possible,
                tried=dict(tried),
                never_tried=never,
            )
        )
    steer = [n for n, d in space.items() if d.steerable and d.possible]
    pairs = None
    if len(steer) > 1:
        every = all_pairs({n: list(space[n].possible or ()) for n in steer})
        seen = set().union(*(pair_keys(f.values, steer) for f in features)) if features else set()
        missing = sorted(every - seen)
        pairs = PairCoverage(
            dimensions=steer,
            covered=len(every & seen),
            total=len(every),
            never_tried=[[f"{a}={va}", f"{b}={vb}"] for (a, va), (b, vb) in missing[:PAIRS_SHOWN]],
        )
    bad = [i for i, f in enumerate(features, start=1) if f.status in ("failed", "error")]
    return CoverageMap(
        strategy=strategy,  # type: ignore[arg-type]
        conversations=len(features),
        values_covered=covered,
        values_total=total,
        dimensions=dimensions,
        pairs=pairs,
        failures=len(bad),
        first_failure_run=bad[0] if bad else None,
        rounds=rounds or [],
    )
