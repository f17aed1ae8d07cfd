"""What a user did in one conversation, measured the same way for a simulated and a human user
(`usersim realism`): each trait is one number per conversation, or None when it does not apply.

Every live user turn counts, its opening and a persona's scripted lines included: that is what
the user said, whoever wrote it. When a record marks who played each turn (`by: human | simulator` on its user messages, `usersim play`), only the turns of the side
being measured count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.record import RunRecord, messages_of
from usersim.judges.base import JudgeState
from usersim.judges.fidelity_evidence import Conversation, read_conversation
from usersim.personas.schema import Persona

Side = str  # "simulated" | "human"


@dataclass(frozen=True)
class Trait:
    key: str
    label: str
    unit: str
    meaning: str
    rate: bool = False  # a share of conversations (0/1 each): shown in percent


TRAITS: tuple[Trait, ...] = (
    Trait(
        "turns_to_goal",
        "turns to goal",
        "user turns",
        "user turns until every required goal item was delivered (conversations that got there)",
    ),
    Trait(
        "words_per_turn",
        "words per turn",
        "words",
        "mean words per user turn (a Chinese character counts as a word)",
    ),
    Trait(
        "questions_per_turn",
        "questions per turn",
        "questions",
        "mean questions the user asks per turn (the language layer's asking acts)",
    ),
    Trait(
        "facts_unasked",
        "facts revealed unasked",
        "facts",
        "persona known facts the user first stated when the agent's previous reply had not asked for them",
    ),
    Trait(
        "accepts_breaking",
        "accepts a constraint-breaking proposal",
        "share",
        rate=True,
        meaning="conversations where the user accepted a proposal breaking the persona's constraints, "
        "of those with such a proposal",
    ),
    Trait(
        "gave_up",
        "gives up",
        "share",
        rate=True,
        meaning="conversations the user ended by giving up (stop reason gave_up / user_stopped)",
    ),
    Trait(
        "polite_share",
        "polite turns",
        "share",
        rate=True,
        meaning="user turns with a politeness marker (lang/<code>/register.yaml polite)",
    ),
    Trait(
        "casual_share",
        "casual turns",
        "share",
        rate=True,
        meaning="user turns with a casual marker and no polite one (register.yaml casual)",
    ),
    Trait(
        "in_language",
        "turns in the persona's language",
        "share",
        rate=True,
        meaning="user turns written in the persona's language",
    ),
)
SUCCESS = Trait(
    "agent_success",
    "agent success",
    "share",
    rate=True,
    meaning="conversations the agent passed, of those passed, failed or errored",
)
GIVE_UP_STOPS = ("gave_up", "user_stopped")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@dataclass
class Measured:
    """One conversation's traits."""

    record_id: str
    case_id: str
    persona: str | None
    side: Side
    values: dict[str, float | None] = field(default_factory=dict)


