"""A person in the user's seat (`usersim play`): the simulator protocol, played from the terminal.

The person reads the persona card and the goal, then after each agent turn what the agent said,
which tools it called with which arguments, what they returned and which state rows changed
(simulator/human_screen.py), and types the next user turn. The seat can be shared with the case's
own simulator: `take_over=N` lets it play turns 1..N-1, `/hand-back` gives it the rest. Each turn
says who played it (`SimulatorTurn.by`), and `spec` names who sat in the seat (`human`, or
`human+rule` once the simulator played a turn), which the record keeps as its `simulator`.

Commands at the prompt: `/done [last words]` ends with the goal reached (goal_met), `/stop [why]`
ends without it (user_stopped), `/hand-back`, `/card`, `/help`; the persona's scripted events are
shown when due (simulator/scripted.py reads them as for the LLM user). End of input is `/stop`; a
Ctrl-C ends the conversation after the turn under way (`interrupt`), a second one aborts it.
"""

from __future__ import annotations

from typing import Any, Literal, TextIO

from usersim.core.events import SimEvent
from usersim.core.registry import did_you_mean
from usersim.simulator import human_screen as screen
from usersim.simulator.base import Observed, SimulatorTurn, SimulatorView, UserSimulator
from usersim.simulator.human_input import INTERRUPTED, LineReader
from usersim.simulator.scripted import event_progress

Seat = Literal["human", "simulator"]
INTERRUPT_NOTE = "--- Ctrl-C: the conversation ends here; the turns before it are judged and kept ---\n"


