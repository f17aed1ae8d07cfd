"""The rule fidelity checks of what the user knows and accepts (see judges/fidelity.py for the list):
leak, character, early stop, swayed, invented; the others are in judges/fidelity_measures.py.

Three can be high precision (judges/fidelity_evidence.py): a leak stated exactly or by its numbers
that the agent then used, an acceptance of a constraint-breaking proposal the agent then acted on,
an invented quantity the agent then used. Everything else is advisory.
"""

from __future__ import annotations

from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.judges.fidelity_evidence import Conversation, fidelity_verdict, is_high, violation
from usersim.lang.acts import accepts
from usersim.personas.schema import Persona
from usersim.simulator import guards
from usersim.simulator.in_force import constraints_in_force, opening_of
from usersim.simulator.scripted import said_turns
from usersim.simulator.signals import constraint_violations, hidden_truths, undelivered


def user_turns(conv: Conversation) -> list[tuple[int, str]]:
    """(transcript index, the simulator's own words) of every user turn with any (scripted text cut)."""
    out = []
    for i, m in conv.live:
        if m.role == "user" and (own := conv.own_text(i, m.content)):
            out.append((i, own))
    return out


def check_leak(persona: Persona, conv: Conversation) -> Verdict:
    truths = hidden_truths(persona)
    advisory: Verdict | None = None
    for i, own in user_turns(conv):
        found = guards.find_leak(persona, own, conv.heard_before(i))
        if found is None:
            continue
        what = f"'{found.truth}' ({found.topic})"
        use = conv.used_after(i, found.truth) if found.how != "paraphrase" else None
        how = f"states {what}" if found.how == "exact" else found.describe()
        reason = f"user turn at message {i} {how}, which the persona cannot know"
        why = "a paraphrase (wording heuristic)" if found.how == "paraphrase" else "the agent never used it"
        v = violation(
            "fidelity.leak", reason, kind="leak", conv=conv, index=i, caused=what, use=use, unused=why
        )
        if is_high(v):
            return v
        advisory = advisory or v
    if advisory is not None:
        return advisory
    n_user = sum(1 for _, m in conv.live if m.role == "user")
    return fidelity_verdict(
        "fidelity.leak",
        True,
        f"none of {n_user} user turns states any of {len(truths)} unknown_info truths",
        kind="leak",
    )


def check_character(conv: Conversation) -> Verdict:
    last_agent: str | None = None
    for i, m in conv.live:
        if m.role == "assistant":
            last_agent = m.content
            continue
        own = conv.own_text(i, m.content)
        problem = None
        if phrase := guards.assistant_voice(own):
            problem = f"speaks as the assistant: '{phrase}'"
        elif label := guards.both_sides(own):
            problem = f"writes both sides ('{label}')"
        elif (ratio := guards.parroting(own, last_agent)) is not None:
            problem = f"parrots the agent's reply (similarity {ratio})"
        if problem:
            return fidelity_verdict(
                "fidelity.character",
                False,
                f"user turn at message {i} {problem}",
                kind="character",
                conv=conv,
                index=i,
            )
    return fidelity_verdict(
        "fidelity.character",
        True,
        "no user turn uses assistant phrasing, writes both sides or parrots the agent",
        kind="character",
    )


def check_early_stop(persona: Persona, conv: Conversation, state: JudgeState) -> Verdict:
    name = "fidelity.early_stop"
    if state.stop is None or state.stop.reason != "goal_met":
        reason = state.stop.reason if state.stop else "no stop recorded"
        return fidelity_verdict(
            name, True, f"conversation ended with {reason}; no goal_met claim to check", kind="early_stop"
        )
    texts = [m.content for _, m in conv.live if m.role == "assistant"]
    said = said_turns(persona, [m for _, m in conv.live], state.turns)
    missing = undelivered(
        persona.goal,
        texts,
        constraints_in_force(
            persona, state.turns or 10**6, said, opening=opening_of(persona, [m for _, m in conv.live])
        ),
    )
    if missing:  # the deliverable keywords are a heuristic: advisory
        last_user = max((i for i, m in conv.live if m.role == "user"), default=None)
        return fidelity_verdict(
            name,
            False,
            f"stopped with goal_met but the agent never delivered: {', '.join(missing)}",
            kind="early_stop",
            conv=conv,
            index=last_user,
        )
    return fidelity_verdict(
        name,
        True,
        f"goal_met after all of {', '.join(persona.goal.required) or 'the goal'} appeared",
        kind="early_stop",
    )


def check_swayed(persona: Persona, conv: Conversation, state: JudgeState, said: dict[int, int]) -> Verdict:
    name = "fidelity.swayed"
    user_turn = 0
    advisory: Verdict | None = None
    live = conv.live
    for pos, (i, m) in enumerate(live):
        if m.role == "user":
            user_turn += 1
            continue
        found = constraint_violations(
            constraints_in_force(
                persona, max(user_turn, 1), said, opening=opening_of(persona, [m for _, m in conv.live])
            ),
            m.content,
        )
        if not found:
            continue
        nxt = next(((j, u) for j, u in live[pos + 1 :] if u.role == "user"), None)
        what = found[0].describe()
        if nxt is None:
            if advisory is None and state.stop is not None and state.stop.reason == "goal_met":
                # nothing the agent did afterwards: its own proposal is on it, not the user's stop
                advisory = fidelity_verdict(
                    name,
                    False,
                    f"ended with goal_met right after a proposal breaking {what}",
                    kind="swayed",
                    conv=conv,
                    index=i,
                    caused=f"proposal at message {i} breaking {what}",
                )
            continue
        j, reply = nxt
        own = conv.own_text(j, reply.content)
        if not (own and accepts(own)):
            continue
        reason = f"user accepted at message {j} a proposal breaking {what}: {reply.content[:60]!r}"
        caused = f"the accepted proposal at message {i} ({what})"
        use = conv.acted_on(i, j)
        v = violation(
            name,
            reason,
            kind="swayed",
            conv=conv,
            index=j,
            caused=caused,
            use=use,
            unused="the agent never acted on it",
        )
        if is_high(v):
            return v
        advisory = advisory or v
    return advisory or fidelity_verdict(
        name, True, "no proposal breaking goal.constraints was accepted", kind="swayed"
    )


def check_invented(persona: Persona, conv: Conversation, goal: str | None) -> Verdict:
    name = "fidelity.invented"
    advisory: Verdict | None = None
    for i, own in user_turns(conv):
        found = guards.find_invented(persona, own, conv.heard_before(i), goal)
        if found is None:
            continue
        phrase = found[0]
        reason = f"user turn at message {i}: '{phrase}' is in neither the persona nor the conversation"
        use = conv.used_after(i, phrase)
        v = violation(
            name,
            reason,
            kind="invented",
            conv=conv,
            index=i,
            caused=f"the invented value '{phrase}'",
            use=use,
        )
        if is_high(v):
            return v
        advisory = advisory or v
    return advisory or fidelity_verdict(
        name, True, "no user turn states a quantity outside the persona and the conversation", kind="invented"
    )
