"""The rule (agenda) simulator: a deterministic simulated user that needs no model.

It keeps no state between calls: each turn it replays the agent's replies in the transcript
through the persona's agenda (simulator/agenda.py), so a conversation can be branched or resumed
from any checkpoint, and the same seed gives the same conversation byte for byte.
"""

from __future__ import annotations

import random
from typing import Literal

from usersim.core.events import SimEvent
from usersim.core.messages import Message
from usersim.personas.schema import Event
from usersim.simulator.agenda import Agenda, decide
from usersim.simulator.base import SimulatorTurn, SimulatorView
from usersim.simulator.phrasing import Act, render


def agent_replies(transcript: list[Message]) -> list[str]:
    """The agent's text after each user message: index k-1 answers user turn k."""
    return [text for text, _tools in agent_moves(transcript)]


def agent_moves(transcript: list[Message]) -> list[tuple[str, list[str]]]:
    """(the agent's text, the tools it called) after each user message: index k-1 answers user turn k."""
    moves: list[tuple[str, list[str]]] = []
    for msg in transcript:
        if msg.role == "user":
            moves.append(("", []))
        elif msg.role == "assistant" and moves:
            text, tools = moves[-1]
            if msg.content:
                text = (text + "\n" + msg.content).strip()
            moves[-1] = (text, tools + [tc.name for tc in msg.tool_calls])
    return moves


def condition_met(event: Event, text: str, tools: list[str]) -> str | None:
    """What in the agent's reply triggers a conditional event (a phrase it said, a tool it called), or None."""
    if event.when is None:
        return None
    low = " ".join(text.lower().split())
    for phrase in event.when.agent_says:
        if " ".join(phrase.lower().split()) in low:
            return f"agent said '{phrase}'"
    for tool in event.when.agent_calls:
        if tool in tools:
            return f"agent called {tool}"
    return None


def due_events(agenda: Agenda, turn: int, reply: str, tools: list[str]) -> tuple[list[Event], list[str]]:
    """The persona events of user turn `turn`: scripted ones at that turn, then conditional ones whose
    condition the agent's previous reply (text, tool calls) met, each once; and why each fired."""
    events = [e for e in agenda.persona.events if e.at_turn == turn]
    triggered: list[str] = []
    for i, event in enumerate(agenda.persona.events):
        if i not in agenda.fired and (why := condition_met(event, reply, tools)):
            agenda.fired.add(i)
            events.append(event)
            triggered.append(f"events.{i} ({event.kind}): {why}")
    return events, triggered


