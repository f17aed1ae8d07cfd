"""The filler library: natural small-talk turns per scenario, used to pad long-context cases.

Each `cases/filler/<scenario>.yaml` holds user/assistant `pairs` (about 100-150 tokens each, seed
000's rule), optional short `pads` (to land a history exactly on its token band) and `extends`
(shared pools such as travel_general). `common.yaml`'s pads are available to every scenario.
Filler must carry none of a case's key information: `load_filler` drops every turn that mentions
one of the given keywords.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cases.messages import Message
from cases.tokens import count_tokens
from usersim.registry import UnknownNameError, did_you_mean

FILLER_DIR = Path(__file__).parent


class FillerFile(BaseModel):
    """One filler file on disk."""

    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(description="Scenario key; must equal the file name without .yaml.")
    description: str = Field(default="", description="What the small talk is about and what it avoids.")
    extends: list[str] = Field(default_factory=list, description="Other scenarios whose turns are also used.")
    pairs: list[tuple[str, str]] = Field(default_factory=list, description="[user, assistant] filler turns.")
    pads: list[tuple[str, str]] = Field(default_factory=list, description="Short [user, assistant] turns for exact landing.")


class FillerTurn(BaseModel):
    """One filler turn as used by the expander."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str = Field(description="The user's line.")
    assistant: str = Field(description="The assistant's answer.")
    source: str = Field(description="Scenario file the turn comes from.")

    @property
    def text(self) -> str:
        return self.user + "\n" + self.assistant


def scenarios() -> list[str]:
    """All scenario keys in the library."""
    return sorted(p.stem for p in FILLER_DIR.glob("*.yaml"))


@functools.cache
def read_filler_file(scenario: str) -> FillerFile:
    """Load and validate one scenario file; errors name the file and suggest close scenario names."""
    path = FILLER_DIR / f"{scenario}.yaml"
    if not path.is_file():
        raise UnknownNameError(
            f"Unknown filler scenario '{scenario}'.{did_you_mean(scenario, scenarios())} "
            f"Available: {', '.join(scenarios())}. Add cases/filler/{scenario}.yaml to create it."
        )
    try:
        data = FillerFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except ValidationError as exc:
        raise ValueError(f"{path}: invalid filler file: {exc}") from exc
    if data.scenario != scenario:
        raise ValueError(f"{path}: scenario: '{data.scenario}' must equal the file name '{scenario}'")
    return data


def _collect(scenario: str, seen: set[str]) -> tuple[list[FillerTurn], list[FillerTurn]]:
    if scenario in seen:  # an extends cycle adds nothing new
        return [], []
    seen.add(scenario)
    f = read_filler_file(scenario)
    pairs = [FillerTurn(user=u, assistant=a, source=scenario) for u, a in f.pairs]
    pads = [FillerTurn(user=u, assistant=a, source=scenario) for u, a in f.pads]
    for parent in f.extends:
        p_pairs, p_pads = _collect(parent, seen)
        pairs += p_pairs
        pads += p_pads
    return pairs, pads


def mentions(text: str, keywords: list[str]) -> list[str]:
    """The keywords found in `text` (case-insensitive)."""
    low = text.lower()
    return [k for k in keywords if k and k.lower() in low]


def load_filler(scenario: str, exclude: list[str] | None = None) -> tuple[list[FillerTurn], list[FillerTurn]]:
    """(pairs, pads) of a scenario with its extends and the common pads, minus every turn that
    mentions one of `exclude` (the case's key-information keywords)."""
    pairs, pads = _collect(scenario, set())
    if scenario != "common":
        pads += _collect("common", {scenario})[1]
    words = list(exclude or [])
    keep_pairs = [t for t in pairs if not mentions(t.text, words)]
    keep_pads = [t for t in pads if not mentions(t.text, words)]
    if not keep_pairs:
        raise ValueError(
            f"Filler scenario '{scenario}' has no turns free of the key words {words}; "
            f"add turns that avoid them to cases/filler/{scenario}.yaml"
        )
    return keep_pairs, keep_pads


class FillerStream:
    """Filler turns in a seeded order; every turn is used once before any is reused."""

    def __init__(self, pairs: list[FillerTurn], pads: list[FillerTurn], rng: random.Random):
        self.rng, self.pairs, self.pads = rng, pairs, pads
        self.sizes = {t: count_tokens(filler_messages(t)) for t in pairs + pads}
        self.order: list[FillerTurn] = []
        self.used: set[FillerTurn] = set()

    def peek(self) -> FillerTurn:
        """The next turn in the seeded order (a fresh shuffle of the pool once it is used up)."""
        if not self.order:
            fresh = list(self.pairs)
            self.rng.shuffle(fresh)
            self.order = fresh
        return self.order[0]

    def take(self, turn: FillerTurn) -> FillerTurn:
        """Mark `turn` used (it leaves the current order) and return it."""
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


def fill(stream: FillerStream, layout: list, cur: int, lo: int, hi: int) -> int:
    """Append filler until `cur` reaches `lo` without passing `hi`; returns the new offset."""
    while cur < lo:
        nxt = stream.peek()
        t = nxt if cur + stream.sizes[nxt] <= hi else stream.best_fit(hi - cur)
        if t is None:
            break
        layout.append(stream.take(t))
        cur += stream.sizes[t]
    return cur


def filler_messages(t: FillerTurn) -> list[Message]:
    """A filler turn as chat messages (user, assistant)."""
    return [Message(role="user", content=t.user), Message(role="assistant", content=t.assistant)]
