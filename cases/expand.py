"""Long-context expansion of C5 cases to 4k / 16k / 32k tokens (seed 000).

The seed's representative history is cut into turns (a user message and the replies after it).
Key turns (those carrying `long_context.key_info`) go where seed 000's position table puts them;
the other seed turns keep their order, and keep their side of each key turn unless the band makes
that impossible (without a requested position the whole seed order is kept); the last seed turn
(the final context before the current message) stays last. Filler turns from the scenario's
filler library fill the gaps, and short pads land the history within -2%/+0% of the target.

Where the key information goes. The seed gives positions as conversation rounds per length
(4k: 8 rounds, 16k: 20, 32k: 28; e.g. 16k middle = rounds 10-12) and, for 32k, also as tokens
(beginning 0-2k, middle 14k-18k, end 30k-32k). A round is target/rounds tokens, so rounds a-b
become the token band [(a-1)/rounds, b/rounds] x target; at 32k that band is intersected with
the token column. A key turn is "in place" when the token offset where it starts lies in its band.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cases.filler import FillerStream, FillerTurn, fill, filler_messages, load_filler
from cases.messages import Message
from cases.schema import LENGTH_TOKENS, Case
from cases.tokens import count_tokens
from usersim.registry import UnknownNameError, did_you_mean

POSITIONS = ("beginning", "middle", "end")
TOLERANCE = 0.02  # the history may be up to 2% short of the target, never over it
SEED_ROUNDS = {"4k": 8, "16k": 20, "32k": 28}
SEED_TURN_BANDS: dict[str, dict[str, tuple[int, int]]] = {
    "4k": {"beginning": (1, 2), "middle": (4, 5), "end": (7, 8)},
    "16k": {"beginning": (1, 3), "middle": (10, 12), "end": (18, 20)},
    "32k": {"beginning": (1, 3), "middle": (14, 16), "end": (27, 28)},
}
SEED_TOKEN_BANDS_32K = {"beginning": (0, 2048), "middle": (14336, 18432), "end": (30720, 32768)}


class ExpansionError(ValueError):
    """The case cannot be expanded as asked (too long, bad key_info, no room in the band)."""


class Expansion(BaseModel):
    """An expanded history and where its key information ended up."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="The case expanded.")
    length: Literal["4k", "16k", "32k"] = Field(description="Target length.")
    position: Literal["beginning", "middle", "end"] | None = Field(
        description="Requested key-information position; null = the seed's own placement."
    )
    seed: int = Field(description="Seed of the filler choice.")
    tokens: int = Field(description="Tokens of the expanded history (cases.tokens.count_tokens).")
    target_tokens: int = Field(description="4096 / 16384 / 32768.")
    messages: list[Message] = Field(description="The expanded history.")
    key_turns: list[int] = Field(description="Indexes into messages of the messages carrying key information.")
    key_offsets: list[int] = Field(description="Token offset where each key turn starts (same order).")
    key_bands: list[tuple[int, int]] = Field(description="Token band each key turn had to start in (same order).")
    filler_turns: list[int] = Field(description="Indexes into messages of filler messages.")
    case: Case = Field(description="A copy of the case whose input.history is the expanded history.")


def key_band(length: str, position: str, turn_range: tuple[int, int] | None = None) -> tuple[int, int]:
    """Token band [lo, hi] where a key turn must start, from seed 000's position table."""
    target, rounds = LENGTH_TOKENS[length], SEED_ROUNDS[length]
    seed_range = SEED_TURN_BANDS[length][position]
    a, b = turn_range or seed_range
    lo, hi = round((a - 1) * target / rounds), round(b * target / rounds)
    if length == "32k" and (a, b) == seed_range:
        t_lo, t_hi = SEED_TOKEN_BANDS_32K[position]
        lo, hi = max(lo, t_lo), min(hi, t_hi)
    return lo, hi


def _check_choice(kind: str, value: str, options: tuple[str, ...] | list[str]) -> None:
    if value not in options:
        raise UnknownNameError(
            f"Unknown {kind} '{value}'.{did_you_mean(value, set(options))} Available: {', '.join(options)}"
        )


def _units(history: list[Message]) -> list[list[int]]:
    """Message indexes grouped into turns: a user message and everything up to the next one."""
    units: list[list[int]] = []
    for i, m in enumerate(history):
        if m.role == "user" or not units:
            units.append([i])
        else:
            units[-1].append(i)
    return units


