"""Long-context expansion of C5 cases to 4k / 16k / 32k tokens (seed 000).

The seed's representative history is cut into turns (a user message and the replies after it).
Key turns (those carrying `long_context.key_info`) go where seed 000's position table puts them;
every other seed turn keeps its order and its relative place in the conversation; the last seed
turn (the final context before the current message) stays last. Filler turns from the scenario's
filler library fill the gaps, and short pads land the history within -2%/+0% of the target.

Where the key information goes. The seed gives positions as conversation rounds per length
(4k: 8 rounds, 16k: 20, 32k: 28; e.g. 16k middle = rounds 10-12) and, for 32k, also as tokens
(beginning 0-2k, middle 14k-18k, end 30k-32k). A round is target/rounds tokens, so rounds a-b
become the token band [(a-1)/rounds, b/rounds] x target; at 32k that band is intersected with
the token column. A key turn is "in place" when the token offset where it starts lies in its band.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cases.filler import FillerTurn, load_filler
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
    if length == "32k" and tuple((a, b)) == seed_range:
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


class _FillerStream:
    """Filler turns in a seeded order; every turn is used once before any is reused."""

    def __init__(self, pairs: list[FillerTurn], pads: list[FillerTurn], rng: random.Random):
        self.rng, self.pairs, self.pads = rng, pairs, pads
        self.sizes = {t: count_tokens(_filler_messages(t)) for t in pairs + pads}
        self.order: list[FillerTurn] = []
        self.used: set[FillerTurn] = set()

    def peek(self) -> FillerTurn:
        if not self.order:
            fresh = list(self.pairs)
            self.rng.shuffle(fresh)
            self.order = fresh
        return self.order[0]

    def take(self, turn: FillerTurn) -> FillerTurn:
        if turn in self.order:
            self.order.remove(turn)
        self.used.add(turn)
        return turn

    def best_fit(self, room: int) -> FillerTurn | None:
        """The largest turn that fits in `room` tokens: unused pairs first, then reused, then pads."""
        for pool in ([t for t in self.order if t not in self.used], self.pairs, self.pads):
            fits = [t for t in pool if self.sizes[t] <= room]
            if fits:
                return max(fits, key=lambda t: (self.sizes[t], -pool.index(t)))
        return None


_SLACK = 150  # how far before its desired offset a turn may start (about one filler turn)


def _fill(stream: _FillerStream, layout: list, cur: int, lo: int, hi: int) -> int:
    """Append filler until `cur` reaches `lo` without passing `hi`; returns the new offset."""
    while cur < lo:
        nxt = stream.peek()
        t = nxt if cur + stream.sizes[nxt] <= hi else stream.best_fit(hi - cur)
        if t is None:
            break
        layout.append(stream.take(t))
        cur += stream.sizes[t]
    return cur


def _filler_messages(t: FillerTurn) -> list[Message]:
    return [Message(role="user", content=t.user), Message(role="assistant", content=t.assistant)]


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
        use_range = grad.turn_range if (grad and not position and not fact.position and grad.position == pos) else None
        bands[unit] = key_band(length, pos, use_range)
    return bands


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
    final = len(units) - 1
    key_units.pop(final, None)  # the final context never moves
    sizes = [count_tokens([history[i] for i in idxs]) for idxs in units]
    if sum(sizes) > lower:
        raise ExpansionError(
            f"{case.id}: the seed history already has {sum(sizes)} tokens, more than {length} allows ({lower}-{target})"
        )
    bands = _placements(case, length, position, key_units)

    # Desired start offset of every seed turn: non-key turns keep their relative place in the seed;
    # key turns are spread over the middle of their band (several keys in one band keep seed order).
    room = target - sizes[final]
    desired: list[tuple[float, int, int]] = []
    for u in range(final):
        if u not in key_units:
            desired.append((u / max(final, 1) * room, 0, u))
    by_band: dict[tuple[int, int], list[int]] = {}
    for u in sorted(key_units):
        by_band.setdefault(bands[u], []).append(u)
    for (lo, hi), us in by_band.items():
        for j, u in enumerate(us):
            desired.append((lo + (hi - lo) * (0.15 + 0.5 * j / len(us)), 1, u))
    desired.sort()

    words = [w for fact in spec.key_info for w in fact.keywords]
    pairs, pads = load_filler(spec.scenario, exclude=words)
    stream = _FillerStream(pairs, pads, _rng(case.id, length, position, seed))
    layout: list[int | FillerTurn] = []  # seed unit index or a filler turn
    cur = 0
    suffix = sum(sizes[u] for _, _, u in desired)
    for want, is_key, u in desired:
        # Window for this turn's start: near its desired offset (a key: inside its band), and never
        # so late that the turns still to come would overflow the target.
        latest = room - suffix
        hi = min(want, latest)
        lo = min(max(bands[u][0] if is_key else 0, want - _SLACK), hi)
        cur = _fill(stream, layout, cur, lo, hi)
        layout.append(u)
        cur += sizes[u]
        suffix -= sizes[u]
    # Tail: fill up to the band [lower, target] minus the final turn, then the final turn.
    cur = _fill(stream, layout, cur, lower - sizes[final], room)
    if cur < lower - sizes[final]:
        raise ExpansionError(f"{case.id}: no filler turn fits the last {room - cur} tokens of {length}")
    layout.append(final)

    messages: list[Message] = []
    filler_idx: list[int] = []
    new_index: dict[int, int] = {}
    for item in layout:
        if isinstance(item, FillerTurn):
            filler_idx += [len(messages), len(messages) + 1]
            messages += _filler_messages(item)
        else:
            for i in units[item]:
                new_index[i] = len(messages)
                messages.append(history[i].model_copy(deep=True))
    tokens = count_tokens(messages)
    offsets = [0]
    for m in messages:
        offsets.append(offsets[-1] + count_tokens([m]))

    key_turns, key_offsets, key_bands = [], [], []
    for u in sorted(key_units):
        for n in key_units[u]:
            idx = new_index[spec.key_info[n].turn]
            if idx in key_turns:
                continue
            start = offsets[new_index[units[u][0]]]
            lo, hi = bands[u]
            if not lo <= start <= hi:
                raise ExpansionError(
                    f"{case.id}: key_info[{n}] starts at token {start}, outside its {length} band {lo}-{hi}; "
                    "the seed turns before it are too long for this position"
                )
            key_turns.append(idx)
            key_offsets.append(start)
            key_bands.append((lo, hi))
    order = sorted(range(len(key_turns)), key=lambda k: key_turns[k])
    expanded = case.model_copy(update={"input": case.input.model_copy(update={"history": messages})}, deep=True)
    return Expansion(
        case_id=case.id, length=length, position=position, seed=seed, tokens=tokens, target_tokens=target,  # type: ignore[arg-type]
        messages=messages, key_turns=[key_turns[k] for k in order], key_offsets=[key_offsets[k] for k in order],
        key_bands=[key_bands[k] for k in order], filler_turns=filler_idx, case=expanded,
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
