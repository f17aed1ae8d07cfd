"""The rule (agenda) simulator: a deterministic simulated user that needs no model.

It keeps no state between calls: each turn it replays the agent's replies in the transcript
through the persona's agenda (simulator/agenda.py), so a conversation can be branched or resumed
from any checkpoint, and the same seed gives the same conversation byte for byte.
"""

from __future__ import annotations

import random
from typing import Literal

from usersim.core.messages import Message
from usersim.simulator.agenda import Agenda, decide
from usersim.simulator.base import SimulatorTurn, SimulatorView
from usersim.simulator.phrasing import Act, render


def agent_replies(transcript: list[Message]) -> list[str]:
    """The agent's text after each user message: index k-1 answers user turn k."""
    replies: list[str] = []
    for msg in transcript:
        if msg.role == "user":
            replies.append("")
        elif msg.role == "assistant" and replies and msg.content:
            replies[-1] = (replies[-1] + "\n" + msg.content).strip()
    return replies


class RuleSimulator:
    """SPEC `rule` or `rule:SALT` (the salt changes the wording choices, not the decisions)."""

    def __init__(self, spec: str = "rule") -> None:
        self.spec = spec
        self.salt = spec.split(":", 1)[1] if ":" in spec else ""

    def _rng(self, view: SimulatorView) -> random.Random:
        # str seeds are hashed with sha512 by random.Random: stable across processes
        return random.Random(f"usersim-rule|{self.salt}|{view.case_id}|{view.seed}|{view.turn}")

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        """The user's next message, or a goal_met / gave_up stop."""
        persona = view.persona
        agenda = Agenda.start(persona)
        opening_acts = self._opening(view, agenda)
        if view.turn <= 1:
            return self._turn(view, agenda, opening_acts, None, "opening")
        replies = agent_replies(view.transcript)
        acts: list[Act] = []
        stop = None
        for turn in range(2, view.turn + 1):
            reply = replies[turn - 2] if turn - 2 < len(replies) else ""
            obs = agenda.observe(reply, turn - 1)  # the agent's reply within user turn turn-1
            events = [e for e in persona.events if e.at_turn == turn]
            upcoming = any(turn < e.at_turn <= view.max_turns for e in persona.events)
            acts, stop = decide(agenda, obs, events, upcoming)
        return self._turn(view, agenda, acts, stop, "")

    def _opening(self, view: SimulatorView, agenda: Agenda) -> list[Act]:
        persona = view.persona
        event_acts = [agenda.apply_event(e) for e in persona.events if e.at_turn == 1]
        opening = view.opening_message or persona.opening_message
        if opening:  # the case's 初始消息 is said verbatim
            return [Act("opening", text=opening)]
        acts = [Act("opening_fallback", value=view.goal or persona.goal.description)] + event_acts
        if persona.reveal_policy == "all_at_once":
            for slot in agenda.unrevealed():
                acts.append(Act("volunteer", slot=slot, value=agenda.facts[slot]))
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
            message = render(acts, language=persona.language, traits=persona.traits, rng=self._rng(view))
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
        return SimulatorTurn(
            message=message,
            stop=stop,
            reason=reason,
            meta={
                "acts": [a.kind for a in acts],
                "pending": agenda.pending,
                "delivered": dict(agenda.delivered),
                "revealed": sorted(agenda.revealed),
                "unhelpful": agenda.unhelpful,
                "constraints": dict(agenda.constraints),
            },
        )
