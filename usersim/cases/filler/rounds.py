"""Filler rounds: one natural user question and a long answer made of several filler units.

Seed 000 wants 4k / 16k / 32k histories of about 8 / 20 / 28 rounds (a round is one user message
and the agent's reply) and filler units of about 100-150 tokens. Both hold when a filler round is
a user question (the first unit's) with a longer answer: the first unit's answer, an intro from
common.yaml, then a few related questions answered in turn, as a helpful agent anticipating them
would; a closing line may end the reply so that the round lands exactly on its token budget.

Related means "on the same sub-topic": units are ranked by how much their sub-topic words
(cases/filler/topics.yaml; the question counts three times the answer) agree with the round's
first unit, ties broken by shared rarer character bigrams, so a question about transport cards
draws the subway and bus units, not the souvenir ones. Units come in a seeded order and every unit is used once before any
is reused (a new pass starts when the pool is used up); only the exact landing may reuse one early.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.filler import FillerLibrary, FillerTurn, filler_messages, read_topics
from usersim.cases.tokens import MESSAGE_OVERHEAD, count_tokens, text_tokens
from usersim.core.messages import Message

_SEP = "\n\n"  # between the parts of a filler reply
_CLOSING_REACH = 40  # about the most a closing line adds
_WORD = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]+")


class FillerRound(BaseModel):
    """One filler round: the units it answers, in order, and its connective text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    units: tuple[FillerTurn, ...] = Field(
        description="The units; the first one's question is the user message."
    )
    intro: str = Field(
        default="", description="Lead-in before the related questions (used when there are several units)."
    )
    closing: str = Field(default="", description="Closing line of the reply, if any.")

    def _reply_parts(self) -> list[tuple[str, str]]:
        """The reply's parts, joined by _SEP, as (number, text): a related unit is numbered."""
        head, rest = self.units[0], self.units[1:]
        parts = [("", head.assistant)]
        if rest:
            parts.append(("", self.intro))
            parts += [(str(i), f".「{u.user}」{u.assistant}") for i, u in enumerate(rest, 1)]
        if self.closing:
            parts.append(("", self.closing))
        return parts

    def messages(self) -> list[Message]:
        """The round as chat messages (user, assistant)."""
        return [
            Message(role="user", content=self.units[0].user),
            Message(role="assistant", content=_SEP.join(n + t for n, t in self._reply_parts())),
        ]

    def tokens(self) -> int:
        """count_tokens(self.messages()), from remembered counts of the reply's parts: a round
        grows a part at a time, and encoding the whole reply at every step dominated expansion.

        Exact, not an estimate: tiktoken encodes each piece its split pattern (cl100k) cuts out of
        the text on its own, and no piece crosses from the newline separator into a part that
        starts with a non-space character (a whitespace run ending in a newline ends a piece;
        punctuation may take the newlines after it, never what follows them), nor from a part's
        number (a piece of up to 3 digits) into the '.' after it. So the reply counts as the sum of
        its numbers and its `text + separator` (the last part without one), each remembered per
        process. A part that starts with whitespace (or is empty) makes it count the reply whole."""
        parts = self._reply_parts()
        user = text_tokens(self.units[0].user) + MESSAGE_OVERHEAD
        if any(not (n + t) or (n + t)[0].isspace() for n, t in parts[1:]) or any(
            len(n) > 3 for n, _ in parts
        ):
            return user + count_tokens(self.messages()[1])
        last = len(parts) - 1
        reply = sum(
            text_tokens(n) + text_tokens(t if k == last else t + _SEP) for k, (n, t) in enumerate(parts)
        )
        return user + reply + MESSAGE_OVERHEAD


def _topic_vector(unit: FillerTurn) -> dict[str, float]:
    """Sub-topic weights of a unit: words of each topic in the question x3, in the answer x1."""
    return dict(_topic_weights(unit.user, unit.assistant))


@functools.lru_cache(maxsize=16384)
def _topic_weights(user: str, assistant: str) -> tuple[tuple[str, float], ...]:
    """_topic_vector by the unit's texts, remembered: every expansion of a scenario scores the same
    units (read_topics() is read once per process)."""
    q, a = user.lower(), assistant.lower()
    vec = {t: 3.0 * sum(w in q for w in words) + sum(w in a for w in words) for t, words in _lowered_topics()}
    return tuple((t, v) for t, v in vec.items() if v)