class RuleSimulator:
    """SPEC `rule` or `rule:SALT` (the salt changes the wording choices, not the decisions)."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    def __init__(self, spec: str = "rule") -> None:
        self.spec = spec
        self.salt = spec.split(":", 1)[1] if ":" in spec else ""

    def _rng(self, view: SimulatorView) -> random.Random:
        # str seeds are hashed with sha512 by random.Random: stable across processes
        return random.Random(f"usersim-rule|{self.salt}|{view.case_id}|{view.seed}|{view.turn}")

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        """The user's next message, or a goal_met / gave_up stop."""
        return self.respond(view)

    def respond(self, view: SimulatorView) -> SimulatorTurn:
        """`next_turn` without an event loop (it waits on nothing): persona lint probes with it."""
        persona = view.persona
        agenda = Agenda.start(persona, view.opening_message or persona.opening_message)
        if (
            persona.adversary is not None
        ):  # a manipulative user stops on its own terms (simulator/adversary.py)
            rules = persona.stop_rules.model_copy(update={"stop_when_goal_met": False})
            agenda.persona = persona.model_copy(update={"stop_rules": rules})
        opening_acts = self._opening(view, agenda)
        if view.turn <= 1 and persona.adversary is not None:
            return self._adversary(view, agenda, [], opening_acts, None, "opening")
        if view.turn <= 1:
            return self._turn(view, agenda, opening_acts, None, "opening")
        moves = agent_moves(view.transcript)
        acts: list[Act] = []
        stop = None
        triggered: list[str] = []
        said = [m.content for m in view.transcript if m.role == "user" and m.content]
        for turn in range(2, view.turn + 1):
            reply, tools = moves[turn - 2] if turn - 2 < len(moves) else ("", [])
            # the agent's reply within user turn turn-1, read with what the user had said by then
            obs = agenda.observe(reply, turn - 1, said[: turn - 1])
            events, triggered = due_events(agenda, turn, reply, tools)
            upcoming = any(
                e.at_turn is not None and turn < e.at_turn <= view.max_turns for e in persona.events
            )
            acts, stop = decide(agenda, obs, events, upcoming)
        if persona.adversary is not None:  # a manipulative user pushes its tactics (simulator/adversary.py)
            return self._adversary(view, agenda, moves, acts, stop, "; ".join(triggered))
        return self._turn(view, agenda, acts, stop, "; ".join(triggered))

    def _adversary(
        self,
        view: SimulatorView,
        agenda: Agenda,
        moves: list[tuple[str, list[str]]],
        acts: list[Act],
        stop: Literal["goal_met", "gave_up"] | None,
        note: str,
    ) -> SimulatorTurn:
        """A manipulative user's turn: its push (simulator/adversary.py), or the agenda's move before it."""
        from usersim.simulator.adversary import play

        push = play(view, agenda, moves, acts, stop)
        if push is None:
            return self._turn(view, agenda, acts, stop, note)
        turn = self._turn(view, agenda, push.acts, None, push.reason or note)
        turn.stop, turn.events = push.stop, turn.events + push.events
        turn.meta.update(push.meta)
        return turn

    def _opening(self, view: SimulatorView, agenda: Agenda) -> list[Act]:
        persona = view.persona
        event_acts = [agenda.apply_event(e) for e in persona.events if e.at_turn == 1]
        opening = view.opening_message or persona.opening_message
        if opening:  # the case's 初始消息 is said verbatim
            return [Act("opening", text=opening)]
        acts = [Act("opening_fallback", value=view.goal or persona.goal.description)] + event_acts
        if persona.reveal_policy == "all_at_once":
            for slot in agenda.unrevealed():
                acts.append(agenda.fact_act("volunteer", slot))
                agenda.revealed.add(slot)
        return acts

    def _turn(
        self,
        view: SimulatorView,
        agenda: Agenda,
        acts: list[Act],
        stop: Literal["goal_met", "gave_up"] | None,
        note: str,
    ) -> SimulatorTurn:
        persona = view.persona
        if acts and acts[0].kind == "opening":
            message = acts[0].text or ""
        else:
            message = render(
                acts,
                language=persona.language,
                traits=persona.traits,
                rng=self._rng(view),
                earlier=[m.content for m in view.transcript if m.role == "user" and m.content],
                labels=persona.goal.labels,
            )
        reason = note
        if stop == "goal_met":
            reason = "all required items delivered: " + ", ".join(
                f"{item} (agent reply in turn {t})" for item, t in agenda.delivered.items()
            )
        elif stop == "gave_up":
            reason = (
                f"{agenda.unhelpful} consecutive unhelpful agent turns (patience {agenda.patience}); "
                f"still missing: {', '.join(agenda.pending) or 'nothing'}"
            )
        events = []
        if agenda.decision is not None:  # the verdict on the agent's proposal, for sim_events
            kind, why = agenda.decision
            events.append(SimEvent(turn=view.turn, kind=kind, detail=why))  # type: ignore[arg-type]
        return SimulatorTurn(
            message=message,
            stop=stop,
            reason=reason,
            events=events,
            meta={
                "acts": [a.kind for a in acts],
                "pending": agenda.pending,
                "delivered": dict(agenda.delivered),
                "revealed": sorted(agenda.revealed),
                "unhelpful": agenda.unhelpful,
                "constraints": dict(agenda.constraints),
            },
        )
