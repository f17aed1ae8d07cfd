"""Builds the LLM simulator's messages: persona system prompt + the role-flipped conversation +
this turn's note.

The prompt carries what the user may know (identity, goal, known facts, the topics they do not
know, traits, events due now). It never carries unknown_info truths, the judges' criteria or tool
results: the view it is built from holds only user/assistant text.

Laid out for provider prompt caches: what stays the same from turn to turn comes first (the
persona's system prompt), the growing conversation after it, and what is about this call only
(the turn counter, the events due now, the start cue) last, in one trailing message
(prompts/turn.md; a system message, or the start cue's user message when the user speaks first). So turn k+1's request starts with all of turn k's but that trailing note, and a
provider's cache reuses it (bench/: the reusable-prefix share). The system prompt changes only
when the goal in force does (an event falls due; a shard of the goal with `reveal: sharded`).
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from string import Template

from usersim.core.messages import Message
from usersim.lang.resources import Memo
from usersim.personas.schema import Persona
from usersim.simulator.adversary_prompt import adversary_section
from usersim.simulator.agenda import PATIENCE_BY_TRAIT
from usersim.simulator.base import SimulatorView
from usersim.simulator.guards import length_cap
from usersim.simulator.in_force import applies, constraints_in_force, required_in_force
from usersim.simulator.phrasing import humanize, item_label
from usersim.simulator.rule import condition_met
from usersim.simulator.scripted import EventStatus, event_progress
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
@lru_cache(maxsize=64)
def prompt_template(name: str) -> Template:
    """A prompt file of simulator/prompts/ as a string.Template ($name placeholders), read once per
    process (a package file; every simulated turn fills two or three)."""
    return Template((PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8"))


def _applies(
    persona: Persona, index: int, turn: int, said: dict[int, int] | None, due: dict[int, int] | None
) -> bool:
    """Whether persona.events[index] is in force at `turn` (simulator/in_force.applies)."""
    return applies(persona, index, turn, said, due)


def current_facts(persona: Persona, turn: int, due: dict[int, int] | None = None) -> dict[str, str]:
    """Known facts with the change_fact / change_mind events due by this turn applied."""
    facts: dict[str, str] = {}
    for fact in persona.known_info:
        facts.setdefault(fact.slot, fact.value)
    for i, event in enumerate(persona.events):
        if (
            event.kind in ("change_fact", "change_mind")
            and event.slot
            and event.value
            and _applies(persona, i, turn, None, due)
        ):
            facts[event.slot] = event.value
    return facts


# the goal in force (simulator/in_force.py, shared with the judges) under the names the prompt uses
current_constraints = constraints_in_force


def current_required(persona: Persona, turn: int, due: dict[int, int] | None = None) -> list[str]:
    """goal.required with add_required / drop_required events due by this turn applied."""
    return required_in_force(persona, turn, None, due)


def trigger(status: EventStatus, transcript: list[Message]) -> str | None:
    """Why a conditional (`when:`) event fell due: what the agent said or called in its reply to
    the user turn before the due turn (tool names only, never results); None for at_turn events."""
    if status.event.when is None or status.due is None:
        return None
    turn, text, tools = 0, [], []
    for m in transcript:
        if m.role == "user":
            turn += 1
        elif m.role == "assistant" and turn == status.due - 1:
            text.append(m.content or "")
            tools += [tc.name for tc in m.tool_calls]
    return condition_met(status.event, "\n".join(text), tools)


def _event_line(status: EventStatus, turn: int, transcript: list[Message] | None = None) -> str:
    e = status.event
    slot, value = e.slot, e.value
    what = {
        "change_fact": f"you change your {slot}: it is now '{value}'. Tell the assistant.",
        "change_mind": f"you change your mind{f' about {slot}' if slot else ''}{f': now {value!r}' if value else ''}.",
        "hesitate": "you hesitate and are unsure about the current proposal.",
        "say": "you bring this up.",
        "add_constraint": f"you add a requirement ({slot}: {value}). Tell the assistant.",
        "add_required": f"you also want {slot} now. Tell the assistant.",
        "drop_required": f"you no longer need {slot}. Tell the assistant.",
    }.get(e.kind, f"{e.kind} {slot or ''} {value or ''}".strip() + ".")
    since = "Now" if status.due == turn else f"Since turn {status.due} (you have not said it yet)"
    why = trigger(status, transcript or [])
    if why:  # a conditional event: tell the model what set it off so it can react to it
        since += f" (because the assistant {why.removeprefix('agent ')})"
    return f"- {since}: {what}" + (f" Say something like: {e.text}" if e.text else "")


def pending_events(view: SimulatorView, progress: list[EventStatus] | None = None) -> list[EventStatus]:
    """Events due by this turn that the user has not said yet (the model is reminded of them);
    `progress`: the view's event_progress when the caller has it already."""
    if progress is None:
        progress = event_progress(view.persona, view.transcript, view.turn)
    return [s for s in progress if s.due is not None and s.due <= view.turn and s.said_at is None]


def shards(view: SimulatorView, required: list[str]) -> tuple[list[str], int]:
    """Sharded reveal (Lost in Conversation): the required items the user knows by this turn, one
    new shard per user turn at most (turn 1 knows the first), and how many are still to come."""
    shown = required[: max(1, view.turn)]
    return shown, len(required) - len(shown)