@functools.cache
def _lowered_topics() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((t, tuple(w.lower() for w in words)) for t, words in read_topics().items())


def _grams(text: str) -> set[str]:
    """Character bigrams of the Chinese runs and whole Latin/number words: the topic signal."""
    return set(_grams_of(text))


@functools.lru_cache(maxsize=16384)
def _grams_of(text: str) -> frozenset[str]:
    out: set[str] = set()
    for w in _WORD.findall(text):
        if w.isascii():
            out.add(w.lower())
        else:
            out.update(w[i : i + 2] for i in range(len(w) - 1))
    return frozenset(out)


@dataclass
class _UnitIndex:
    """What RoundStream knows of a set of units apart from its seeded order: sizes, sub-topic
    vectors, bigram weights and the similarities computed so far. It depends on the units' texts
    only, so every expansion over the same filler (a scenario minus the same key words) shares it."""

    sizes: list[int]
    topics: list[dict[str, float]]
    norm: list[float]
    grams: list[set[str]]
    idf: dict[str, float]
    weight: list[float]
    informative: list[frozenset[str]]  # each unit's bigrams of idf > 0: all that similarity sums
    sim: dict[tuple[int, int], float] = field(default_factory=dict)
    rows: dict[int, list[float]] = field(default_factory=dict)  # related(): -similarity(head, u) per u


@functools.lru_cache(maxsize=64)
def _unit_index(texts: tuple[tuple[str, str], ...]) -> _UnitIndex:
    units = [FillerTurn(user=q, assistant=a, source="") for q, a in texts]
    sizes = [count_tokens(filler_messages(u)) for u in units]
    topics = [_topic_vector(u) for u in units]
    norm = [math.sqrt(sum(v * v for v in t.values())) or 1.0 for t in topics]
    grams = [_grams(u.text) for u in units]
    df = Counter(g for gs in grams for g in gs)
    n = len(units)
    # bigrams of one unit match nothing and those of most units (的是, 可以) say nothing
    idf = {g: math.log(n / c) if 2 <= c <= 0.3 * n else 0.0 for g, c in df.items()}
    weight = [math.fsum(idf[g] for g in gs) or 1.0 for gs in grams]  # fsum: the same in any set order
    informative = [frozenset(g for g in gs if idf[g]) for gs in grams]
    return _UnitIndex(sizes, topics, norm, grams, idf, weight, informative)


