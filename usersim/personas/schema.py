"""The persona file format: who the simulated user is, what they want and what they know."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PERSONA_SCHEMA_VERSION = 1

Level = Literal["low", "medium", "high"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Traits(Strict):
    """Behavioural traits; the simulators read them to shape replies."""

    clarity: Level = Field(default="medium", description="How clearly needs are stated up front.")
    patience: Level = Field(default="medium", description="How long the user tolerates unhelpful turns.")
    cooperativeness: Level = Field(default="medium", description="How readily the user answers questions.")
    verbosity: Level = Field(default="medium", description="Length of the user's messages.")
    decisiveness: Level = Field(default="medium", description="How quickly the user accepts a proposal.")
    tech_savvy: Level = Field(default="medium", description="Familiarity with technology and jargon.")
    typo_prone: bool = Field(default=False, description="Makes typos / non-native phrasing.")


class Fact(Strict):
    """Something the user knows and can tell when asked."""

    slot: str = Field(
        description=(
            "Slot name the rule simulator recognises questions about: origin, destination, dates, duration, "
            "budget, party_size, purpose, brand, weight, preferences, accommodation, district, bedrooms, "
            "area_sqm, diet, cuisine, screen_size, os, name."
        )
    )
    value: str = Field(description="The value in the persona's language, e.g. 上海 / 2 人 / 1 万左右.")
    aliases: list[str] = Field(default_factory=list, description="Other ways the user may say it.")


class Goal(Strict):
    """What the user wants out of the conversation."""

    description: str = Field(description="The task goal in one sentence.")
    required: list[str] = Field(
        default_factory=list,
        description="Things the agent must deliver before the goal counts as met (e.g. flights, itinerary, hotel).",
    )
    deliverable_keywords: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per required item: words whose presence in an agent reply shows it was delivered.",
    )
    constraints: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Hard constraints proposals must meet: max_price (元/$), max_total_price_wan (万), max_weight_kg, "
            "exclude (words never to accept: brands, allergens, 辣 ...)."
        ),
    )


class Event(Strict):
    """A scripted change during the conversation."""

    at_turn: int = Field(ge=1, description="User turn (1-based) at which the event fires.")
    kind: Literal["change_fact", "hesitate", "change_mind", "say", "add_constraint"] = Field(
        description="What happens."
    )
    slot: str | None = Field(default=None, description="For change_fact / add_constraint: the slot.")
    value: str | None = Field(default=None, description="For change_fact / add_constraint: the new value.")
    text: str | None = Field(
        default=None,
        description="What the user says when it fires; omitted = a template phrase, empty string = silent.",
    )


class StopRules(Strict):
    """When the user ends the conversation."""

    stop_when_goal_met: bool = Field(default=True, description="Stop once every required item is delivered.")
    patience_turns: int | None = Field(
        default=None, ge=1, description="Give up after this many consecutive unhelpful agent turns."
    )


class Persona(Strict):
    """A simulated user."""

    schema_version: int = Field(default=PERSONA_SCHEMA_VERSION, description="Persona file format version.")
    id: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_\-]*(~v[0-9]+)?$",
        description="Unique persona id (file name stem); generated variants add `~v<k>`.",
    )
    name: str = Field(description="Display name.")
    language: Literal["zh", "en"] = Field(default="zh", description="Language the user writes in.")
    identity: str = Field(description="Who the user is: background, situation.")
    traits: Traits = Field(default_factory=Traits, description="Behavioural traits.")
    opening_message: str | None = Field(default=None, description="First message (a case may override).")
    goal: Goal = Field(description="What the user wants.")
    known_info: list[Fact] = Field(default_factory=list, description="Facts the user can give when asked.")
    unknown_info: list[str] = Field(
        default_factory=list,
        description=(
            "Things the user does not know and must never invent, as `topic` or `topic: hidden truth`. "
            "They never reach the simulator's prompt; the fidelity judge flags user turns that contain them."
        ),
    )
    reveal_policy: Literal["all_at_once", "when_asked", "gradually"] = Field(
        default="when_asked", description="How known facts come out."
    )
    events: list[Event] = Field(default_factory=list, description="Scripted events (change of mind ...).")
    stop_rules: StopRules = Field(default_factory=StopRules, description="When to stop or give up.")
    max_turns: int | None = Field(default=None, ge=1, description="Default max user turns.")
    tags: list[str] = Field(default_factory=list, description="Domain and style tags.")
    variation: dict[str, Any] = Field(
        default_factory=dict, description="Axis levels of a generated variant (personas.variation.vary)."
    )