class HumanSimulator:
    """SPEC `human` (label only: `usersim play` builds it with its terminal and its co-simulator)."""

    cooperative = False  # waits on a person: the run's turn lock is given up meanwhile (core/turns.py)

    def __init__(
        self,
        *,
        auto: UserSimulator,
        reader: LineReader,
        out: TextIO,
        take_over: int = 1,
        title: str = "",
        keys: dict[str, str] | None = None,
    ) -> None:
        self.auto = auto  # plays turns before take_over and after /hand-back
        self.reader = reader
        self.out = out
        self.take_over = take_over
        self.title = title
        self.keys = keys or {}  # table -> key field, to name the rows a tool changed
        self.spec = "human"
        self.handed_back: int | None = None  # the turn the person handed the seat back at
        self.interrupts = 0
        self._shown = 0  # transcript messages already on screen
        self._shown_events = 0
        self._state: dict[str, list[dict[str, Any]]] | None = None
        self._carded = False
        self._played: set[int] = set()  # user turns this seat played (the person or its simulator)

    # --- the screen --------------------------------------------------------------------------------
    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def observe(self, seen: Observed) -> None:
        """Show what happened since the last turn: the agent's replies, its tool calls and their
        effects on the state (the graph calls this before each user turn)."""
        new = seen.messages[self._shown :]
        turn = sum(m.role == "user" for m in seen.messages[: self._shown])
        for m in new:  # user turns the seat did not play (a promoted case's recorded turns) are shown too
            turn += m.role == "user"
            if m.role == "user" and turn not in self._played:
                self._write(screen.simulator_said(turn, "script", m.content))
        events = {e.message_index: e for e in seen.tool_trace[self._shown_events :]}
        changes = screen.state_changes(self._state, seen.state, self.keys) if self._state is not None else []
        if any(m.role != "user" for m in new):
            self._write(screen.agent_turn(new, events, self._shown, changes))
        self._shown = len(seen.messages)
        self._shown_events = len(seen.tool_trace)
        self._state = seen.state

    def seat(self, turn: int) -> Seat:
        """Who plays `turn`."""
        if self.handed_back is not None or turn < self.take_over:
            return "simulator"
        return "human"

    # --- the protocol ------------------------------------------------------------------------------
    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        if not self._carded:
            self._carded = True
            self._write(self._card(view))
        self._played.add(view.turn)
        if self.interrupts:
            self._write(INTERRUPT_NOTE)
            return self._stop(view, "user_stopped", "interrupted (Ctrl-C); the turns before it are kept")
        if self.seat(view.turn) == "simulator":
            return await self._simulated(view, [])
        events = []
        if view.turn == self.take_over and self.take_over > 1:
            events.append(
                self._seat_event(view.turn, f"the person takes the user's seat at turn {view.turn}")
            )
            self._write(f"--- you take the user's seat at turn {view.turn} ---\n")
        turn = await self._typed(view)
        turn.events = events + turn.events
        return turn

    def _card(self, view: SimulatorView) -> str:
        return screen.card(
            case_id=view.case_id,
            title=self.title,
            persona=view.persona,
            goal=view.goal,
            max_turns=view.max_turns,
            take_over=self.take_over,
            auto=self.auto.spec,
        )

    async def _simulated(self, view: SimulatorView, events: list[SimEvent]) -> SimulatorTurn:
        self.spec = f"human+{self.auto.spec}"
        move = await self.auto.next_turn(view)
        if move.message and (move.stop is None or move.closing):
            self._write(screen.simulator_said(view.turn, self.auto.spec, move.message))
        if move.stop is not None:
            self._write(f"--- {self.auto.spec} ended the conversation: {move.stop} ({move.reason}) ---\n")
        return move.model_copy(update={"by": "simulator", "events": events + move.events})

    async def _typed(self, view: SimulatorView) -> SimulatorTurn:
        """The person's turn: a message, or a command."""
        opening = view.opening_message or view.persona.opening_message
        progress = event_progress(view.persona, view.transcript, view.turn)
        self._write(screen.due([s.event for s in progress if s.due is not None and s.said_at is None]))
        while True:
            self._write(screen.prompt(view.turn, view.max_turns))
            line = await self.reader.readline()
            if line not in (None, INTERRUPTED) and not self.reader.echoes:
                self._write(f"{line}\n")
            if line is None:
                self._write("\n")
                return self._stop(view, "user_stopped", "end of input (treated as /stop)")
            if line == INTERRUPTED:
                self._write("\n" + INTERRUPT_NOTE)
                return self._stop(view, "user_stopped", "interrupted (Ctrl-C); the turns before it are kept")
            text = line.strip()
            if not text and view.turn == 1 and opening:
                self._write(f"(sent the opening message) {opening}\n")
                return SimulatorTurn(message=opening, by="human", reason="the case's opening message")
            if not text:
                continue
            if not text.startswith("/"):
                return SimulatorTurn(message=text, by="human")
            command, _, rest = text.partition(" ")
            rest = rest.strip()
            if command == "/done":
                why = "the person said the goal was reached (/done)"
                return self._stop(view, "goal_met", why, closing=rest)
            if command == "/stop":
                return self._stop(
                    view, "user_stopped", f"the person stopped (/stop){': ' + rest if rest else ''}"
                )
            if command == "/hand-back":
                self.handed_back = view.turn
                self._write(f"--- {self.auto.spec} plays from turn {view.turn} on ---\n")
                event = self._seat_event(
                    view.turn, f"the person handed the seat back to {self.auto.spec} at turn {view.turn}"
                )
                return await self._simulated(view, [event])
            if command == "/card":
                self._write(self._card(view))
                continue
            if command == "/help":
                self._write(screen.help_text())
                continue
            hint = did_you_mean(command, set(screen.COMMANDS))
            self._write(f"unknown command {command}.{hint} Commands: {', '.join(screen.COMMANDS)}\n")

    def _stop(
        self, view: SimulatorView, stop: Literal["goal_met", "user_stopped"], reason: str, closing: str = ""
    ) -> SimulatorTurn:
        event = SimEvent(turn=view.turn, kind="stop_accepted", detail=f"{stop}: {reason}")
        return SimulatorTurn(
            message=closing or None,
            stop=stop,
            closing=bool(closing),
            reason=reason,
            by="human",
            events=[event],
        )

    @staticmethod
    def _seat_event(turn: int, detail: str) -> SimEvent:
        return SimEvent(turn=turn, kind="seat", detail=detail)

    def interrupt(self) -> None:
        """Ctrl-C (the play command's SIGINT handler): the first ends the conversation after the turn
        under way — at the prompt at once — and keeps what finished; a second one aborts."""
        self.interrupts += 1
        if self.interrupts > 1 or not self._carded:  # a second one, or nothing played yet to keep
            raise KeyboardInterrupt
        self.reader.interrupt()  # at the prompt: the wait ends now; else the next turn stops
