"""What a fidelity verdict says about blame: where the violation happened and what the agent did with it.

Every fidelity verdict carries `details` the run's blame reads (docs/design.md "Blame from evidence"):

    precision      "high"     : a violation that can mislead the agent and that the agent then used —
                                a leaked truth the user could not know, a constraint-breaking proposal
                                the user accepted, a quantity the user invented;
                   "advisory" : a heuristic finding (wording, character overlap, length, facts per turn)
                                or a violation the agent never used: shown, never excusing the agent.
    turn           user turn (1-based) of the violation, None for a pass;
    message_index  transcript index of the violating user message, None for a pass;
    kind           leak | character | early_stop | swayed | language | length | invented | reveal |
                   events | traits | patience | llm;
    caused         what the agent could have used (the leaked truth, the accepted proposal, the
                   invented value) and where it used it; "" when nothing.

Scripted text is the persona's own: the opening message (the case's or the persona's) and the
text of the persona's scripted events are never a violation, and count as said before any later
turn (a value the opening states is not invented when the user repeats it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.personas.schema import Persona
from usersim.simulator.guards import numbers

Precision = Literal["high", "advisory"]


@dataclass
class Use:
    """Where the agent used a value after the user said it."""

    message_index: int
    where: str  # "reply" or "tool NAME arguments"

    def describe(self) -> str:
        return f"the agent used it at message {self.message_index} ({self.where})"


@dataclass
class Conversation:
    """The live conversation as the fidelity checks read it."""

    transcript: list[Message]
    live: list[tuple[int, Message]]  # (transcript index, user/assistant message with text)
    user_turn_of: dict[int, int] = field(default_factory=dict)  # transcript index -> user turn
    scripted: list[str] = field(default_factory=list)  # the persona's own texts (opening, events)
    exempt: set[int] = field(default_factory=set)  # indices of scripted user turns said verbatim

    def turn(self, index: int) -> int | None:
        return self.user_turn_of.get(index)

    def own_text(self, index: int, text: str) -> str:
        """The simulator's own words in a user message: a scripted opening is none of them, and a
        scripted event's text inside a turn is cut out (it is the persona's)."""
        if index in self.exempt:
            return ""
        out = text
        for s in self.scripted:
            if s and s.lower() in out.lower():
                start = out.lower().index(s.lower())
                out = out[:start] + " " + out[start + len(s) :]
        return out.strip()

    def heard_before(self, index: int) -> list[str]:
        """Every text in the conversation before `index`, with the persona's scripted texts."""
        return self.scripted + [m.content for j, m in self.live if j < index]

    def used_after(self, index: int, value: str) -> Use | None:
        """The first agent reply or tool call after `index` that carries `value` (numbers compared by
        value, words case-insensitively)."""
        wanted = value.strip().lower()
        nums = numbers(value)
        if not wanted:
            return None

        def carries(text: str) -> bool:
            low = text.lower()
            return wanted in low or bool(nums and nums <= numbers(text))

        for j, m in enumerate(self.transcript):
            if j <= index or m.role != "assistant":
                continue
            for tc in m.tool_calls:
                if carries(_args_text(tc.arguments)):
                    return Use(j, f"tool {tc.name} arguments")
            if m.content and carries(m.content):
                return Use(j, "reply")
        return None

    def acted_on(self, proposal_index: int, after: int) -> Use | None:
        """The first tool call after `after` whose argument values the proposal at `proposal_index` named."""
        proposal = self.transcript[proposal_index].content.lower()
        for j, m in enumerate(self.transcript):
            if j <= after or m.role != "assistant":
                continue
            for tc in m.tool_calls:
                for value in _arg_values(tc.arguments):
                    if len(value) >= 2 and value.lower() in proposal:
                        return Use(j, f"tool {tc.name} with {value!r}")
        return None


def _args_text(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _arg_values(arguments: object) -> list[str]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return [arguments]
    out: list[str] = []
    if isinstance(arguments, dict):
        for v in arguments.values():
            out += _arg_values(v) if isinstance(v, dict | list) else [str(v)]
    elif isinstance(arguments, list):
        for v in arguments:
            out += _arg_values(v) if isinstance(v, dict | list) else [str(v)]
    return out


def scripted_texts(persona: Persona, case: Case) -> list[str]:
    """The persona's own words: its opening message (the case's overrides it) and its events' texts."""
    texts = [case.input.message or persona.opening_message or ""]
    texts += [e.text for e in persona.events if e.text]
    return [t.strip() for t in texts if t and t.strip()]


def read_conversation(
    transcript: list[Message], case: Case, state: JudgeState, persona: Persona
) -> Conversation:
    """The live part of the transcript, its user turns and the persona's scripted texts."""
    live = [
        (i, m)
        for i, m in enumerate(transcript)
        if i >= state.history_len and m.role in ("user", "assistant") and m.content
    ]
    turn_of: dict[int, int] = {}
    turn = 0
    for i, m in enumerate(transcript):
        if i >= state.history_len and m.role == "user":
            turn += 1
            turn_of[i] = turn
    conv = Conversation(transcript, live, turn_of, scripted_texts(persona, case))
    # the opening and a replayed prefix (case.input.script) are said verbatim in the first user turns
    lines = [case.input.message or persona.opening_message or "", *case.input.script]
    users = [i for i, m in live if m.role == "user"]
    for i, line in zip(users, lines, strict=False):
        if not line.strip() or transcript[i].content.strip() != line.strip():
            break
        conv.exempt.add(i)
    conv.scripted += [s.strip() for s in case.input.script if s.strip()]
    return conv


def fidelity_verdict(
    name: str,
    ok: bool,
    reason: str,
    *,
    kind: str,
    conv: Conversation | None = None,
    index: int | None = None,
    precision: Precision = "advisory",
    caused: str = "",
    verdict: str | None = None,
) -> Verdict:
    """One fidelity verdict with its blame details; never counts toward status."""
    return Verdict(
        judge=name,
        verdict=verdict or ("pass" if ok else "fail"),  # type: ignore[arg-type]
        reason=reason,
        evidence_turn=index,
        counts_toward_status=False,
        details={
            "precision": precision if not ok else "advisory",
            "turn": conv.turn(index) if conv is not None and index is not None else None,
            "message_index": index,
            "kind": kind,
            "caused": caused,
        },
    )


def violation(
    name: str,
    reason: str,
    *,
    kind: str,
    conv: Conversation,
    index: int,
    caused: str,
    use: Any,
    unused: str = "the agent never used it",
) -> Verdict:
    """A failed fidelity verdict: high precision when the agent then used what the user said
    (`use`, a Use with `describe()`), else advisory with why it cannot have caused anything."""
    if use is not None:
        return fidelity_verdict(
            name,
            False,
            f"{reason}; {use.describe()}",
            kind=kind,
            conv=conv,
            index=index,
            precision="high",
            caused=f"{caused}; {use.describe()}",
        )
    return fidelity_verdict(
        name, False, f"{reason} ({unused})", kind=kind, conv=conv, index=index, caused=caused
    )


def is_high(v: Verdict) -> bool:
    return (v.details or {}).get("precision") == "high"


def error_verdict(name: str, kind: str, exc: BaseException) -> Verdict:
    """A fidelity check that crashed: an `error` verdict on that check, never a suspect."""
    return fidelity_verdict(
        name, False, f"check crashed: {type(exc).__name__}: {exc}", kind=kind, verdict="error"
    )
