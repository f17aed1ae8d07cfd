"""Delta debugging (ddmin) over a Draft's dimensions, bounded by a budget of runs.

One dimension at a time, in the fixed order of `shrink_units.DIMENSIONS`, with the others held
where they are; passes repeat until nothing more can be dropped. Within a dimension: drop
everything if the failure survives that, else Zeller's ddmin (keep one chunk, else drop one chunk,
else split finer) down to a selection where dropping any single unit loses the failure. Every
selection is built and judged once (a cache keyed by the built case), so the same input always
takes the same path and the same number of runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from usersim.cases.schema import Case
from usersim.core.record import RunRecord
from usersim.graphs.shrink_units import DIMENSIONS, Draft, Kept
from usersim.personas.schema import Persona

MAX_PASSES = 3

# judges a built candidate: (still the same failure, the failing run's record), spending runs
Judge = Callable[[Case, Persona | None], Awaitable[tuple[bool, RunRecord | None]]]


class BudgetSpent(Exception):
    """The budget of runs is used up; the search stops with what it has."""


@dataclass
class Search:
    """One shrink search: the draft, the judge of a candidate, and what it has cost so far."""

    draft: Draft
    judge: Judge
    best: Kept = field(default_factory=dict)  # the last selection that held (the partial result)
    best_record: RunRecord | None = None  # its failing run
    _cache: dict[str, tuple[bool, RunRecord | None]] = field(default_factory=dict)

    async def holds(self, kept: Kept) -> bool:
        """Whether the selection still fails the same way (a selection that makes no case does not)."""
        return (await self.outcome(kept))[0]

    async def outcome(self, kept: Kept) -> tuple[bool, RunRecord | None]:
        built = self.draft.build(kept)
        if built is None:
            return False, None
        case, persona = built
        # everything a selection changes: the input, the persona, the environment's records
        state = json.dumps(case.environment.state, sort_keys=True, default=str) if case.environment else ""
        key = case.input.model_dump_json() + (persona.model_dump_json() if persona else "") + state
        if key not in self._cache:
            self._cache[key] = await self.judge(case, persona)
        return self._cache[key]

    async def run(self, kept: Kept) -> tuple[Kept, bool]:
        """The smallest selection found from `kept` (which holds), and whether the search finished
        (False: the budget ran out first; the selection is still one that holds)."""
        try:
            for _ in range(MAX_PASSES):
                before = kept
                for dim in DIMENSIONS:
                    kept = await self._dimension(dim, kept)
                if kept == before:
                    break
        except BudgetSpent:
            return self.best, False
        return kept, True

    async def attempt(self, kept: Kept) -> bool:
        """Judge a selection; one that holds becomes the best so far."""
        ok, record = await self.outcome(kept)
        if ok:
            self.best, self.best_record = kept, record
        return ok

    async def _dimension(self, dim: str, kept: Kept) -> Kept:
        units = [u for u in self.draft.relevant(dim, kept) if u in kept[dim]]
        others = kept[dim] - set(units)

        def keeping(subset: list[Any]) -> Kept:
            return {**kept, dim: frozenset(subset) | others}

        self.best = self.best or kept
        if not units:
            return kept
        if await self.attempt(keeping([])):
            return keeping([])
        unused = set(self.draft.unused(dim, self.best_record)) & set(units)
        if (
            unused
            and len(unused) < len(units)
            and await self.attempt(keeping([u for u in units if u not in unused]))
        ):
            units = [u for u in units if u not in unused]  # what left no trace goes in one step
        n = 2
        while len(units) >= 2:
            chunks = _split(units, n)
            found = None
            for chunk in chunks:  # the failure lives in one chunk
                if await self.attempt(keeping(chunk)):
                    found, n = chunk, 2
                    break
            if found is None:
                for chunk in chunks:  # or survives dropping one chunk
                    rest = [u for u in units if u not in chunk]
                    if await self.attempt(keeping(rest)):
                        found, n = rest, max(n - 1, 2)
                        break
            if found is None:
                if n >= len(units):
                    break
                n = min(len(units), 2 * n)
                continue
            units = found
        return keeping(units)


def _split(units: list[Any], n: int) -> list[list[Any]]:
    """`units` in n contiguous chunks of near-equal size (the first ones one larger)."""
    size, extra = divmod(len(units), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(units[start:end])
        start = end
    return [c for c in out if c]
