"""Long-context expansion of C5 cases to 4k / 16k / 32k tokens (seed 000).

Seed 000 sizes the lengths in rounds (a round = one user message and the agent's reply): 4k is
about 5-8 rounds, 16k 15-20, 32k 25-30, and its gradient table places key information by round
(4k of 8 rounds: beginning 1-2, middle 4-5, end 7-8; 16k of 20: 1-3, 10-12, 18-20; 32k of 28:
1-3, 14-16, 27-28) and, at 32k, by token (beginning 0-2k, middle 14k-18k, end 30k-32k). So an
expanded history has exactly SEED_ROUNDS user turns (the case's kept turns included), each key
turn lands in its round band (an end block ends right before the seed's final round, i.e. in the
last rounds before the current message) and starts inside its token band (rounds a-b of R are the
tokens [(a-1)/R, b/R] x target, intersected with the 32k token column), and the total lands
within -2%/+0% of the target. Filler units stay ~100-150 tokens (the granularity that controls the
length); a filler round is one user question with a longer answer made of several units on the
same sub-topic (cases.filler.rounds). Which seed rounds stay and where: cases.filler.plan.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.filler import load_filler
from usersim.cases.filler.plan import Block, Plan, plan_rounds
from usersim.cases.filler.rounds import FillerRound, RoundStream
from usersim.cases.schema import LENGTH_TOKENS, Case
from usersim.cases.tokens import count_tokens
from usersim.core.messages import Message
from usersim.core.registry import UnknownNameError, did_you_mean

POSITIONS = ("beginning", "middle", "end")
TOLERANCE = 0.02  # the history may be up to 2% short of the target, never over it
SEED_ROUNDS = {"4k": 8, "16k": 20, "32k": 28}
SEED_TURN_BANDS: dict[str, dict[str, tuple[int, int]]] = {
    "4k": {"beginning": (1, 2), "middle": (4, 5), "end": (7, 8)},
    "16k": {"beginning": (1, 3), "middle": (10, 12), "end": (18, 20)},
    "32k": {"beginning": (1, 3), "middle": (14, 16), "end": (27, 28)},
}
SEED_TOKEN_BANDS_32K = {"beginning": (0, 2048), "middle": (14336, 18432), "end": (30720, 32768)}
_SLACK = 150  # how far from its aim the round before a key may end (about one filler unit)
_TOL = 60  # how far from its share of the stretch an ordinary filler round may be


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
    rounds: int = Field(description="User turns in the expanded history (seed 000: 8 / 20 / 28).")
    messages: list[Message] = Field(description="The expanded history.")
    key_turns: list[int] = Field(
        description="Indexes into messages of the messages carrying key information."
    )
    key_rounds: list[int] = Field(description="Round (1-based user turn) of each key turn (same order).")
    key_round_bands: list[tuple[int, int]] = Field(
        description="Round band each key turn had to be in (same order)."
    )
    key_offsets: list[int] = Field(
        description="Token offset where each key turn's round starts (same order)."
    )
    key_bands: list[tuple[int, int]] = Field(
        description="Token band each key turn had to start in (same order)."
    )
    filler_turns: list[int] = Field(description="Indexes into messages of filler messages.")
    case: Case = Field(description="A copy of the case whose input.history is the expanded history.")


def round_band(length: str, position: str, turn_range: tuple[int, int] | None = None) -> tuple[int, int]:
    """Round band [a, b] (1-based, of SEED_ROUNDS[length]) from seed 000's gradient table."""
    return turn_range or SEED_TURN_BANDS[length][position]


def key_band(length: str, position: str, turn_range: tuple[int, int] | None = None) -> tuple[int, int]:
    """Token band [lo, hi] where a key turn must start: its round band in tokens (a round is
    target/rounds tokens), at 32k intersected with the seed's token column."""
    target, rounds = LENGTH_TOKENS[length], SEED_ROUNDS[length]
    seed_range = SEED_TURN_BANDS[length][position]
    a, b = round_band(length, position, turn_range)
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
    """Message indexes grouped into rounds: a user message and everything up to the next one."""
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


def _blocks(case: Case, length: str, position: str | None, key_units: dict[int, list[int]]) -> list[Block]:
    """Key units grouped by band: the requested position, else each fact's own / the length's."""
    spec = case.long_context
    assert spec is not None
    grad = spec.lengths.get(length)  # type: ignore[call-overload]
    by_band: dict[tuple[str, tuple[int, int]], list[int]] = {}
    for unit, facts in sorted(key_units.items()):
        fact = spec.key_info[facts[0]]
        pos = position or fact.position or (grad.position if grad else None)
        if pos is None:
            raise ExpansionError(
                f"{case.id}: long_context.key_info[{facts[0]}] has no position for {length}: set "
                f"key_info[{facts[0]}].position or long_context.lengths.{length}.position"
            )
        use_range = grad.turn_range if (grad and grad.position == pos and not fact.position) else None
        by_band.setdefault((pos, round_band(length, pos, use_range)), []).append(unit)
    return [
        Block(units=us, position=pos, rounds=band, tokens=key_band(length, pos, band))
        for (pos, band), us in by_band.items()
    ]