def words(text: str) -> int:
    """Words of a turn: Latin-script words plus one per Chinese character."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


def _by(m: object) -> str | None:
    return getattr(m, "by", None)


def _user_turns(record: RunRecord, conv: Conversation, side: Side) -> list[tuple[int, str]]:
    """(transcript index, text) of the live user turns played by `side`: everything that user
    said, the opening and a persona's scripted lines included (a simulated user says them as its
    own; a person in `usersim play` types or keeps them)."""
    marked = any(_by(m) for m in record.transcript if m.role == "user")
    out = []
    for i, m in conv.live:
        if m.role != "user" or not (own := m.content.strip()):
            continue
        if marked and (_by(record.transcript[i]) == "human") != (side == "human"):
            continue
        out.append((i, own))
    return out


def measure(record: RunRecord, case: Case, persona: Persona, side: Side) -> Measured:
    """Every trait of one conversation (None where it does not apply)."""
    messages = messages_of(record)
    state = JudgeState(history_len=record.history_len, turns=record.turns)
    conv = read_conversation(messages, case, state, persona)
    turns = _user_turns(record, conv, side)
    out = Measured(record.id, record.case_id, record.persona, side)
    v = out.values
    v["turns_to_goal"] = _turns_to_goal(persona, conv, messages)
    v["words_per_turn"] = _mean([words(t) for _, t in turns])
    v["questions_per_turn"] = _mean([_questions(t) for _, t in turns])
    v["facts_unasked"] = float(_facts_unasked(persona, conv, turns)) if turns else None
    v["accepts_breaking"] = _accepts_breaking(persona, conv, messages, record.turns, {i for i, _ in turns})
    stop = record.stop.reason if record.stop else record.stop_reason
    v["gave_up"] = 1.0 if stop in GIVE_UP_STOPS else 0.0
    polite = [_marked(t, "polite", persona.language) for _, t in turns]
    casual = [
        _marked(t, "casual", persona.language) and not p for (_, t), p in zip(turns, polite, strict=True)
    ]
    v["polite_share"] = _mean([float(p) for p in polite])
    v["casual_share"] = _mean([float(c) for c in casual])
    v["in_language"] = _mean([_in_language(t, persona.language) for _, t in turns])
    v["agent_success"] = {"passed": 1.0, "failed": 0.0, "error": 0.0}.get(record.status)
    return out


def _mean(values: list[float] | list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _questions(text: str) -> int:
    from usersim.lang.acts import questions

    return len(questions(text))


def _marked(text: str, key: str, language: str) -> bool:
    from usersim.lang.phrases import find

    return find(text, "register", key, codes=[language]) is not None


def _in_language(text: str, language: str) -> float:
    from usersim.simulator.guards import language_switch

    return 0.0 if language_switch(text, language) else 1.0


def _turns_to_goal(persona: Persona, conv: Conversation, messages: list[Message]) -> float | None:
    """The user turn whose agent reply completed the goal's required items (None: never, or a
    goal with nothing required)."""
    from usersim.simulator.in_force import constraints_in_force, opening_of
    from usersim.simulator.signals import undelivered

    if not persona.goal.required:
        return None
    opening = opening_of(persona, [m for _, m in conv.live])
    replies: list[str] = []
    turn = 0
    for i, m in conv.live:
        if m.role == "user":
            turn = conv.turn(i) or turn
        elif m.role == "assistant":
            replies.append(m.content)
            if not undelivered(
                persona.goal, replies, constraints_in_force(persona, max(turn, 1), opening=opening)
            ):
                return float(max(turn, 1))
    return None


def _facts_unasked(persona: Persona, conv: Conversation, turns: list[tuple[int, str]]) -> int:
    """Known facts whose first mention by the user came when the agent's previous reply did not
    ask for them (the rule simulator's asked-about matcher, simulator/slots.py)."""
    from usersim.simulator.slots import matcher_for

    matcher = matcher_for(persona)
    told: set[str] = set()
    unasked = 0
    for i, own in turns:
        low = own.lower()
        before = next((x.content for j, x in reversed(conv.live) if j < i and x.role == "assistant"), "")
        asked = set(matcher.asked(before)) if before else set()
        for f in persona.known_info:
            value = f.value.strip().lower()
            if not value or f.slot in told or value not in low:
                continue
            told.add(f.slot)
            unasked += f.slot not in asked
    return unasked


def _accepts_breaking(
    persona: Persona, conv: Conversation, messages: list[Message], turns_taken: int, own_turns: set[int]
) -> float | None:
    """1 when the user accepted a proposal that breaks a constraint in force, 0 when every such
    proposal was declined, None when the agent made none (as judges/fidelity_rules.check_swayed)."""
    from usersim.lang.acts import accepts
    from usersim.simulator.in_force import constraints_in_force, opening_of
    from usersim.simulator.scripted import said_turns
    from usersim.simulator.signals import constraint_violations

    if not persona.goal.constraints and not persona.events:
        return None
    said = said_turns(persona, [m for _, m in conv.live], turns_taken)
    opening = opening_of(persona, [m for _, m in conv.live])
    live = conv.live
    offered = False
    user_turn = 0
    for pos, (_, m) in enumerate(live):
        if m.role == "user":
            user_turn += 1
            continue
        in_force = constraints_in_force(persona, max(user_turn, 1), said, opening=opening)
        if not constraint_violations(in_force, m.content, persona.language):
            continue
        nxt = next(((j, u) for j, u in live[pos + 1 :] if u.role == "user"), None)
        if nxt is None or nxt[0] not in own_turns:
            continue
        offered = True
        if accepts(nxt[1].content):
            return 1.0
    return 0.0 if offered else None
