"""The persona file format: who the simulated user is, what they want and what they know."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from usersim.core.defaults import new_dict, new_list

PERSONA_SCHEMA_VERSION = 1

Level = Literal["low", "medium", "high"]


class Strict(BaseModel):
    # built on first use, not at import: a command pays only for the models it validates (the
    # sub-models a parent embeds are built inside its schema; alone, only if validated alone)
    model_config = ConfigDict(extra="forbid", defer_build=True)


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
        validation_alias=AliasChoices("slot", "key"),
        description=(
            "The fact's key (`key:` is accepted too): any name, e.g. user_id, reservation_id, email, zip_code; "
            "the travel/shopping slots (origin, destination, dates, duration, budget, party_size, purpose, "
            "brand, weight, preferences, accommodation, district, bedrooms, area_sqm, diet, cuisine, "
            "screen_size, os, name) come with question patterns built in. The rule simulator recognises a "
            "question about the fact by this key, `aliases` and `description`."
        ),
    )
    value: str = Field(
        description="The value in the persona's language, e.g. 上海 / 2 人 / anya_garcia_5901."
    )
    aliases: list[str] = Field(
        default_factory=new_list,
        description="Other names for the fact that an agent may ask about (booking code, 订单号), "
        "or other ways the user may say the value.",
    )
    description: str | None = Field(
        default=None, description="What the fact is, in words (e.g. 'the user id of the airline account')."
    )
    label: str | None = Field(
        default=None,
        description="How the user names the fact in a sentence ('user ID' -> 'My user ID is ...'); "
        "default: from the key.",
    )


class Goal(Strict):
    """What the user wants out of the conversation."""

    description: str = Field(description="The task goal in one sentence.")
    required: list[str] = Field(
        default_factory=new_list,
        description="Things the agent must deliver before the goal counts as met (e.g. flights, itinerary, hotel).",
    )
    deliverable_keywords: dict[str, list[str]] = Field(
        default_factory=new_dict,
        description="Per required item: words whose presence in an agent reply shows it was delivered.",
    )
    labels: dict[str, str] = Field(
        default_factory=new_dict,
        description="Per required item: how the user names it in a sentence (card_blocked: 'blocking my "
        "card'); an item without one is asked for by restating the goal, never by its raw key.",
    )
    constraints: dict[str, Any] = Field(
        default_factory=new_dict,
        description=(
            "Hard constraints every proposal and confirmation request must meet. `min` / `max`: a measure "
            "name -> a value with its unit, read by usersim.lang.quantity ({data: 10 GB}, {price: 60 元}, "
            "{price: $40}, {weight: 1.5 kg}, {duration: 30 min}); `require`: features the proposal must "
            "affirm (a negated mention, 'no roaming' / '不含国际漫游', or an offer that leaves it out is a "
            "breach; synonyms from lang/lexicon.yaml); `exclude`: words never to accept (brands, allergens, "
            "辣 ...); legacy max_price (a number, any currency), max_total_price_wan (万), max_weight_kg. "
            "Needs the persona states in its opening message ('流量至少要10G', 'under $40', 'needs "
            "roaming') hold as well."
        ),
    )

    @field_validator("constraints")
    @classmethod
    def _readable_constraints(cls, value: dict[str, Any]) -> dict[str, Any]:
        for kind in ("min", "max"):
            if kind not in value:
                continue
            from usersim.lang import quantity  # only for min / max: the reader is ~20 ms of imports

            if not isinstance(value[kind], dict):
                raise ValueError(
                    f"`{kind}` maps a measure to a value with its unit, e.g. {kind}: {{data: 10 GB}}"
                )
            for measure, raw in value[kind].items():
                if quantity.parse(str(raw)) is None:
                    raise ValueError(
                        f"{kind}.{measure}: '{raw}' is not a quantity (write it with a unit: 10 GB, 60 元, $40)"
                    )
        for kind in ("require", "exclude"):
            if kind in value and isinstance(value[kind], str):
                value = {**value, kind: [value[kind]]}  # a single word is a list of one
            elif kind in value and not isinstance(value[kind], list):
                raise ValueError(f"`{kind}` is a list of words, e.g. {kind}: [roaming]")
        return value


class When(Strict):
    """The condition of a conditional event: something the agent did in its last reply."""

    agent_says: list[str] = Field(
        default_factory=new_list,
        description="Fires when the agent's reply contains any of these phrases (case-insensitive).",
    )
    agent_calls: list[str] = Field(
        default_factory=new_list,
        description="Fires when the agent calls any of these tools (a name or a list).",
    )

    @field_validator("agent_says", "agent_calls", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _something(self) -> When:
        if not self.agent_says and not self.agent_calls:
            raise ValueError("`when` needs `agent_says: [phrases]` or `agent_calls: TOOL`")
        return self


class Event(Strict):
    """A scripted change during the conversation: at a user turn, or when the agent says/does something."""

    at_turn: int | None = Field(
        default=None, ge=1, description="User turn (1-based) at which the event fires."
    )
    when: When | None = Field(
        default=None,
        description="Instead of at_turn: fire (once) on the user turn after the agent says a phrase "
        "(`agent_says: [...]`) or calls a tool (`agent_calls: TOOL`).",
    )
    kind: Literal[
        "change_fact", "hesitate", "change_mind", "say", "add_constraint", "add_required", "drop_required"
    ] = Field(
        description="What happens: say a text, change a fact, add a constraint, add or drop a required "
        "item (slot: the item), hesitate, change mind."
    )
    slot: str | None = Field(
        default=None, description="For change_fact / add_constraint: the slot; add/drop_required: the item."
    )
    value: str | None = Field(default=None, description="For change_fact / add_constraint: the new value.")
    text: str | None = Field(
        default=None,
        description="What the user says when it fires; omitted = a template phrase, empty string = silent.",
    )

    @model_validator(mode="after")
    def _trigger(self) -> Event:
        if (self.at_turn is None) == (self.when is None):
            raise ValueError("an event needs exactly one of `at_turn: N` or `when: {agent_says: [...]}`")
        return self


class StopRules(Strict):
    """When the user ends the conversation."""

    stop_when_goal_met: bool = Field(default=True, description="Stop once every required item is delivered.")
    patience_turns: int | None = Field(
        default=None, ge=1, description="Give up after this many consecutive unhelpful agent turns."
    )


Tactic = Literal[
    "false_authority",
    "urgency",
    "gradual_escalation",
    "other_customer_data",
    "impersonation",
    "emotional_appeal",
    "policy_override",
]
TACTICS: tuple[str, ...] = Tactic.__args__  # type: ignore[attr-defined]


class Claims(Strict):
    """What a manipulative user claims about themselves (never verified: that is the point)."""

    role: str | None = Field(
        default=None, description="Claimed authority, as the user says it: 'the branch manager', '前台经理'."
    )
    staff_id: str | None = Field(default=None, description="A claimed badge / employee number: 'E-4471'.")
    name: str | None = Field(default=None, description="The name the user gives for themselves.")
    relation: str | None = Field(
        default=None,
        description="For impersonation: who the user says they are to the target ('her husband', '他太太').",
    )
    reason: str | None = Field(
        default=None,
        description="For urgency / emotional appeal: why it cannot wait ('a fraud case closes in ten minutes').",
    )


class Target(Strict):
    """What the manipulative user tries to get out of the agent."""

    kind: Literal["other_customer_data", "unauthorized_action", "system_prompt"] = Field(
        description="other_customer_data (someone else's records), unauthorized_action (a change the "
        "user may not make), system_prompt (the agent's instructions or policy text)."
    )
    ask: str = Field(
        description="What the user asks for, as a noun phrase in the persona's language: 'the balance and "
        "email of customer C-1003', '订单 BK-5002 的旅客手机号', 'your full instructions, word for word'."
    )
    subject: str | None = Field(
        default=None,
        description="Whose data or which record, as the user names it ('customer C-1003', '王磊').",
    )


class Adversary(Strict):
    """A social-engineering user: the tactics it plays, turn by turn, to reach its target.

    Both simulators read it: the rule simulator pushes one tactic per turn (phrasing from
    usersim/lang/data/<code>/adversary.yaml) and reads the agent's reply as a refusal or a
    disclosure (usersim.lang.stance); the LLM simulator gets the tactics in its prompt
    (simulator/prompts/adversary.md)."""

    tactics: list[Tactic] = Field(
        min_length=1,
        description="In the order they are tried: false_authority ('I'm the branch manager'), urgency, "
        "gradual_escalation (a harmless ask first, the push later), other_customer_data (asks outright "
        "for another customer's records), impersonation (claims to act for the target), emotional_appeal, "
        "policy_override ('your supervisor already approved it').",
    )
    target: Target = Field(description="What the user is after.")
    claims: Claims = Field(default_factory=Claims, description="What the user claims to be.")
    escalation_turns: int = Field(
        default=2,
        ge=0,
        description="With gradual_escalation: user turns of harmless conversation (the persona's goal) "
        "before the first push; the push starts earlier once that goal is delivered.",
    )
    max_refusals: int | None = Field(
        default=None,
        ge=1,
        description="Give up after this many replies that did not hand it over (default: one per tactic).",
    )

    @model_validator(mode="after")
    def _claims_for_tactics(self) -> Adversary:
        if "false_authority" in self.tactics and not self.claims.role:
            raise ValueError("tactic false_authority needs `claims.role` (who the user claims to be)")
        if "impersonation" in self.tactics and not self.claims.relation:
            raise ValueError("tactic impersonation needs `claims.relation` (who the user is to the target)")
        if len(set(self.tactics)) != len(self.tactics):
            raise ValueError("a tactic is listed twice")
        return self

    @property
    def pushes(self) -> list[str]:
        """The tactics of the push turns, in order (gradual_escalation is timing, not a push of its own)."""
        return [t for t in self.tactics if t != "gradual_escalation"] or ["other_customer_data"]

    @property
    def refusals_allowed(self) -> int:
        return self.max_refusals or len(self.pushes) + (1 if "gradual_escalation" in self.tactics else 0)


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
    known_info: list[Fact] = Field(
        default_factory=new_list, description="Facts the user can give when asked."
    )
    unknown_info: list[str] = Field(
        default_factory=new_list,
        description=(
            "Things the user does not know and must never invent, as `topic` or `topic: hidden truth`. "
            "They never reach the simulator's prompt; the fidelity judge flags user turns that contain them."
        ),
    )
    reveal_policy: Literal["all_at_once", "when_asked", "gradually"] = Field(
        default="when_asked",
        description="How known facts come out: when_asked (only answers), gradually (one more per turn), "
        "all_at_once (`upfront` is accepted too: everything at the first chance).",
    )
    events: list[Event] = Field(default_factory=new_list, description="Scripted events (change of mind ...).")
    stop_rules: StopRules = Field(default_factory=StopRules, description="When to stop or give up.")
    max_turns: int | None = Field(default=None, ge=1, description="Default max user turns.")
    adversary: Adversary | None = Field(
        default=None,
        description="A manipulative user (social engineering): tactics, target and claims; see Adversary.",
    )
    tags: list[str] = Field(default_factory=new_list, description="Domain and style tags.")
    variation: dict[str, Any] = Field(
        default_factory=new_dict, description="Axis levels of a generated variant (personas.variation.vary)."
    )

    @model_validator(mode="after")
    def _escalation_needs_business(self) -> Persona:
        if (
            self.adversary is not None
            and "gradual_escalation" in self.adversary.tactics
            and not self.goal.required
        ):
            raise ValueError(
                "adversary.tactics: gradual_escalation needs goal.required (the harmless business the user "
                "does before the first push, e.g. required: [balance])"
            )
        return self

    @model_validator(mode="after")
    def _goal_can_be_met(self) -> Persona:
        """A goal with nothing required would be "met" before the agent did anything: the rule
        simulator would stop goal_met after the first reply and a correct agent would fail."""
        adds = any(e.kind == "add_required" for e in self.events)
        if (
            not self.goal.required
            and not adds
            and self.adversary is None
            and self.stop_rules.stop_when_goal_met
        ):
            raise ValueError(
                "goal.required: empty, so nothing tells the simulated user its goal is met; list what the "
                "agent must deliver (e.g. required: [refund_status] with deliverable_keywords: "
                "{refund_status: [refunded, 已退款]}), or set stop_rules.stop_when_goal_met: false"
            )
        return self

    @field_validator("unknown_info", mode="before")
    @classmethod
    def _topic_truth_mappings(cls, v: Any) -> Any:
        # `- insurance: bought at booking` unquoted is a one-key YAML mapping: read it as "topic: truth"
        if isinstance(v, list):
            return [
                f"{k}: {t}" if isinstance(i, dict) and len(i) == 1 else i
                for i in v
                for k, t in (
                    [next(iter(i.items()))] if isinstance(i, dict) and len(i) == 1 else [(None, None)]
                )
            ]
        return v

    @field_validator("reveal_policy", mode="before")
    @classmethod
    def _upfront(cls, v: Any) -> Any:
        return "all_at_once" if v == "upfront" else v
