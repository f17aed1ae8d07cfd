"""A covering design over persona variation axes: rows of axis levels that try every pair of levels of
every two axes in few rows (greedy, AETG-style: each row covers the most pairs not tried yet, and on
ties the values used least so far, so a short prefix already tries every value).

Both exploration strategies draw from it (graphs/explore.py, graphs/guided.py): `random` runs the
first n rows; `guided` runs a prefix as its first round and keeps drawing rows for the pairs its
mutations left untried. Rows that come from elsewhere (a mutation) are `add`ed, so the design
covers around them. Deterministic per (persona, seed).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from usersim.personas.variation import Pair, _gain, all_pairs, pairs_of

CANDIDATES = 20  # greedy rows built per draw; the one covering most untried pairs wins


def design_seed(persona_id: str, seed: int) -> str:
    """The RNG seed of a persona's design: both strategies of one --seed start from the same rows."""
    return f"usersim-design|{persona_id.split('~')[0]}|{seed}"


class Design:
    """The rows planned so far over `axes`, the pairs they left untried, and how often each value ran."""

    def __init__(self, axes: dict[str, list[Any]], rng: random.Random) -> None:
        self.axes = axes
        self.rng = rng
        self.uncovered: set[Pair] = all_pairs(axes)
        self.used: Counter[tuple[str, Any]] = Counter()
        self.rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any]) -> None:
        """Count a planned row (a design row or one planned elsewhere) as tried."""
        row = {a: row[a] for a in self.axes}
        self.uncovered -= pairs_of(row, self.axes)
        self.used.update(row.items())
        self.rows.append(row)

    def _value(self, axis: str, row: dict[str, Any]) -> Any:
        scores = {v: (_gain(axis, v, row, self.uncovered), -self.used[(axis, v)]) for v in self.axes[axis]}
        best = max(scores.values())
        return self.rng.choice([v for v in self.axes[axis] if scores[v] == best])

    def _seeds(self) -> list[Pair]:
        """The untried pairs of the least used values (a candidate row starts from one)."""
        if not self.uncovered:
            return []
        use = {p: self.used[p[0]] + self.used[p[1]] for p in self.uncovered}
        least = min(use.values())
        return sorted((p for p, u in use.items() if u == least), key=repr)

    def _candidate(self, seeds: list[Pair]) -> dict[str, Any]:
        row: dict[str, Any] = {}
        if seeds:
            (a, va), (b, vb) = self.rng.choice(seeds)
            row = {a: va, b: vb}
        rest = [name for name in self.axes if name not in row]
        self.rng.shuffle(rest)
        for name in rest:
            row[name] = self._value(name, row)
        return {a: row[a] for a in self.axes}

    def next_row(self) -> dict[str, Any]:
        """The best of CANDIDATES greedy rows: most untried pairs, then least used values, then a row
        not planned yet (once every pair was tried, rows keep the values balanced)."""

        def score(row: dict[str, Any]) -> tuple[int, int, bool]:
            fresh = len(pairs_of(row, self.axes) & self.uncovered)
            return fresh, -sum(self.used[item] for item in row.items()), row not in self.rows

        seeds = self._seeds()
        return max((self._candidate(seeds) for _ in range(CANDIDATES)), key=score)

    def draw(self) -> dict[str, Any]:
        """The next design row, counted as planned."""
        row = self.next_row()
        self.add(row)
        return row


def covering_rows(axes: dict[str, list[Any]], n: int, seed: str) -> list[dict[str, Any]]:
    """The first n rows of the design over `axes` seeded by `seed` (see design_seed)."""
    design = Design(axes, random.Random(seed))
    return [design.draw() for _ in range(n)]


def covering_size(axes: dict[str, list[Any]], seed: str, cap: int = 200) -> int:
    """How many rows the design needs until every pair of values was tried."""
    design = Design(axes, random.Random(seed))
    while design.uncovered and len(design.rows) < cap:
        design.draw()
    return len(design.rows)