def system_prompt(
    view: SimulatorView, *, sharded: bool = False, progress: list[EventStatus] | None = None
) -> str:
    """The simulator's system prompt for this turn (`sharded`: the goal's requirements one per turn):
    the persona and the goal in force, nothing that changes with every call (that is `turn_note`).
    `progress`: the view's event_progress when the caller has it already."""
    p = view.persona
    if progress is None:
        progress = event_progress(p, view.transcript, view.turn)
    due = {s.index: s.due for s in progress if s.due is not None}
    # the same prompt turn after turn (the layout above): built once per persona and inputs. Without
    # events or sharding nothing in it depends on the turn
    key = (
        id(p),
        tuple(due.items()),
        view.turn if p.events or sharded else None,
        view.opening_message,
        view.goal,
        sharded,
    )
    memo = _PROMPTS.table()  # forgotten when the language resources in force change
    hit = memo.get(key)
    if hit is not None and hit[0] is p:
        return str(hit[1])
    text = _system_prompt(view, p, due, sharded)
    memo[key] = (p, text)  # holds the persona: its id stays its own while the entry lives
    return text


# (id(persona), due events, turn, opening, goal, sharded) -> (persona, system prompt), for as many
# conversations in flight as a run has (the table starts over when full)
_PROMPTS = Memo(size=256)


def _system_prompt(view: SimulatorView, p: Persona, due: dict[int, int], sharded: bool) -> str:
    facts = current_facts(p, view.turn, due)
    topics = unknown_topics(p)
    traits = [line for (name, level), line in _TRAITS.items() if getattr(p.traits, name) == level]
    if p.traits.typo_prone:
        traits.append("You make typos and write like a non-native speaker.")
    patience = p.stop_rules.patience_turns or PATIENCE_BY_TRAIT[p.traits.patience]
    traits.append(f"You give up after about {patience} unhelpful assistant replies in a row.")
    traits.append(f"Keep each message under {length_cap(p)} characters.")
    constraints = current_constraints(p, view.turn, due=due, opening=view.opening_message)
    required = current_required(p, view.turn, due)
    goal = view.goal or p.goal.description
    if sharded and required:
        required, later = shards(view, required)
        goal = "You want: " + ", ".join(_item(p, item) for item in required) + "."
        if later:
            goal += " You will think of more needs later in the chat; do not stop yet."
    text = prompt_template("system").substitute(
        name=p.name,
        identity=p.identity,
        language_name=_LANGUAGE[p.language],
        goal=goal,
        required=", ".join(f"{item} ({_item(p, item)})" for item in required) or "(nothing specific)",
        reveal_rule=_REVEAL[p.reveal_policy],
        known_info="\n".join(f"- {slot}: {value}" for slot, value in facts.items()) or "- (nothing specific)",
        unknown_topics=("In particular you do not know: " + "; ".join(topics) + ".") if topics else "",
        traits="\n".join(f"- {t}" for t in traits) or "- An ordinary, reasonable user.",
        constraints=", ".join(f"{k} = {v}" for k, v in constraints.items()) or "(none)",
    )
    return text + adversary_section(view)  # a manipulative user's agenda (simulator/adversary_prompt.py)


def turn_note(view: SimulatorView, progress: list[EventStatus] | None = None) -> str:
    """What is about this call only: the turn counter and the events due now that the user has not
    said yet (the end of the request, after the conversation)."""
    events = pending_events(view, progress)
    return prompt_template("turn").substitute(
        turn=view.turn,
        max_turns=view.max_turns,
        events="\n".join(_event_line(s, view.turn, view.transcript) for s in events) or "- Nothing special.",
    )


def flipped_transcript(transcript: list[Message]) -> list[dict[str, str]]:
    """The conversation from the simulated user's side: the agent speaks as `user`, the
    simulated user's own past turns are `assistant` (what the sim model itself said)."""
    flip = {"assistant": "user", "user": "assistant"}
    return [{"role": flip[m.role], "content": m.content} for m in transcript if m.role in flip and m.content]


def build_messages(view: SimulatorView, *, sharded: bool = False) -> list[dict[str, str]]:
    """System prompt + flipped conversation + one trailing message: this turn's note, as a system
    message (or, when the user speaks first, in the user message that cues it). Everything before
    the trailing message is the next turn's request's prefix, as long as the goal in force stays."""
    progress = event_progress(view.persona, view.transcript, view.turn)  # read once for both parts
    system = system_prompt(view, sharded=sharded, progress=progress)
    messages = [{"role": "system", "content": system}] + flipped_transcript(view.transcript)
    note = turn_note(view, progress)
    if len(messages) == 1 or messages[-1]["role"] == "assistant":  # the user speaks first: cue it
        messages.append({"role": "user", "content": note + "\n" + prompt_template("start").substitute()})
    else:  # from the harness, not the chat: the agent's last reply stays the last `user` message
        messages.append({"role": "system", "content": note})
    return messages


def _item(p: Persona, item: str) -> str:
    """A required item in words: the persona's label, the language's label, or the key in words."""
    return item_label(p.language, item, p.goal.labels) or humanize(item)
