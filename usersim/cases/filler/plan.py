"""Round plan of an expanded long-context history: which seed rounds stay, in which round each
key turn lands, and which rounds are filler.

A history of `rounds` rounds (seed 000: 4k 8, 16k 20, 32k 28) is a list of slots 1..rounds; the
seed's final round (the closing request before the current message) takes the last one. Key
turns of one band form a block of consecutive rounds: a beginning block starts right after the
opener, a middle block starts in its round band at the round closest to its desired token offset,
an end block ends right before the final round (the last rounds before the current message). The
slots between blocks ("stretches") hold the seed's opener, filler rounds and, where they fit, more
seed rounds.

Seed rounds are short (~150 tokens) while a round averages target/rounds tokens (512 at 4k, ~1170
at 32k), so not every seed round fits: a stretch keeps as many as it can while its filler rounds
stay under MAX_ROUND_TOKENS, and the rest of the seed's representative history (seed 000 calls it
a representative fragment) is left out. Kept first: the two rounds after the opener (they set the
scene: where, what), then alternately the most recent round before the final request (what
"那帮我查一下" refers to) and the next scene-setting one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_ROUND_TOKENS = 1800  # a filler round answers at most ~13 units; more and it reads like a brochure


@dataclass
class Block:
    """Key turns (seed round indexes, in seed order) placed together in consecutive rounds."""

    units: list[int]
    position: str
    rounds: tuple[int, int]  # round band (1-based, inclusive) where the block starts (end: ends)
    tokens: tuple[int, int]  # token band where every key of the block must start
    desired: float = 0.0  # token offset aimed at for the first key (middle blocks)
    start: int = 0  # first round of the block


@dataclass
class Stretch:
    """The rounds between two blocks (or before the first / after the last)."""

    first: int  # first round number (1-based)
    last: int  # last round number (inclusive); first > last = empty
    end_tokens: float | None  # token offset this stretch should end at (None: no filler needed)
    seed: list[int] = field(default_factory=list)  # seed rounds placed here, in order
    fillers: int = 0

    @property
    def capacity(self) -> int:
        return max(0, self.last - self.first + 1)


@dataclass
class Plan:
    """The round plan: `slots[i]` is a seed round index or None (filler) for round i+1."""

    slots: list[int | None]
    blocks: list[Block]
    stretch_of: list[int]  # stretch index of every slot (-1 for block and final slots)
    stretches: list[Stretch]


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), max(lo, hi))


def _priority(candidates: list[int]) -> list[int]:
    """Candidates in keeping order: the two after the opener (they set the scene: where, what),
    then alternately the most recent one left and the next scene-setting one."""
    front, out = list(candidates), []
    out += front[:2]
    del front[:2]
    while front:
        out.append(front.pop())
        if front:
            out.append(front.pop(0))
    return out


def _place_blocks(sizes: list[int], blocks: list[Block], rounds: int, target: int, opener: list[int]) -> None:
    """Set each block's first round (and the token offset a middle block aims at)."""
    final = len(sizes) - 1
    avg, total = target / rounds, sum(sizes[:final]) or 1
    prev_end, prev_tokens = 0, float(sum(sizes[u] for u in opener))
    for j, b in enumerate(blocks):
        k = len(b.units)
        head = len(opener) if j == 0 else 0
        span = b.tokens[1] - b.tokens[0]
        steps = sum(sizes[u] for u in b.units[:-1])
        if b.position == "end":
            b.start = rounds - k
        elif b.tokens[0] == 0:  # a band that opens the conversation: right after the opener
            b.start = prev_end + 1 + head
            b.desired = prev_tokens
        else:  # where the seed has it, kept 15% inside the band (10% before its end for the block)
            natural = sum(sizes[: b.units[0]]) / total * (target - sizes[final])
            b.desired = _clamp(natural, b.tokens[0] + 0.15 * span, b.tokens[1] - 0.1 * span - steps)
            b.start = int(_clamp(round(b.desired / avg) + 1, *b.rounds))
        # a block that is not at the end leaves a round for the filler after it
        b.start = min(max(b.start, prev_end + 1 + head), rounds - k - (b.position != "end"))
        prev_end = b.start + k - 1
        prev_tokens = b.desired + steps + sizes[b.units[-1]]


def _stretches(
    sizes: list[int], blocks: list[Block], rounds: int, land: float, opener: list[int]
) -> list[Stretch]:
    """The stretches before each block and after the last one, with the token offset each ends at."""
    final = len(sizes) - 1
    out: list[Stretch] = []
    prev_end = 0
    for b in blocks:
        if b.position == "end":  # nothing but the block and the final round follows: land here
            aim: float | None = land - sum(sizes[u] for u in b.units) - sizes[final]
        else:
            aim = None if b.tokens[0] == 0 else b.desired
        out.append(Stretch(prev_end + 1, b.start - 1, aim))
        prev_end = b.start + len(b.units) - 1
    out.append(Stretch(prev_end + 1, rounds - 1, land - sizes[final]))
    out[0].seed += opener
    return out