def _build(
    plan: Plan, sizes: list[int], stream: RoundStream, target: int, lower: int
) -> list[int | FillerRound]:
    """Seed rounds (unit indexes) and filler rounds in plan order, landing within [lower, target]."""
    last_filler = max((i for i, u in enumerate(plan.slots) if u is None), default=-1)
    block_at = {b.start - 1: b for b in plan.blocks}
    out: list[int | FillerRound] = []
    cur = 0
    for i, u in enumerate(plan.slots):
        if u is not None:
            out.append(u)
            cur += sizes[u]
            continue
        j = plan.stretch_of[i]
        s = plan.stretches[j]
        later = range(i + 1, s.last)  # the stretch's slots after this one (0-based i+1 .. s.last-1)
        rest = sum(sizes[plan.slots[k]] for k in later if plan.slots[k] is not None)  # type: ignore[index]
        m = 1 + sum(1 for k in later if plan.slots[k] is None)
        if i == last_filler:
            after = sum(sizes[v] for v in plan.slots[i + 1 :] if v is not None)
            lo, hi = lower - cur - after, target - cur - after
        else:
            aim = ((s.end_tokens if s.end_tokens is not None else cur) - cur - rest) / m
            lo, hi = aim - _TOL, aim + _TOL
            nxt = block_at.get(s.last)  # the block right after this stretch
            if m == 1 and nxt is not None and nxt.position != "end":
                steps = sum(sizes[v] for v in nxt.units[:-1])
                lo = max(aim - _SLACK, nxt.tokens[0] - cur - rest)
                hi = min(aim + _SLACK, nxt.tokens[1] - steps - cur - rest)
        rnd = stream.build(math.ceil(lo), math.floor(hi))
        out.append(rnd)
        cur += rnd.tokens()
    return out


def _key_round_band(b: Block, i: int, rounds: int) -> tuple[int, int]:
    """Round band of the i-th key of a block: the block starts in its band (its later keys follow
    it); an end block ends right before the final round, however many keys it holds."""
    k = len(b.units)
    if b.position == "end":
        return min(b.rounds[0], rounds - k) + i, rounds - k + i
    return b.rounds[0] + i, b.rounds[1] + i


def expand_case(case: Case, length: str, position: str | None = None, seed: int = 0) -> Expansion:
    """Expand `case`'s history to `length` tokens in the seed's number of rounds, with key
    information at `position` (None = the seed's own placement). Deterministic for a given seed."""
    _check_choice("length", length, list(LENGTH_TOKENS))
    if position is not None:
        _check_choice("position", position, POSITIONS)
    spec = case.long_context
    if spec is None:
        raise ExpansionError(
            f"{case.id}: no long_context section; only long-context (C5) cases can be expanded"
        )
    history = case.input.history
    target, rounds = LENGTH_TOKENS[length], SEED_ROUNDS[length]
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
    must = sorted({0, len(units) - 1, *key_units})
    if sum(sizes[u] for u in must) > lower or len(must) > rounds:
        raise ExpansionError(
            f"{case.id}: the seed turns that must stay (opener, key information, final context) already have "
            f"{sum(sizes[u] for u in must)} tokens in {len(must)} rounds, more than {length} allows "
            f"({lower}-{target} tokens, {rounds} rounds)"
        )
    blocks = _blocks(case, length, position, key_units)
    plan = plan_rounds(sizes, blocks, rounds, target, (lower + target) / 2, keep_seed_order=position is None)
    words = [w for fact in spec.key_info for w in fact.keywords]
    stream = RoundStream(load_filler(spec.scenario, exclude=words), _rng(case.id, length, position, seed))
    layout = _build(plan, sizes, stream, target, lower)

    messages: list[Message] = []
    filler_idx: list[int] = []
    new_index: dict[int, int] = {}
    for item in layout:
        if isinstance(item, FillerRound):
            filler_idx += [len(messages), len(messages) + 1]
            messages += item.messages()
        else:
            for i in units[item]:
                new_index[i] = len(messages)
                messages.append(history[i].model_copy(deep=True))
    offsets = [0]
    for m in messages:
        offsets.append(offsets[-1] + count_tokens([m]))
    total = offsets[-1]
    if not lower <= total <= target:
        raise ExpansionError(
            f"{case.id}: the {length} history has {total} tokens, outside {lower}-{target}; "
            "the filler pool has no unit small enough to land it"
        )

    keys: dict[int, tuple[int, int, tuple[int, int], tuple[int, int]]] = {}  # msg -> (offset, round, bands)
    for b in plan.blocks:
        for i, u in enumerate(b.units):
            facts = key_units[u]
            start, (lo, hi) = offsets[new_index[units[u][0]]], b.tokens
            rnd, rband = b.start + i, _key_round_band(b, i, rounds)
            if not (lo <= start <= hi and rband[0] <= rnd <= rband[1]):
                raise ExpansionError(
                    f"{case.id}: key_info[{facts[0]}] lands in round {rnd} at token {start}, outside its {length} "
                    f"{b.position} band (rounds {rband[0]}-{rband[1]}, tokens {lo}-{hi}); the seed turns around "
                    "it are too long for this position"
                )
            for n in facts:
                keys[new_index[spec.key_info[n].turn]] = (start, rnd, rband, (lo, hi))
    expanded = case.model_copy(
        update={"input": case.input.model_copy(update={"history": messages})}, deep=True
    )
    order = sorted(keys)
    return Expansion(
        case_id=case.id,
        length=length,
        position=position,
        seed=seed,  # type: ignore[arg-type]
        tokens=total,
        target_tokens=target,
        rounds=sum(1 for m in messages if m.role == "user"),
        messages=messages,
        key_turns=order,
        key_rounds=[keys[i][1] for i in order],
        key_round_bands=[keys[i][2] for i in order],
        key_offsets=[keys[i][0] for i in order],
        key_bands=[keys[i][3] for i in order],
        filler_turns=filler_idx,
        case=expanded,
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
    return {
        "short_accuracy": short,
        "medium_accuracy": medium,
        "long_accuracy": long,
        "degradation_rate": rate,
    }
