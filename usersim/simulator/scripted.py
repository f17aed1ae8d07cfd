"""Scripted persona events in an LLM-driven conversation: when each is due, whether the user said it.

An LLM user may say an event late, in other words, or never. The framework therefore tracks it
from the transcript: an event is due at its `at_turn` (or the user turn after the agent said one
of its `when.agent_says` phrases); it counts as said on the first user turn at or after that
which carries its value (numbers compared by value) or most of its text. The LLM simulator
reminds the model of due events until they are said; a constraint an event introduces applies
from the turn it was said; events due but never said, and events never reached, are reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from usersim.core.messages import Message
from usersim.personas.schema import Event, Persona
from usersim.simulator.guards import numbers, overlap


@dataclass
class EventStatus:
    """One persona event in one conversation."""

    index: int  # position in persona.events
    event: Event
    due: int | None  # user turn it is due on, None while not triggered / never reached
    said_at: int | None  # user turn that said it, None if not (yet) said

    def describe(self) -> str:
        e = self.event
        what = e.kind + (f" {e.slot}" if e.slot else "") + (f" = {e.value!r}" if e.value else "")
        if e.text:
            what += f" ('{e.text}')"
        return f"event #{self.index} {what}"


def silent(event: Event) -> bool:
    """Events with nothing checkable to say (a silent `text: ""`, or a bare hesitate) count as said when due."""
    if event.text == "":
        return True
    return not event.value and not event.text and event.kind in ("hesitate", "change_mind")


def said_in(event: Event, text: str) -> bool:
    """Whether a user turn carries the event: its value (numbers by value) or most of its text."""
    low = (text or "").lower()
    if event.value:
        value = event.value.strip().lower()
        if value and value in low:
            return True
        nums = numbers(value)
        if nums and nums <= numbers(text):
            return True
        if not nums and overlap(value, text) >= 0.6:
            return True
    if event.text:
        if event.text.strip().lower() in low or overlap(event.text, text) >= 0.4:
            return True
    if event.kind in ("add_required", "drop_required") and event.slot and not event.value:
        return event.slot.lower() in low
    return False


def _turns(transcript: list[Message]) -> list[tuple[int, str, str, list[str]]]:
    """(user turn, role, text, tools called) of the user/assistant messages; an assistant message
    belongs to the turn of the user message it answers."""
    out, turn = [], 0
    for m in transcript:
        if m.role == "user":
            turn += 1
        tools = [tc.name for tc in m.tool_calls] if m.role == "assistant" else []
        if m.role in ("user", "assistant") and (m.content or tools):
            out.append((turn, m.role, m.content or "", tools))
    return out


def _due(event: Event, turns: list[tuple[int, str, str, list[str]]]) -> int | None:
    if event.at_turn is not None:
        return event.at_turn
    when = event.when
    if when is None:
        return None
    phrases = [" ".join(p.lower().split()) for p in when.agent_says]
    for turn, role, text, tools in turns:
        if role != "assistant":
            continue
        low = " ".join(text.lower().split())
        if any(p in low for p in phrases) or any(t in tools for t in when.agent_calls):
            return turn + 1  # fires on the user turn after the agent's reply
    return None


def event_progress(persona: Persona, transcript: list[Message], turns_taken: int) -> list[EventStatus]:
    """Every persona event with its due turn and the turn that said it (transcript: live messages)."""
    turns = _turns(transcript)
    out = []
    for i, event in enumerate(persona.events):
        due = _due(event, turns)
        said_at = None
        if due is not None and due <= turns_taken:
            if silent(event):
                said_at = due
            else:
                said_at = next(
                    (t for t, role, text, _ in turns if role == "user" and t >= due and said_in(event, text)),
                    None,
                )
        out.append(EventStatus(index=i, event=event, due=due, said_at=said_at))
    return out


def said_turns(persona: Persona, transcript: list[Message], turns_taken: int) -> dict[int, int]:
    """persona.events index -> the user turn that said it (only events said)."""
    return {
        s.index: s.said_at for s in event_progress(persona, transcript, turns_taken) if s.said_at is not None
    }
