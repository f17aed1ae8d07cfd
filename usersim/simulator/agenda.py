"""The rule simulator's agenda: what the user knows, has said, still wants, and what to do next.

ConvLab-style: the user starts with a stack of goals (the required deliverables, top = next to
ask for) and a queue of facts to give. Each agent reply is observed (questions asked, items
delivered, constraint breaches), scripted events fire at their turn, and `decide` produces the
acts of the next user turn. Nothing here is random; wording is chosen later in phrasing.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from usersim.lang.acts import accepts
from usersim.personas.schema import Event, Persona
from usersim.simulator.constraints import asks_go_ahead, proposes
from usersim.simulator.fact_check import contradictions, facts_of
from usersim.simulator.in_force import add_constraint, opening_constraints
from usersim.simulator.phrasing import Act, fact_label, humanize, item_label, join_words
from usersim.simulator.signals import Violation, constraint_violations, delivered_items
from usersim.simulator.slots import (
    SAID_PREFIX,
    UNKNOWN_PREFIX,
    FactMatcher,
    Matchers,
    asks_anything,
    asks_confirmation,
    concept_of,
    slot_patterns,
)

# Consecutive unhelpful agent turns tolerated when stop_rules.patience_turns is not set.
PATIENCE_BY_TRAIT = {"low": 2, "medium": 3, "high": 5}
# Facts a vague user still states plainly (nobody hedges about where they live).
NEVER_HEDGED = {"origin", "party_size", "name", "diet"}
# How many questions the user answers in one turn, by cooperativeness.
ANSWERS_BY_TRAIT = {"low": 1, "medium": 2, "high": 99}


@dataclass
class Observation:
    """What one agent reply did, as the user perceives it."""

    asked: list[str]
    asked_unnamed: bool
    confirm: bool
    delivered: dict[str, str]
    violations: list[Violation]
    helpful: bool
    open_question: bool = False  # "Anything else?": answered by restating what is still needed
    proposal: bool = False  # the reply offers something or asks the go-ahead for it
    confirm_request: bool = False  # the reply asks the go-ahead ("确认为您办理吗？", "Shall I go ahead?")


@dataclass
class Agenda:
    """The user's state between turns."""

    persona: Persona
    matcher: FactMatcher
    facts: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # fact key -> the persona's own label
    required: list[str] = field(default_factory=list)
    fired: set[int] = field(default_factory=set)  # conditional events (index in persona.events) done
    revealed: set[str] = field(default_factory=set)
    answered_unknown: set[str] = field(default_factory=set)
    delivered: dict[str, int] = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    unhelpful: int = 0
    last_reply: str = ""
    # the user's verdict on the last proposal: ("proposal_accepted" | "proposal_refused", why)
    decision: tuple[str, str] | None = None

    @classmethod
    def start(cls, persona: Persona, opening: str | None = None) -> Agenda:
        """The agenda at the start: the persona's facts and goal, and the needs its opening message
        (`opening`, else persona.opening_message) states ("流量至少要10G", "under $40") as constraints."""
        facts: dict[str, str] = {}
        labels: dict[str, str] = {}
        for fact in persona.known_info:
            facts.setdefault(fact.slot, fact.value)  # the first value of a slot is the starting one
            if fact.label:
                labels.setdefault(fact.slot, fact.label)
            elif persona.language == "zh" and _short_chinese(fact.description):
                labels.setdefault(fact.slot, fact.description or "")  # a short Chinese description names it
        return cls(
            persona=persona,
            matcher=_matcher(persona),
            facts=facts,
            labels=labels,
            required=list(persona.goal.required),
            constraints=opening_constraints(persona, opening or persona.opening_message or ""),
        )

    @property
    def pending(self) -> list[str]:
        """The request stack: required items not delivered yet, next one first."""
        return [item for item in self.required if item not in self.delivered]

    def fact_act(self, kind: str, slot: str, **kw) -> Act:
        """An act about one fact, carrying what phrasing needs to name it (never the raw key)."""
        names = [self.labels[slot]] if slot in self.labels else []
        names += [a for f in self.persona.known_info if f.slot == slot for a in f.aliases]
        concept = "name" if slot == "name" else None if slot in slot_patterns() else concept_of(slot, names)
        return Act(
            kind, slot=slot, value=self.facts.get(slot), label=self.labels.get(slot), concept=concept, **kw
        )

    @property
    def patience(self) -> int:
        rules = self.persona.stop_rules.patience_turns
        return rules if rules is not None else PATIENCE_BY_TRAIT[self.persona.traits.patience]

    def unrevealed(self) -> list[str]:
        return [slot for slot in self.facts if slot not in self.revealed]

    def observe(self, agent_text: str, turn: int, said: list[str] | tuple[str, ...] = ()) -> Observation:
        """Update the agenda with one agent reply (deliveries, patience). `said`: the user's own
        messages so far (what the user already said answers a question about it)."""
        asked = self.matcher.asked(agent_text, said)
        opened = self.matcher.open_question(agent_text)
        violations = constraint_violations(self.constraints, agent_text, self.persona.language)
        violations += contradictions(facts_of(self.persona, self.facts), agent_text)
        new = {}
        if not violations:  # a rejected proposal delivers nothing
            goal = self.persona.goal.model_copy(update={"required": self.required})
            new = {k: v for k, v in delivered_items(goal, agent_text).items() if k not in self.delivered}
            for item in new:
                self.delivered[item] = turn
        fresh_question = any(s not in self.revealed and s not in self.answered_unknown for s in asked)
        unnamed = not asked and not opened and asks_anything(agent_text)
        repeated = " ".join(agent_text.split()) == self.last_reply  # the same reply again is no progress
        self.last_reply = " ".join(agent_text.split())
        helpful = not repeated and (bool(new) or fresh_question or ((unnamed or opened) and not violations))
        self.unhelpful = 0 if helpful and not violations else self.unhelpful + 1
        confirm = unnamed and asks_confirmation(agent_text)
        return Observation(
            asked,
            unnamed,
            confirm,
            new,
            violations,
            helpful and not violations,
            open_question=opened,
            proposal=proposes(agent_text),
            confirm_request=asks_go_ahead(agent_text),
        )

    def apply_event(self, event: Event) -> Act:
        """Fire one scripted event: change the facts / constraints and say so."""
        if event.kind in ("change_fact", "change_mind") and event.slot and event.value is not None:
            self.facts[event.slot] = event.value
            self.revealed.add(event.slot)
            self.delivered.clear()  # changed requirements: earlier proposals must be redone
        if event.kind == "add_constraint" and event.slot:
            self._add_constraint(event.slot, event.value)
            self.delivered.clear()
        if event.kind == "add_required" and event.slot and event.slot not in self.required:
            self.required.append(event.slot)
        if event.kind == "drop_required" and event.slot in self.required:
            self.required.remove(event.slot)
        if event.text == "":  # an explicit empty text makes the event silent (state change only)
            return Act("silent")
        if event.kind in ("add_required", "drop_required") and event.text is None:
            return Act("silent")  # a changed requirement shows in what the user asks for next
        if event.kind == "change_fact" and event.slot:
            return self.fact_act(event.kind, event.slot, text=event.text)
        return Act(event.kind, slot=event.slot, value=event.value, text=event.text)

    def _add_constraint(self, key: str, value: str | None) -> None:
        """An add_constraint event (simulator/in_force.add_constraint: the judges read the same)."""
        self.constraints = add_constraint(self.constraints, key, value, self.persona.language)


