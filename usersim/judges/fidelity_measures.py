"""The fidelity checks of how the user speaks and behaves (see judges/fidelity.py for the list):
language, length, reveal policy, scripted events, traits and patience. All are advisory: they are
heuristics on wording and counts, and what they find cannot mislead the agent about the task.
"""

from __future__ import annotations

from collections.abc import Callable

from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.judges.fidelity_evidence import Conversation, error_verdict, fidelity_verdict
from usersim.judges.fidelity_rules import user_turns
from usersim.personas.schema import Persona
from usersim.simulator import guards
from usersim.simulator.fact_check import contradictions, facts_of
from usersim.simulator.scripted import event_progress

# unasked known facts in one user turn that fail the reveal policy (one more than the policy allows,
# as the asked-about matcher is a heuristic)
REVEAL_LIMIT = {"when_asked": 2, "gradually": 3}
TERSE_MEAN_CHARS = 80  # a low-verbosity user's mean turn length (Chinese characters; English x3)
CHATTY_MIN_MEAN_CHARS = 12  # a high-verbosity user writing shorter than this on average is too terse


def check_language(persona: Persona, conv: Conversation) -> Verdict:
    for i, own in user_turns(conv):
        if why := guards.language_switch(own, persona.language):
            return fidelity_verdict(
                "fidelity.language",
                False,
                f"user turn at message {i}: {why}",
                kind="language",
                conv=conv,
                index=i,
            )
    return fidelity_verdict(
        "fidelity.language",
        True,
        f"every user turn is in the persona's language ({persona.language})",
        kind="language",
    )


def check_length(persona: Persona, conv: Conversation) -> Verdict:
    for i, own in user_turns(conv):
        if why := guards.too_long(persona, own):
            return fidelity_verdict(
                "fidelity.length",
                False,
                f"user turn at message {i} has {why}",
                kind="length",
                conv=conv,
                index=i,
            )
    return fidelity_verdict(
        "fidelity.length",
        True,
        f"every user turn is within {guards.length_cap(persona)} characters",
        kind="length",
    )


def _asker(persona: Persona) -> Callable[[str], set[str]]:
    """Fact keys an agent reply asks about (the rule simulator's matcher, one per persona:
    slots.matcher_for). A matcher that raises is not "nothing asked": the exception reaches check_reveal's caller."""
    from usersim.simulator.slots import matcher_for

    matcher = matcher_for(persona)
    return lambda agent_text: set(matcher.asked(agent_text))


def _facts(persona: Persona) -> dict[str, str]:
    facts: dict[str, str] = {}
    for f in persona.known_info:
        facts.setdefault(f.slot, f.value)
    return facts


def check_reveal(persona: Persona, conv: Conversation) -> Verdict:
    name = "fidelity.reveal"
    limit = REVEAL_LIMIT.get(persona.reveal_policy)
    if limit is None:
        return fidelity_verdict(
            name, True, f"reveal policy {persona.reveal_policy}: any number of facts per turn", kind="reveal"
        )
    try:
        asked_in = _asker(persona)
        for i, own in user_turns(conv):
            low = own.lower()
            told = [f.slot for f in persona.known_info if f.value.strip() and f.value.strip().lower() in low]
            if len(told) < limit:  # fewer facts than the limit cannot break it, asked or not
                continue
            before = next((x.content for j, x in reversed(conv.live) if j < i and x.role == "assistant"), "")
            # correcting a proposal that got a fact wrong ("No — it's Building 4") is no volunteering
            wrong = {v.slot for v in contradictions(facts_of(persona, _facts(persona)), before)}
            volunteered = [slot for slot in told if slot not in asked_in(before) and slot not in wrong]
            if len(volunteered) >= limit:  # wording-based: advisory
                return fidelity_verdict(
                    name,
                    False,
                    f"user turn at message {i} volunteers {len(volunteered)} facts nobody asked for "
                    f"({', '.join(volunteered)}); reveal policy {persona.reveal_policy} allows {limit - 1}",
                    kind="reveal",
                    conv=conv,
                    index=i,
                )
    except Exception as exc:  # the fact matcher broke: say so, never "nothing asked"
        return error_verdict(name, "reveal", exc)
    return fidelity_verdict(
        name,
        True,
        f"no user turn volunteers {limit} or more unasked facts (reveal policy {persona.reveal_policy})",
        kind="reveal",
    )


def checkable(event_kind: str, value: str | None, slot: str | None) -> bool:
    """Whether an event has something a matcher can find (a value, a required item's name); a
    text-only event said in other words cannot be told from one never said."""
    return bool(value) or (event_kind in ("add_required", "drop_required") and bool(slot))