class RoundStream:
    """Builds filler rounds from a scenario's units in a seeded, sub-topic-coherent way."""

    def __init__(self, library: FillerLibrary, rng: random.Random):
        self.lib, self.rng = library, rng
        self.units = library.units  # worked on by index: pydantic equality is slow in hot loops
        ix = _unit_index(tuple((u.user, u.assistant) for u in self.units))
        self.sizes, self.topics, self.norm = ix.sizes, ix.topics, ix.norm
        self.grams, self.idf, self.weight = ix.grams, ix.idf, ix.weight
        self._informative = ix.informative  # an idf of 0 adds exactly nothing to an fsum
        self.cycle: list[int] = []  # the unused units of the current pass, in seeded order
        self._sim, self._rows = ix.sim, ix.rows  # shared by every stream over the same units

    def _refill(self) -> None:
        if not self.cycle:
            fresh = list(range(len(self.units)))
            self.rng.shuffle(fresh)
            self.cycle = fresh

    def _take(self, u: int) -> None:
        if u in self.cycle:
            self.cycle.remove(u)
        self._refill()

    def similarity(self, a: int, b: int) -> float:
        """Cosine of the two units' sub-topic vectors plus a quarter of their bigram overlap.

        Symmetric to the last bit (topic vectors share one key order; fsum does not depend on the
        order a set of bigrams is summed in), so it does not matter which stream computed it first."""
        key = (a, b) if a < b else (b, a)
        if key not in self._sim:
            ta, tb = self.topics[a], self.topics[b]
            topic = sum(v * tb.get(t, 0.0) for t, v in ta.items()) / (self.norm[a] * self.norm[b])
            shared = math.fsum(self.idf[g] for g in self._informative[a] & self._informative[b])
            self._sim[key] = topic + 0.25 * shared / math.sqrt(self.weight[a] * self.weight[b])
        return self._sim[key]

    def _row(self, head: int) -> list[float]:
        """-similarity(head, u) for every u (the ranking key of related()), computed once per head."""
        row = self._rows.get(head)
        if row is None:  # similarity(head, u) inlined: a new unit set computes ~500 per head
            sim, topics, norm, grams, idf, weight = (
                self._sim,
                self.topics,
                self.norm,
                self._informative,
                self.idf,
                self.weight,
            )
            ta, na, ga, wa = topics[head], norm[head], grams[head], weight[head]
            row = []
            for u in range(len(self.units)):
                key = (head, u) if head < u else (u, head)
                v = sim.get(key)
                if v is None:
                    tb = topics[u]
                    topic = sum(x * tb.get(t, 0.0) for t, x in ta.items()) / (na * norm[u])
                    shared = math.fsum(idf[g] for g in ga & grams[u])
                    v = sim[key] = topic + 0.25 * shared / math.sqrt(wa * weight[u])
                row.append(-v)
            self._rows[head] = row
        return row

    def related(self, head: int, exclude: set[int]) -> list[int]:
        """Candidates for `head`'s round, most related first: unused units of this pass, then used ones."""
        rank = self._row(head).__getitem__
        fresh = set(self.cycle)
        unused = sorted((u for u in self.cycle if u not in exclude), key=rank)
        used = sorted((u for u in range(len(self.units)) if u not in fresh and u not in exclude), key=rank)
        return unused + used

    def _most_related(self, head: int, exclude: set[int], room: int) -> int | None:
        """The first unit of related(head, exclude) with at most `room` tokens, without sorting:
        min() keeps the first of equal keys, as the stable sort does."""
        rank, sizes = self._row(head).__getitem__, self.sizes
        fresh = set(self.cycle)
        unused = [u for u in self.cycle if u not in exclude and sizes[u] <= room]
        if unused:
            return min(unused, key=rank)
        used = [u for u in range(len(self.units)) if u not in fresh and u not in exclude and sizes[u] <= room]
        return min(used, key=rank) if used else None

    def _lands(self, u: int, lo: int, hi: int) -> bool:
        one = FillerRound(units=(self.units[u],))
        return lo <= self.sizes[u] <= hi or any(
            lo <= one.model_copy(update={"closing": c}).tokens() <= hi for c in self.lib.closings
        )

    def build(self, lo: int, hi: int) -> FillerRound:
        """A round of about [lo, hi] tokens (as close as the units allow; over hi only when even
        the smallest unit is)."""
        self._refill()
        fits = [u for u in self.cycle if self.sizes[u] <= hi]
        # a budget of about one unit: the first unit that lands alone or with a closing line
        alone = (u for u in fits if self.sizes[u] >= lo - _CLOSING_REACH and self._lands(u, lo, hi))
        head = next(alone, None)
        if head is None:
            head = fits[0] if fits else None
        if head is None:
            head = min(range(len(self.units)), key=lambda u: self.sizes[u])
        self._take(head)
        chosen = [head]
        rnd = FillerRound(units=(self.units[head],), intro=self.rng.choice(self.lib.intros))
        size, rejected = rnd.tokens(), set()
        while size < lo:
            room = hi - size
            skip = rejected | set(chosen)
            cand = self._most_related(head, skip, room)
            if cand is None:
                break
            trial = rnd.model_copy(update={"units": (*rnd.units, self.units[cand])})
            n = trial.tokens()
            if n > hi:  # joined text tokenises a little differently; try the next one
                rejected.add(cand)
                continue
            self._take(cand)
            chosen.append(cand)
            rnd, size = trial, n
        if size < lo:
            closings = list(self.lib.closings)
            self.rng.shuffle(closings)
            for c in closings:
                trial = rnd.model_copy(update={"closing": c})
                if lo <= trial.tokens() <= hi:
                    return trial
        return rnd