# personas whose matchers the simulator keeps (a run has a few per case)
_SIMULATOR_MATCHERS = Matchers(64)


def _matcher(persona: Persona) -> FactMatcher:
    """The simulator's FactMatcher of `persona`, apart from the judges' (slots.matcher_for): a
    judge's matcher failing never takes the simulated user with it."""
    return _SIMULATOR_MATCHERS.get(persona, FactMatcher)


def _in_force(constraints: dict) -> str:
    """The constraints in force, in a few words for sim_events ("max_price 60; min data 10G")."""
    parts = []
    for key, value in constraints.items():
        if isinstance(value, dict):
            parts += [f"{key} {m} {v}" for m, v in value.items()]
        elif isinstance(value, list):
            parts += [f"{key} {w}" for w in value]
        elif value is not None:
            parts.append(f"{key} {value}")
    return "; ".join(parts) or "no constraints"


def _short_chinese(text: str | None) -> bool:
    return bool(text) and not (text or "").isascii() and len(text or "") <= 12


Decision = tuple[list[Act], Literal["goal_met", "gave_up"] | None]


def answer_acts(agenda: Agenda, slots: list[str], limit: int) -> list[Act]:
    """Answers to the agent's questions: known facts, repeats, or an honest "I don't know"."""
    acts: list[Act] = []
    hedge = agenda.persona.traits.clarity == "low"  # vague users hedge their first answer of a turn
    for slot in slots[:limit]:
        if slot in agenda.facts:
            if slot in agenda.revealed:
                acts.append(agenda.fact_act("repeat", slot))
            else:
                plain = slot in NEVER_HEDGED or slot not in slot_patterns()  # ids and emails are not hedged
                acts.append(agenda.fact_act("answer", slot, hedged=hedge and not plain))
                hedge = hedge and plain
                agenda.revealed.add(slot)
        elif slot == "name":  # everyone knows their own name, even when known_info omits it
            name = agenda.persona.name.split("（")[0].split(" (")[0]
            acts.append(Act("answer", slot=slot, value=name, concept="name"))
        elif slot.startswith(SAID_PREFIX):  # asked about what the user already said: say it again
            acts.append(Act("repeat_said", slot=slot, value=slot[len(SAID_PREFIX) :]))
        elif slot.startswith(UNKNOWN_PREFIX):  # an unknown_info topic, or information the user lacks
            if not any(a.kind == "dont_know" for a in acts):
                acts.append(Act("dont_know", slot=slot, label=slot[len(UNKNOWN_PREFIX) :] or None))
            agenda.answered_unknown.add(slot)
        else:  # a travel/shopping slot the user has not decided: never invent it
            acts.append(Act("unknown", slot=slot))
            agenda.answered_unknown.add(slot)
    return acts