def check_events(persona: Persona, conv: Conversation, state: JudgeState) -> Verdict:
    name = "fidelity.events"
    progress = event_progress(persona, [m for _, m in conv.live], state.turns)
    if not progress:
        return fidelity_verdict(name, True, "the persona has no scripted events", kind="events")
    missed = [s for s in progress if s.due is not None and s.due <= state.turns and s.said_at is None]
    unreached = [s for s in progress if s.due is None or s.due > state.turns]
    said = [s for s in progress if s.said_at is not None]
    notes = f"{len(said)} said" + (f", {len(unreached)} never reached" if unreached else "")
    hard = [s for s in missed if checkable(s.event.kind, s.event.value, s.event.slot)]
    if hard:
        return fidelity_verdict(
            name,
            False,
            "; ".join(f"{s.describe()} due turn {s.due} but never said" for s in hard) + f" ({notes})",
            kind="events",
        )
    if missed:  # only wording to compare: "Sure, do it." may well say "Yes, go ahead."
        return fidelity_verdict(
            name,
            False,
            "; ".join(f"{s.describe()} due turn {s.due}: not in these words" for s in missed)
            + f" ({notes}); the wording matcher cannot tell a rewording from a miss",
            kind="events",
            verdict="inconclusive",
        )
    return fidelity_verdict(
        name, True, f"every scripted event that fell due was said ({notes})", kind="events"
    )


def _facts_in(persona: Persona, text: str) -> int:
    low = text.lower()
    return sum(1 for f in persona.known_info if f.value.strip() and f.value.strip().lower() in low)


def check_traits(persona: Persona, conv: Conversation) -> Verdict:
    """Traits measured on the simulator's turns: length vs verbosity, facts per turn vs reveal policy.
    `details` carries the measurements too (summary.json aggregates them per persona)."""
    users = user_turns(conv)
    factor = guards.EN_FACTOR if persona.language == "en" else 1
    lengths = [len(own) for _, own in users]
    facts = [_facts_in(persona, own) for _, own in users]
    measured = {
        "verbosity": persona.traits.verbosity,
        "reveal_policy": persona.reveal_policy,
        "user_turns": len(users),
        "mean_chars": round(sum(lengths) / len(lengths), 1) if lengths else None,
        "max_chars": max(lengths, default=0),
        "mean_facts_per_turn": round(sum(facts) / len(facts), 2) if facts else None,
        "max_facts_in_turn": max(facts, default=0),
    }
    verdict = fidelity_verdict(
        "fidelity.traits", True, "no simulator-written user turns to measure", kind="traits"
    )
    if lengths:
        mean = measured["mean_chars"]
        problem = None
        if persona.traits.verbosity == "low" and mean > TERSE_MEAN_CHARS * factor:
            problem = f"a terse persona (verbosity low) wrote {mean} characters per turn on average"
        elif persona.traits.verbosity == "high" and mean < CHATTY_MIN_MEAN_CHARS * factor:
            problem = f"a chatty persona (verbosity high) wrote only {mean} characters per turn on average"
        summary = (
            f"{len(users)} user turns: {mean} characters per turn (verbosity {persona.traits.verbosity}), "
            f"{measured['mean_facts_per_turn']} known facts per turn (reveal {persona.reveal_policy})"
        )
        verdict = fidelity_verdict(
            "fidelity.traits", problem is None, f"{problem}; {summary}" if problem else summary, kind="traits"
        )
    verdict.details = {**(verdict.details or {}), **measured}
    return verdict


def check_patience(persona: Persona, conv: Conversation, state: JudgeState) -> Verdict:
    """A give_up before the persona's patience could have run out is the simulator's, not the agent's."""
    from usersim.simulator.agenda import PATIENCE_BY_TRAIT

    name = "fidelity.patience"
    if state.stop is None or state.stop.reason != "gave_up":
        return fidelity_verdict(name, True, "the user did not give up", kind="patience")
    patience = persona.stop_rules.patience_turns or PATIENCE_BY_TRAIT[persona.traits.patience]
    replies = sum(1 for _, m in conv.live if m.role == "assistant")
    last_user = max((i for i, m in conv.live if m.role == "user"), default=None)
    if replies < patience:
        return fidelity_verdict(
            name,
            False,
            f"gave up after {replies} agent repl{'y' if replies == 1 else 'ies'}, before the persona's patience "
            f"of {patience} unhelpful replies could run out",
            kind="patience",
            conv=conv,
            index=last_user,
        )
    return fidelity_verdict(
        name, True, f"gave up after {replies} agent replies (patience {patience})", kind="patience"
    )
