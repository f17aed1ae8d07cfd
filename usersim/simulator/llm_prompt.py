"""Builds the LLM simulator's messages: persona system prompt + the role-flipped conversation.

The prompt carries what the user may know (identity, goal, known facts, the topics they do not
know, traits, events due now). It never carries unknown_info truths, the judges' criteria or tool
results: the view it is built from holds only user/assistant text.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.agenda import PATIENCE_BY_TRAIT
from usersim.simulator.base import SimulatorView
from usersim.simulator.phrasing import item_label
from usersim.simulator.signals import unknown_topics

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

_LANGUAGE = {"zh": "Chinese (简体中文)", "en": "English"}
_REVEAL = {
    "when_asked": "give a fact only when the assistant asks for it.",
    "gradually": "answer what you are asked, and volunteer at most one extra fact per turn.",
    "all_at_once": "you may tell all of them early, in one go.",
}
_TRAITS = {
    ("clarity", "low"): "Your needs are vague at first; you only get specific when the assistant guides you.",
    ("clarity", "high"): "You state your needs clearly and precisely.",
    ("patience", "low"): "You are impatient: irrelevant or slow answers annoy you quickly.",
    ("patience", "high"): "You are very patient.",
    ("cooperativeness", "low"): "You answer reluctantly, often only one question at a time.",
    ("cooperativeness", "high"): "You answer every question readily.",
    ("verbosity", "low"): "You write very short, terse messages.",
    ("verbosity", "high"): "You write long, chatty messages with extra detail about your situation.",
    ("decisiveness", "low"): "You hesitate and change your mind before accepting a proposal.",
    ("decisiveness", "high"): "You decide quickly once something fits.",
    ("tech_savvy", "low"): "You do not know technical jargon and say so.",
    ("tech_savvy", "high"): "You are comfortable with technical details.",
}


@cache
def prompt_template(name: str) -> Template:
    """A prompt file of simulator/prompts/ as a string.Template ($name placeholders)."""
    return Template((PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8"))


def current_facts(persona: Persona, turn: int) -> dict[str, str]:
    """Known facts with the change_fact / change_mind events up to this turn applied."""
    facts: dict[str, str] = {}
    for fact in persona.known_info:
        facts.setdefault(fact.slot, fact.value)
    for event in persona.events:
        if (
            event.at_turn is not None
            and event.at_turn <= turn
            and event.kind in ("change_fact", "change_mind")
            and event.slot
            and event.value
        ):
            facts[event.slot] = event.value
    return facts


def current_constraints(persona: Persona, turn: int) -> dict:
    """goal.constraints with the add_constraint events up to this turn applied."""
    out = dict(persona.goal.constraints)
    for event in persona.events:
        if event.at_turn is not None and event.at_turn <= turn and event.kind == "add_constraint" and event.slot:
            if event.slot == "exclude":
                out["exclude"] = list(out.get("exclude", [])) + [event.value]
            else:
                out[event.slot] = event.value
    return out


def _event_line(kind: str, slot: str | None, value: str | None, text: str | None) -> str:
    what = {
        "change_fact": f"you change your {slot}: it is now '{value}'. Tell the assistant.",
        "change_mind": f"you change your mind{f' about {slot}' if slot else ''}{f': now {value!r}' if value else ''}.",
        "hesitate": "you hesitate and are unsure about the current proposal.",
        "say": "you bring this up.",
        "add_constraint": f"you add a requirement ({slot}: {value}).",
    }[kind]
    return f"- Now {what}" + (f" Say something like: {text}" if text else "")


def system_prompt(view: SimulatorView) -> str:
    """The simulator's system prompt for this turn."""
    p = view.persona
    facts = current_facts(p, view.turn)
    topics = unknown_topics(p)
    events = [e for e in p.events if e.at_turn == view.turn]
    traits = [line for (name, level), line in _TRAITS.items() if getattr(p.traits, name) == level]
    if p.traits.typo_prone:
        traits.append("You make typos and write like a non-native speaker.")
    patience = p.stop_rules.patience_turns or PATIENCE_BY_TRAIT[p.traits.patience]
    traits.append(f"You give up after about {patience} unhelpful assistant replies in a row.")
    constraints = current_constraints(p, view.turn)
    return prompt_template("system").substitute(
        name=p.name,
        identity=p.identity,
        language_name=_LANGUAGE[p.language],
        goal=view.goal or p.goal.description,
        required=", ".join(f"{item} ({item_label(p.language, item)})" for item in p.goal.required)
        or "(nothing specific)",
        reveal_rule=_REVEAL[p.reveal_policy],
        known_info="\n".join(f"- {slot}: {value}" for slot, value in facts.items()) or "- (nothing specific)",
        unknown_topics=("In particular you do not know: " + "; ".join(topics) + ".") if topics else "",
        traits="\n".join(f"- {t}" for t in traits) or "- An ordinary, reasonable user.",
        constraints=", ".join(f"{k} = {v}" for k, v in constraints.items()) or "(none)",
        turn=view.turn,
        max_turns=view.max_turns,
        events="\n".join(_event_line(e.kind, e.slot, e.value, e.text) for e in events)
        or "- Nothing special.",
    )


def flipped_transcript(transcript: list[Message]) -> list[dict[str, str]]:
    """The conversation from the simulated user's side: the agent speaks as `user`, the
    simulated user's own past turns are `assistant` (what the sim model itself said)."""
    flip = {"assistant": "user", "user": "assistant"}
    return [{"role": flip[m.role], "content": m.content} for m in transcript if m.role in flip and m.content]


def build_messages(view: SimulatorView) -> list[dict[str, str]]:
    """System prompt + flipped conversation (+ a start cue when the user speaks first)."""
    messages = [{"role": "system", "content": system_prompt(view)}] + flipped_transcript(view.transcript)
    if len(messages) == 1 or messages[-1]["role"] == "assistant":
        messages.append({"role": "user", "content": prompt_template("start").substitute()})
    return messages