def goal_in_words(agenda: Agenda) -> str | None:
    """The goal's description while it still says what the user wants; None once a scripted
    add_required / drop_required changed the items (the description would then contradict it)."""
    goal = agenda.persona.goal
    return goal.description if list(agenda.required) == list(goal.required) else None


def _item_words(agenda: Agenda, item: str) -> str:
    """An item in words: goal.labels, the language's item label, else its key as words."""
    found = item_label(agenda.persona.language, item, agenda.persona.goal.labels)
    return found or humanize(item)


def restate_act(agenda: Agenda) -> Act:
    """The goal items not delivered yet, in the user's words (goal.labels, the language's item
    labels), or the goal's description when an item has no words (never a raw key); after a
    change of the items the pending ones are named, so the user never asks for what it dropped."""
    goal = agenda.persona.goal
    names = [item_label(agenda.persona.language, item, goal.labels) for item in agenda.pending]
    described = goal_in_words(agenda)
    if (any(n is None for n in names) or not names) and described:
        return Act("restate_goal", value=described)
    words = [_item_words(agenda, item) for item in agenda.pending]
    return Act("restate", value=join_words(agenda.persona.language, words or [goal.description]))


def decide(agenda: Agenda, obs: Observation, events: list[Event], upcoming: bool = False) -> Decision:
    """The acts of the next user turn (after turn 1) and whether the user stops. `upcoming`: scripted
    events are still due later in the conversation."""
    persona = agenda.persona
    acts = [agenda.apply_event(e) for e in events]
    hesitating = any(e.kind == "hesitate" for e in events)
    if upcoming and not agenda.pending and persona.traits.decisiveness == "low" and not hesitating:
        # an indecisive user does not close the deal while a change of mind is still to come
        acts.append(Act("hesitate"))
        hesitating = True
    agenda.decision = None
    if obs.violations:  # a scripted "Yes, go ahead." is never said to a proposal the user refuses
        acts = [Act("silent") if a.text and accepts(a.text) else a for a in acts]
    if obs.violations:  # refuse with the reasons (at most two: a user names the worst, not a list)
        for v in obs.violations[:2]:
            if v.constraint == "fact" and v.slot:  # "No — it's Building 4, Floor 2": said now
                label = fact_label(persona.language, agenda.fact_act("answer", v.slot))
                acts.append(Act("reject", slot="fact", found=v.found, limit=v.limit, label=label))
                agenda.revealed.add(v.slot)
                continue
            acts.append(Act("reject", slot=v.constraint, found=v.found, limit=v.limit))
        agenda.decision = ("proposal_refused", "; ".join(v.describe() for v in obs.violations))
    elif obs.proposal and obs.confirm_request:
        agenda.decision = ("proposal_accepted", f"meets {_in_force(agenda.constraints)}")
    spoke = any(a.kind != "silent" and a.text for a in acts[: len(events)])  # an event already answered
    answers = answer_acts(agenda, obs.asked, ANSWERS_BY_TRAIT[persona.traits.cooperativeness])
    # a scripted change of mind is the answer: never repeat the old words after it
    # ... nor repeat them to a go-ahead question: a proposal that names the need is not asking for it
    go_ahead_on_proposal = obs.proposal and obs.confirm_request and not obs.violations
    acts += [a for a in answers if not ((spoke or go_ahead_on_proposal) and a.kind == "repeat_said")]
    if (obs.asked_unnamed or go_ahead_on_proposal) and not obs.violations and not spoke:
        # a go-ahead question gets a yes (or a doubt from an indecisive user), others a shrug
        go_ahead = obs.confirm or (obs.proposal and obs.confirm_request)  # "您看可以办吗" asks a yes too
        doubtful = go_ahead and persona.traits.decisiveness == "low" and not hesitating
        acts.append(Act("hesitate" if doubtful else "confirm" if go_ahead else "generic"))
        hesitating = hesitating or doubtful  # a doubting user does not close the deal this turn
    if persona.reveal_policy in ("gradually", "all_at_once"):
        extra = agenda.unrevealed()[: 1 if persona.reveal_policy == "gradually" else None]
        for slot in extra:
            acts.append(agenda.fact_act("volunteer", slot))
            agenda.revealed.add(slot)
    said = any(a.kind != "silent" for a in acts[: len(events)])  # an event's words are said before stopping
    if (
        not agenda.pending
        and agenda.delivered  # never goal_met on an empty goal: something was delivered
        and persona.stop_rules.stop_when_goal_met
        and not obs.violations
        and not hesitating
        and not said
    ):
        return [Act("goal_met")], "goal_met"
    if agenda.unhelpful >= agenda.patience and not events:  # a scripted change is said first: a new chance
        return [Act("give_up")], "gave_up"
    if obs.open_question and agenda.pending and not obs.violations:
        acts.append(restate_act(agenda))  # "Anything else?": what is still needed, in the user's words
    # after a yes to a delivered proposal, ask for what is next; a bare go-ahead needs no nagging
    stalled = not obs.asked and not obs.open_question
    stalled = stalled and (not obs.asked_unnamed or (obs.confirm and bool(obs.delivered)))
    if stalled and agenda.pending and not obs.violations:
        item = agenda.pending[0]
        described = goal_in_words(agenda)
        if described is None and not item_label(persona.language, item, persona.goal.labels):
            acts.append(restate_act(agenda))  # the items changed: name what is still wanted
        else:
            acts.append(Act("continue", item=item, value=described))
    if not acts:
        acts.append(Act("ack"))
    return acts, None
