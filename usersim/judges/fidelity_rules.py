"""The rule fidelity checks, one function each (see judges/fidelity.py for the list).

Three can be high precision (judges/fidelity_evidence.py): a leak stated exactly or by its numbers
that the agent then used, an acceptance of a constraint-breaking proposal the agent then acted on,
an invented quantity the agent then used. Everything else is advisory.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.judges.fidelity_evidence import Conversation, error_verdict, fidelity_verdict
from usersim.personas.schema import Persona
from usersim.simulator import guards
from usersim.simulator.llm_prompt import current_constraints
from usersim.simulator.scripted import event_progress, said_turns
from usersim.simulator.signals import constraint_violations, hidden_truths, undelivered

# unasked known facts in one user turn that fail the reveal policy (one more than the policy allows,
# as the asked-about matcher is a heuristic)
REVEAL_LIMIT = {"when_asked": 2, "gradually": 3}
TERSE_MEAN_CHARS = 80  # a low-verbosity user's mean turn length (Chinese characters; English x3)
CHATTY_MIN_MEAN_CHARS = 12  # a high-verbosity user writing shorter than this on average is too terse

_ACCEPT = re.compile(
    r"(好的|可以|就这个|就它|就订|就买|没问题|行吧|就这样|谢谢|\bok\b|sounds good|i'll take|go with|perfect|great)",
    re.IGNORECASE,
)
_REJECT = re.compile(
    r"(不行|太贵|超了|超预算|超出|不要|不能|换一|贵了|不考虑|太重|\bno\b|too (expensive|heavy)|over budget|can't|cannot|without|instead)",
    re.IGNORECASE,
)


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
        if use is not None:
            return fidelity_verdict(
                "fidelity.leak",
                False,
                f"{reason}; {use.describe()}",
                kind="leak",
                conv=conv,
                index=i,
                precision="high",
                caused=f"{what}; {use.describe()}",
            )
        if advisory is None:
            why = (
                "a paraphrase (wording heuristic)" if found.how == "paraphrase" else "the agent never used it"
            )
            advisory = fidelity_verdict(
                "fidelity.leak", False, f"{reason} ({why})", kind="leak", conv=conv, index=i, caused=what
            )
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
    missing = undelivered(persona.goal, texts, current_constraints(persona, state.turns or 10**6, said))
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
        found = constraint_violations(current_constraints(persona, max(user_turn, 1), said), m.content)
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
        if not (own and _ACCEPT.search(own) and not _REJECT.search(own)):
            continue
        reason = f"user accepted at message {j} a proposal breaking {what}: {reply.content[:60]!r}"
        caused = f"the accepted proposal at message {i} ({what})"
        if (use := conv.acted_on(i, j)) is not None:
            return fidelity_verdict(
                name,
                False,
                f"{reason}; {use.describe()}",
                kind="swayed",
                conv=conv,
                index=j,
                precision="high",
                caused=f"{caused}; {use.describe()}",
            )
        if advisory is None:
            advisory = fidelity_verdict(
                name,
                False,
                f"{reason} (the agent never acted on it)",
                kind="swayed",
                conv=conv,
                index=j,
                caused=caused,
            )
    return advisory or fidelity_verdict(
        name, True, "no proposal breaking goal.constraints was accepted", kind="swayed"
    )


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


def check_invented(persona: Persona, conv: Conversation, goal: str | None) -> Verdict:
    name = "fidelity.invented"
    advisory: Verdict | None = None
    for i, own in user_turns(conv):
        found = guards.find_invented(persona, own, conv.heard_before(i), goal)
        if found is None:
            continue
        phrase = found[0]
        reason = f"user turn at message {i}: '{phrase}' is in neither the persona nor the conversation"
        if (use := conv.used_after(i, phrase)) is not None:
            return fidelity_verdict(
                name,
                False,
                f"{reason}; {use.describe()}",
                kind="invented",
                conv=conv,
                index=i,
                precision="high",
                caused=f"the invented value '{phrase}'; {use.describe()}",
            )
        if advisory is None:
            advisory = fidelity_verdict(
                name,
                False,
                f"{reason} (the agent never used it)",
                kind="invented",
                conv=conv,
                index=i,
                caused=f"the invented value '{phrase}'",
            )
    return advisory or fidelity_verdict(
        name, True, "no user turn states a quantity outside the persona and the conversation", kind="invented"
    )


def _asker(persona: Persona) -> Callable[[str], set[str]]:
    """Fact keys an agent reply asks about (the rule simulator's matcher, built once per check).
    A matcher that raises is not "nothing asked": the exception reaches check_reveal's caller."""
    from usersim.simulator.slots import FactMatcher

    matcher = FactMatcher(persona)
    return lambda agent_text: set(matcher.asked(agent_text))


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
            volunteered = [slot for slot in told if slot not in asked_in(before)]
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