def _room(sizes: list[int], blocks: list[Block], stretches: list[Stretch], seed_avg: float) -> list[int]:
    """Seed rounds each stretch can take beyond the opener: its slots minus the filler rounds it
    needs to reach its end offset with rounds under MAX_ROUND_TOKENS."""
    room, cur = [], 0.0
    for s, b in zip(stretches, [*blocks, None]):
        free = s.capacity - len(s.seed)
        seed = sum(sizes[u] for u in s.seed)
        need = 0.0 if s.end_tokens is None else s.end_tokens - cur - seed
        n = 0
        if need > 0 and free > 0:
            n = next(
                (n for n in range(1, free + 1) if need - (free - n) * seed_avg <= n * MAX_ROUND_TOKENS), free
            )
        room.append(free - n)
        cur = (s.end_tokens if s.end_tokens is not None else cur + seed) + (
            sum(sizes[u] for u in b.units) if b else 0
        )
    return room


def _keep_seed_rounds(
    candidates: list[int],
    blocks: list[Block],
    stretches: list[Stretch],
    room: list[int],
    final: int,
    keep_seed_order: bool,
) -> None:
    """Put the kept non-key seed rounds into stretches, by _priority.

    A non-key round never moves later past a key it preceded in the seed (a fact must not be
    followed by talk the seed had before it: "6 月份去" after "6 月 15 号出发" blurs the dates);
    with a requested position it may move earlier (the key moved towards the end)."""
    placed: dict[int, int] = {}  # seed round -> stretch
    for u in _priority(candidates):
        lo = max((j for v, j in placed.items() if v < u), default=0)
        hi = min((j for v, j in placed.items() if v > u), default=len(stretches) - 1)
        after_first = sum(1 for b in blocks if b.units[0] < u)
        after_all = sum(1 for b in blocks if b.units[-1] < u)
        if keep_seed_order:  # its own side of every key, or left out
            options = [after_all] if after_first == after_all and lo <= after_all <= hi else []
        else:  # scene-setting rounds as early as allowed, recent ones as late as allowed
            options = list(range(min(after_all, hi), lo - 1, -1))
            if u - 1 < final - 1 - u:
                options.reverse()
        j = next((j for j in options if room[j] > 0), None)
        if j is not None:
            placed[u] = j
            room[j] -= 1
            stretches[j].seed.append(u)
    for s in stretches:
        s.seed.sort()
        s.fillers = s.capacity - len(s.seed)


def plan_rounds(
    sizes: list[int], blocks: list[Block], rounds: int, target: int, land: float, keep_seed_order: bool
) -> Plan:
    """Place blocks, seed rounds and filler in `rounds` slots; `land` = total tokens aimed at.

    `keep_seed_order`: the seed's own placement (every kept seed round in seed order; a non-key
    round that does not fit on its side of the keys is left out)."""
    final = len(sizes) - 1
    keys = {u for b in blocks for u in b.units}
    opener = [0] if 0 not in keys and final > 0 else []
    blocks = sorted(blocks, key=lambda b: (b.rounds, b.units))
    _place_blocks(sizes, blocks, rounds, target, opener)
    stretches = _stretches(sizes, blocks, rounds, land, opener)
    candidates = [u for u in range(1, final) if u not in keys]
    seed_avg = sum(sizes[u] for u in candidates) / len(candidates) if candidates else 0.0
    room = _room(sizes, blocks, stretches, seed_avg)
    _keep_seed_rounds(candidates, blocks, stretches, room, final, keep_seed_order)

    slots: list[int | None] = [None] * rounds
    stretch_of = [-1] * rounds
    anchors = [-1] + [u for b in blocks for u in (b.units[0], b.units[-1])] + [final]
    for j, s in enumerate(stretches):
        # a kept seed round sits next to whichever neighbour it is closer to in the seed: the
        # scene-setting ones right after the key (or the opener), the recent ones right before
        # the next key (or the final request); the filler rounds go between them
        before, after = anchors[2 * j], anchors[2 * j + 1]
        head = [u for u in s.seed if u - before <= after - u]
        tail = [u for u in s.seed if u - before > after - u]
        for i, u in enumerate([*head, *([None] * s.fillers), *tail]):
            slots[s.first - 1 + i] = u
            stretch_of[s.first - 1 + i] = j
    for b in blocks:
        for i, u in enumerate(b.units):
            slots[b.start - 1 + i] = u
    slots[rounds - 1] = final
    return Plan(slots=slots, blocks=blocks, stretch_of=stretch_of, stretches=stretches)
