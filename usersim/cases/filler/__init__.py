"""The filler library: natural small talk per scenario, used to pad long-context cases.

Each `cases/filler/<scenario>.yaml` holds filler *units*: user/assistant `pairs` of about 100-150
tokens each (seed 000's rule; the granularity that controls the length), and `extends` (shared
pools such as travel_general). `common.yaml` adds the connective text every scenario shares:
`intros` (the lead-in before the related questions a long reply also answers) and `closings`
(short closing lines that land a history exactly on its token band). The expander combines units
into conversation rounds (cases.filler.rounds). Filler must carry none of a case's key
information: `load_filler` drops every unit and connective line that mentions a given keyword.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from usersim.core.messages import Message
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.core.yamlfile import FileProblems, read_yaml, validation_problems

FILLER_DIR = Path(__file__).parent
TOPICS_FILE = FILLER_DIR / "topics.yaml"  # sub-topic words (cases.filler.rounds), not a scenario


class FillerFile(BaseModel):
    """One filler file on disk."""

    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(description="Scenario key; must equal the file name without .yaml.")
    description: str = Field(default="", description="What the small talk is about and what it avoids.")
    extends: list[str] = Field(default_factory=list, description="Other scenarios whose units are also used.")
    pairs: list[tuple[str, str]] = Field(
        default_factory=list, description="[user, assistant] filler units, 100-150 tokens."
    )
    intros: list[str] = Field(
        default_factory=list,
        description="Lead-ins before the related questions a long filler reply also answers.",
    )
    closings: list[str] = Field(
        default_factory=list, description="Short closing lines of a reply, for exact landing."
    )


class FillerTurn(BaseModel):
    """One filler unit: a question and its answer (about 100-150 tokens)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str = Field(description="The user's question.")
    assistant: str = Field(description="The assistant's answer.")
    source: str = Field(description="Scenario file the unit comes from.")

    @property
    def text(self) -> str:
        return self.user + "\n" + self.assistant


@dataclass(frozen=True)
class FillerLibrary:
    """The filler a scenario may use, already free of the case's key words."""

    units: list[FillerTurn]
    intros: list[str]
    closings: list[str]


class TopicsFile(BaseModel):
    """cases/filler/topics.yaml: the words that name each sub-topic of the filler units."""

    model_config = ConfigDict(extra="forbid")

    topics: dict[str, list[str]] = Field(
        description="Sub-topic name -> words naming it (matched case-insensitively)."
    )


@functools.cache
def read_topics() -> dict[str, list[str]]:
    """The sub-topic lexicon; errors name the file."""
    try:
        data, lines = read_yaml(TOPICS_FILE)  # safe loader: FileProblems with file:line
        return TopicsFile.model_validate(data).topics
    except ValidationError as exc:
        raise FileProblems(validation_problems(TOPICS_FILE, exc, lines, TopicsFile)) from None


def scenarios() -> list[str]:
    """All scenario keys in the library."""
    return sorted(p.stem for p in FILLER_DIR.glob("*.yaml") if p != TOPICS_FILE)


@functools.cache
def read_filler_file(scenario: str) -> FillerFile:
    """Load and validate one scenario file; errors name the file and suggest close scenario names."""
    path = FILLER_DIR / f"{scenario}.yaml"
    if not path.is_file():
        raise UnknownNameError(
            f"Unknown filler scenario '{scenario}'.{did_you_mean(scenario, scenarios())} "
            f"Available: {', '.join(scenarios())}. Add cases/filler/{scenario}.yaml to create it."
        )
    raw, lines = read_yaml(path)  # safe loader: FileProblems with file:line
    try:
        data = FillerFile.model_validate(raw)
    except ValidationError as exc:
        raise FileProblems(validation_problems(path, exc, lines, FillerFile)) from None
    if data.scenario != scenario:
        raise ValueError(f"{path}: scenario: '{data.scenario}' must equal the file name '{scenario}'")
    return data


def _collect(scenario: str, seen: set[str]) -> list[FillerFile]:
    """The scenario's file and every file it extends (an extends cycle adds nothing new)."""
    if scenario in seen:
        return []
    seen.add(scenario)
    f = read_filler_file(scenario)
    return [f] + [g for parent in f.extends for g in _collect(parent, seen)]


def mentions(text: str, keywords: list[str]) -> list[str]:
    """The keywords found in `text` (case-insensitive)."""
    low = text.lower()
    return [k for k in keywords if k and k.lower() in low]


def load_filler(scenario: str, exclude: list[str] | None = None) -> FillerLibrary:
    """A scenario's units (with its extends) and the shared intros/closings of common.yaml, minus
    everything that mentions one of `exclude` (the case's key-information keywords)."""
    files = _collect(scenario, set())
    if scenario != "common":
        files += _collect("common", {f.scenario for f in files})
    words = list(exclude or [])
    units = [FillerTurn(user=u, assistant=a, source=f.scenario) for f in files for u, a in f.pairs]
    units = [t for t in units if not mentions(t.text, words)]
    if not units:
        raise ValueError(
            f"Filler scenario '{scenario}' has no units free of the key words {words}; "
            f"add units that avoid them to cases/filler/{scenario}.yaml"
        )
    intros = [s for f in files for s in f.intros if not mentions(s, words)]
    closings = [s for f in files for s in f.closings if not mentions(s, words)]
    if not intros or not closings:
        raise ValueError(
            f"Filler scenario '{scenario}': every intro or every closing mentions one of {words}; "
            "add neutral ones to cases/filler/common.yaml"
        )
    return FillerLibrary(units=units, intros=intros, closings=closings)


def filler_messages(t: FillerTurn) -> list[Message]:
    """A filler unit as chat messages (user, assistant)."""
    return [Message(role="user", content=t.user), Message(role="assistant", content=t.assistant)]