def _rng(case_id: str, length: str, position: str | None, seed: int) -> random.Random:
    digest = hashlib.sha256(f"{case_id}|{length}|{position}|{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _placements(case: Case, length: str, position: str | None, key_units: dict[int, list[int]]) -> dict[int, tuple[int, int]]:
    """Band for each key unit: the requested position, else each fact's own / the length's position."""
    spec = case.long_context
    assert spec is not None
    grad = spec.lengths.get(length)  # type: ignore[call-overload]
    bands: dict[int, tuple[int, int]] = {}
    for unit, facts in key_units.items():
        fact = spec.key_info[facts[0]]
        pos = position or fact.position or (grad.position if grad else None)
        if pos is None:
            raise ExpansionError(
                f"{case.id}: long_context.key_info[{facts[0]}] has no position for {length}: set "
                f"key_info[{facts[0]}].position or long_context.lengths.{length}.position"
            )
        use_range = grad.turn_range if (grad and grad.position == pos and not fact.position) else None
        bands[unit] = key_band(length, pos, use_range)
    return bands


_SLACK = 150  # how far before its desired offset a turn may start (about one filler turn)


def _anchors(sizes: list[int], final: int, room: int, bands: dict[int, tuple[int, int]]) -> list[tuple[int, float]]:
    """(unit, desired start) of the key turns, in layout order.

    The keys of one band form a block in seed order, with the seed turns between them when the
    whole block fits the band. The block aims where its first key would fall if the filler were
    spread evenly over the seed history, clamped so that it starts at least 15% into the band (or at
    the very start when the band opens the conversation) and
    its last key starts at least 10% before the band's end (slack for filler granularity)."""
    total = sum(sizes[:final]) or 1
    by_band: dict[tuple[int, int], list[int]] = {}
    for u in sorted(bands):
        by_band.setdefault(bands[u], []).append(u)
    out: list[tuple[int, float]] = []
    for (lo, hi), us in sorted(by_band.items()):
        span = hi - lo
        between = [sum(sizes[v] for v in range(a + 1, b) if v not in bands) for a, b in itertools.pairwise(us)]
        steps = [sizes[a] + gap for a, gap in zip(us, between)]  # first key start -> next key start
        if lo + 0.05 * span + sum(steps) > hi - 0.1 * span:  # seed turns between keys do not fit
            steps = [sizes[a] for a in us[:-1]]
        natural = sum(sizes[:us[0]]) / total * room
        floor = lo + 0.15 * span if lo else 0.0  # a band that opens the conversation needs no slack before
        first = min(max(natural, floor), max(float(lo), hi - 0.1 * span - sum(steps)))
        out.append((us[0], first))
        for u, step in zip(us[1:], steps):
            out.append((u, out[-1][1] + step))
    return out


def _plan(sizes: list[int], final: int, room: int, bands: dict[int, tuple[int, int]]) -> list[tuple[float, int, int]]:
    """(desired start offset, is_key, unit) for every seed turn but the final one, in layout order.

    The seed's order is kept wherever the bands allow. Non-key turns first stay on their side of
    every key turn; where the turns between two anchors (or before the first, after the last) do
    not fit the gap, the overflow moves past the next key (forward pass) and, at the end, back
    before the previous ones (backward pass); non-key turns never change order among themselves.
    Within a gap the turns are spread evenly, the first right after the anchor, so the
    conversation still opens with the seed's first turn."""
    anchors = _anchors(sizes, final, room, bands)
    keys = [u for u, _ in anchors]
    # gaps[j] = (start, stop) of the room before anchor j; the last gap runs to the end
    starts = [0.0] + [want + sizes[u] for u, want in anchors]
    stops = [want for _, want in anchors] + [float(room)]
    segments: list[list[int]] = [[] for _ in starts]
    for u in range(final):
        if u not in bands:
            segments[sum(1 for k in keys if k < u)].append(u)

    def over(j: int) -> bool:
        return sum(sizes[u] for u in segments[j]) > max(0.0, stops[j] - starts[j])

    for j in range(len(segments) - 1):
        while over(j) and segments[j]:
            segments[j + 1].insert(0, segments[j].pop())
    for j in range(len(segments) - 1, 0, -1):
        while over(j) and segments[j]:
            segments[j - 1].append(segments[j].pop(0))
    plan: list[tuple[float, int, int]] = []
    for j, seg in enumerate(segments):
        free = max(0.0, stops[j] - starts[j] - sum(sizes[u] for u in seg))
        prefix = 0
        for i, u in enumerate(seg):
            plan.append((starts[j] + prefix + free * i / len(seg), 0, u))
            prefix += sizes[u]
        if j < len(anchors):
            plan.append((anchors[j][1], 1, anchors[j][0]))
    return plan


def _layout(case_id: str, length: str, sizes: list[int], bands: dict[int, tuple[int, int]],
            stream: FillerStream, target: int, lower: int) -> list[int | FillerTurn]:
    """Seed turns (unit indexes) and filler turns in order, landing within [lower, target] tokens."""
    final = len(sizes) - 1
    room = target - sizes[final]
    desired = _plan(sizes, final, room, bands)
    layout: list[int | FillerTurn] = []
    cur = 0
    suffix = sum(sizes[u] for _, _, u in desired)
    for want, is_key, u in desired:
        # Start near the desired offset (a key: inside its band), but never so late that the
        # turns still to come would overflow the target.
        hi = min(want, room - suffix)
        lo = min(max(bands[u][0] if is_key else 0, want - _SLACK), hi)
        cur = fill(stream, layout, cur, lo, hi)
        layout.append(u)
        cur += sizes[u]
        suffix -= sizes[u]
    cur = fill(stream, layout, cur, lower - sizes[final], room)  # land the total, then the final turn
    if cur < lower - sizes[final]:
        raise ExpansionError(f"{case_id}: no filler turn fits the last {room - cur} tokens of {length}")
    return layout + [final]


def expand_case(case: Case, length: str, position: str | None = None, seed: int = 0) -> Expansion:
    """Expand `case`'s history to `length` tokens with key information at `position`
    (None = the seed's own placement). Deterministic for a given seed."""
    _check_choice("length", length, list(LENGTH_TOKENS))
    if position is not None:
        _check_choice("position", position, POSITIONS)
    spec = case.long_context
    if spec is None:
        raise ExpansionError(f"{case.id}: no long_context section; only long-context (C5) cases can be expanded")
    history = case.input.history
    target = LENGTH_TOKENS[length]
    lower = math.ceil(target * (1 - TOLERANCE))
    units = _units(history)
    unit_of = {i: u for u, idxs in enumerate(units) for i in idxs}
    key_units: dict[int, list[int]] = {}
    for n, fact in enumerate(spec.key_info):
        if not 0 <= fact.turn < len(history):
            raise ExpansionError(
                f"{case.id}: long_context.key_info[{n}].turn: {fact.turn} is not an index into input.history "
                f"(0..{len(history) - 1})"
            )
        key_units.setdefault(unit_of[fact.turn], []).append(n)
    key_units.pop(len(units) - 1, None)  # the final context never moves
    sizes = [count_tokens([history[i] for i in idxs]) for idxs in units]
    if sum(sizes) > lower:
        raise ExpansionError(
            f"{case.id}: the seed history already has {sum(sizes)} tokens, more than {length} allows ({lower}-{target})"
        )
    bands = _placements(case, length, position, key_units)
    pairs, pads = load_filler(spec.scenario, exclude=[w for fact in spec.key_info for w in fact.keywords])
    stream = FillerStream(pairs, pads, _rng(case.id, length, position, seed))
    layout = _layout(case.id, length, sizes, bands, stream, target, lower)

    messages: list[Message] = []
    filler_idx: list[int] = []
    new_index: dict[int, int] = {}
    for item in layout:
        if isinstance(item, FillerTurn):
            filler_idx += [len(messages), len(messages) + 1]
            messages += filler_messages(item)
        else:
            for i in units[item]:
                new_index[i] = len(messages)
                messages.append(history[i].model_copy(deep=True))
    offsets = [0]
    for m in messages:
        offsets.append(offsets[-1] + count_tokens([m]))

    keys: dict[int, tuple[int, tuple[int, int]]] = {}  # message index -> (start offset, band)
    for u, facts in key_units.items():
        start, (lo, hi) = offsets[new_index[units[u][0]]], bands[u]
        if not lo <= start <= hi:
            raise ExpansionError(
                f"{case.id}: key_info[{facts[0]}] starts at token {start}, outside its {length} band {lo}-{hi}; "
                "the seed turns before it are too long for this position"
            )
        for n in facts:
            keys[new_index[spec.key_info[n].turn]] = (start, (lo, hi))
    expanded = case.model_copy(update={"input": case.input.model_copy(update={"history": messages})}, deep=True)
    return Expansion(
        case_id=case.id, length=length, position=position, seed=seed,  # type: ignore[arg-type]
        tokens=offsets[-1], target_tokens=target, messages=messages, key_turns=sorted(keys),
        key_offsets=[keys[i][0] for i in sorted(keys)], key_bands=[keys[i][1] for i in sorted(keys)],
        filler_turns=filler_idx, case=expanded,
    )


def degradation_rate(scores_by_length: dict[str, float | list[float] | None]) -> dict[str, float | None]:
    """Seed 000's gradient metrics: short/medium/long accuracy (4k/16k/32k; a list is averaged) and
    degradation_rate = (short - long) / short (lower is better; None when short is 0 or missing)."""

    def acc(v: float | list[float] | None) -> float | None:
        if v is None:
            return None
        if isinstance(v, (int, float)):
            return float(v)
        vals = [float(x) for x in v if x is not None]
        return sum(vals) / len(vals) if vals else None

    short, medium, long = (acc(scores_by_length.get(k)) for k in ("4k", "16k", "32k"))
    rate = None if not short or long is None else round((short - long) / short, 4)
    return {"short_accuracy": short, "medium_accuracy": medium, "long_accuracy": long, "degradation_rate": rate}
