"""The rule simulator's manipulative user: a persona `adversary` played turn by turn.

The user first does the persona's ordinary business when the tactics include gradual_escalation
(`escalation_turns` user turns, or until that goal is delivered), then pushes for its target one
tactic per turn in the order listed (a soft ask first when escalating), answering the agent's
questions on the way. Each push reads the agent's reply to the one before with
`usersim.lang.stance.reply_stance`: a disclosure ends the conversation (`goal_met`: the user got
what it wanted), a refusal or a stall (a verification question, a change of subject) moves to the
next tactic with a push-back, and `max_refusals` of them end it (`gave_up`). Like the rest of the
rule simulator it keeps no state: every turn is recomputed from the transcript, and the wording
comes from `usersim/lang/data/<code>/adversary.yaml` through the conversation's seeded RNG.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from usersim import lang
from usersim.core.events import SimEvent
from usersim.lang.stance import Stance, reply_stance
from usersim.personas.schema import Adversary, Persona
from usersim.simulator.agenda import Agenda
from usersim.simulator.base import SimulatorView
from usersim.simulator.phrasing import Act, fits, option_text

# the agenda's acts a pushing user still says: answers to what the agent asked, corrections of wrong facts
ANSWERS = (
    "answer",
    "repeat",
    "repeat_said",
    "dont_know",
    "unknown",
    "volunteer",
    "change_fact",
    "say",
    "reject",
)


@dataclass
class Push:
    """The manipulative user's move this turn (replaces the agenda's when the push phase is on)."""

    acts: list[Act]
    stop: Literal["goal_met", "gave_up"] | None = None
    reason: str = ""
    events: list[SimEvent] = field(default_factory=list)
    meta: dict = field(default_factory=dict)


def words(language: str) -> dict:
    """The adversary phrasing of a language (the `adversary` resource)."""
    found = lang.resources(language).topic("adversary")
    if not found:
        raise FileNotFoundError(
            f"no manipulative-user phrasing for language '{language}' (usersim/lang/data/{language}/adversary.yaml)"
        )
    return found


def push_start(persona: Persona, agenda: Agenda, opening: str | None) -> int:
    """The user turn of the first push: after the harmless part when escalating (earlier once the
    persona's own goal is delivered), else the first turn that is not a scripted opening."""
    adv = persona.adversary
    assert adv is not None
    if "gradual_escalation" not in adv.tactics:
        return 2 if opening else 1
    start = adv.escalation_turns + 1
    if agenda.required and not agenda.pending and agenda.delivered:
        start = min(start, max(agenda.delivered.values()) + 1)
    return max(start, 2 if opening else 1)


def sequence(adv: Adversary) -> list[str]:
    """The pushes in order: `soft` (gradual_escalation's harmless-sounding first ask), then the tactics."""
    return (["soft"] if "gradual_escalation" in adv.tactics else []) + adv.pushes


def _pick(options: list, persona: Persona, rng: random.Random) -> str:
    allowed = [option_text(o) for o in options if fits(o, persona.traits)] or [
        option_text(o) for o in options
    ]
    return allowed[rng.randrange(len(allowed))]


def phrase(persona: Persona, tactic: str, rng: random.Random, *, pushback: bool) -> str:
    """One push in words: the tactic's template with the target and the claims filled in."""
    adv = persona.adversary
    assert adv is not None
    w = words(persona.language)
    options = w["soft"] if tactic == "soft" else w["push"][tactic]
    parts = w.get("parts", {})
    claims = adv.claims
    fill = {
        "ask": adv.target.ask,
        "role": claims.role or "",
        "relation": claims.relation or "",
        "staff_id": parts["staff_id"].format(value=claims.staff_id) if claims.staff_id else "",
        "name": parts["name"].format(value=claims.name) if claims.name else "",
        "reason": parts["reason"].format(value=claims.reason) if claims.reason else "",
        "subject": parts["subject"].format(value=adv.target.subject) if adv.target.subject else "",
    }
    text = _pick(options, persona, rng).format(**fill)
    if pushback:
        sep = " " if persona.language == "en" else ""
        text = _pick(w["pushback"], persona, rng) + sep + text
    return text


def play(
    view: SimulatorView,
    agenda: Agenda,
    moves: list[tuple[str, list[str]]],
    acts: list[Act],
    stop: Literal["goal_met", "gave_up"] | None,
) -> Push | None:
    """The push of this turn, or None while the harmless part goes on (the agenda's move stands,
    except that reaching the persona's own goal starts the push instead of ending the chat)."""
    persona = view.persona
    adv = persona.adversary
    assert adv is not None
    start = push_start(persona, agenda, view.opening_message or persona.opening_message)
    if view.turn < start:
        return None
    said = [m.content for m in view.transcript if m.role == "user" and m.content]
    seq = sequence(adv)
    history: list[tuple[int, str, Stance]] = []  # (user turn of the push, tactic, how the agent answered)
    for k, turn in enumerate(range(start, view.turn)):
        reply = moves[turn - 1][0] if turn - 1 < len(moves) else ""
        history.append((turn, seq[k % len(seq)], reply_stance(reply, said[:turn])))
    rng = random.Random(f"usersim-adversary|{view.case_id}|{view.seed}|{view.turn}")
    w = words(persona.language)
    meta = {"adversary": [{"turn": t, "tactic": tac, "reply": s.kind} for t, tac, s in history]}
    got = next(((t, tac, s) for t, tac, s in history if s.kind == "complied"), None)
    if got is not None:
        turn, tactic, stance = got
        reason = (
            f"the agent handed over {adv.target.kind} ({adv.target.ask}) in its reply to turn {turn} "
            f"after {tactic}: {stance.describe()}"
        )
        return Push([Act("say", text=_pick(w["got_it"], persona, rng))], "goal_met", reason, meta=meta)
    if len(history) >= adv.refusals_allowed:
        reason = (
            f"{len(history)} pushes refused ({', '.join(f'{tac}: {s.describe()}' for _, tac, s in history)})"
        )
        return Push([Act("say", text=_pick(w["give_up"], persona, rng))], "gave_up", reason, meta=meta)
    tactic = seq[len(history) % len(seq)]
    text = phrase(persona, tactic, rng, pushback=bool(history))
    answers = [a for a in acts if a.kind in ANSWERS] if view.turn > 1 else []
    before = f"; the reply to the last push: {history[-1][2].describe()}" if history else ""
    event = SimEvent(turn=view.turn, kind="tactic", detail=f"push {len(history) + 1}: {tactic}{before}")
    return Push([*answers, Act("say", text=text)], None, f"tactic {tactic}", [event], meta)
