"""The goal in force: what the user wants at a given turn, one reading for every reader.

The rule simulator's agenda, the model simulator's prompt, the task-completion judge and the
fidelity judges all ask the same question — which items and constraints hold at turn N — and get
the same answer from here:

- `required`: goal.required with the add_required / drop_required events in force;
- `constraints`: goal.constraints, plus the needs the user's opening message states ("流量至少要
  10G", "under $40", "needs roaming": simulator/needs.py), plus the add_constraint events in force
  (`min.<measure>` / `max.<measure>` limits with units, `require` / `exclude` words, a need in words
  under `needs`, or a legacy key's number).

An event is in force from the turn the user said it (`said`: persona.events index -> user turn,
simulator/scripted.said_turns; what the agent was told), else from its due turn (`due`), else
from its at_turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.needs import merge, stated_needs


@dataclass(frozen=True)
class GoalInForce:
    """The required items and constraints in force at one turn."""

    required: list[str] = field(default_factory=list)
    constraints: dict = field(default_factory=dict)


def applies(
    persona: Persona, index: int, turn: int, said: dict[int, int] | None, due: dict[int, int] | None
) -> bool:
    """Whether persona.events[index] is in force at `turn`: said by then when `said` is given (what
    the agent was told), else due by then (`due`, or the event's at_turn)."""
    if said is not None:
        return index in said and said[index] <= turn
    if due is not None:
        return index in due and due[index] <= turn
    at = persona.events[index].at_turn
    return at is not None and at <= turn


def opening_of(persona: Persona, transcript: Sequence[Message] = ()) -> str:
    """The user's opening message: the first user message of the live conversation, else the
    persona's opening_message (a case's 初始消息 replaces the persona's)."""
    first = next((m.content for m in transcript if m.role == "user" and m.content), None)
    return first or persona.opening_message or ""


def opening_constraints(persona: Persona, opening: str | None = None) -> dict:
    """goal.constraints with the needs the opening message states added (the goal's own limit of a
    measure wins over a stated one)."""
    text = opening if opening is not None else persona.opening_message or ""
    return merge(dict(persona.goal.constraints), stated_needs(text, persona.language))


def add_constraint(constraints: dict, key: str, value: str | None, language: str) -> dict:
    """`constraints` after one add_constraint event: `exclude` / `require` add a word,
    `min.<measure>` / `max.<measure>` a limit with its unit ("min.data" = "10 GB"), `min` / `max` /
    `needs` a need in words ("至少要 20G": a later limit of a measure replaces the earlier one), any
    other key its number (legacy max_price ...)."""
    out = dict(constraints)
    if key in ("exclude", "require"):
        out[key] = list(out.get(key) or []) + [value]
    elif key.split(".", 1)[0] in ("min", "max") and "." in key:
        kind, measure = key.split(".", 1)
        out[kind] = {**(out.get(kind) or {}), measure: value}
    elif key in ("min", "max", "needs"):
        stated = stated_needs(value or "", language)
        out = merge(out, stated)
        for kind in ("min", "max"):
            if stated.get(kind):
                out[kind] = {**(out.get(kind) or {}), **stated[kind]}
    else:
        out[key] = float(value) if value is not None else None
    return out


def constraints_in_force(
    persona: Persona,
    turn: int,
    said: dict[int, int] | None = None,
    due: dict[int, int] | None = None,
    opening: str | None = None,
) -> dict:
    """The constraints in force at `turn` (see the module docstring)."""
    out = opening_constraints(persona, opening)
    for i, event in enumerate(persona.events):
        if event.kind == "add_constraint" and event.slot and applies(persona, i, turn, said, due):
            out = add_constraint(out, event.slot, event.value, persona.language)
    return out


def required_in_force(
    persona: Persona, turn: int, said: dict[int, int] | None = None, due: dict[int, int] | None = None
) -> list[str]:
    """goal.required with the add_required / drop_required events in force at `turn` applied."""
    items = list(persona.goal.required)
    for i, event in enumerate(persona.events):
        if event.slot and applies(persona, i, turn, said, due):
            if event.kind == "add_required" and event.slot not in items:
                items.append(event.slot)
            elif event.kind == "drop_required" and event.slot in items:
                items.remove(event.slot)
    return items


def goal_at(
    persona: Persona,
    turn: int,
    said: dict[int, int] | None = None,
    due: dict[int, int] | None = None,
    opening: str | None = None,
) -> GoalInForce:
    """The goal in force at `turn`: required items and constraints."""
    return GoalInForce(
        required=required_in_force(persona, turn, said, due),
        constraints=constraints_in_force(persona, turn, said, due, opening),
    )
