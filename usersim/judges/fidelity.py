"""Simulator fidelity: did the simulated user behave like the persona? Verdicts that can fail.

Fidelity verdicts never decide a conversation's status (counts_toward_status=False); a failed one
marks the record simulator-suspect instead: the failure is charged to the simulator, and the
report lists suspects apart. Rule checks (always):
- `fidelity.leak`: a user turn states an unknown_info truth, word for word or by its numbers;
- `fidelity.character`: a user turn speaks as the assistant, writes both sides or parrots the agent;
- `fidelity.early_stop`: the user stopped with goal_met before every goal.required item appeared;
- `fidelity.swayed`: the user accepted a proposal that breaks goal.constraints (a constraint from a
  scripted event counts from the turn the user said it);
- `fidelity.language`: a user turn is not in the persona's language;
- `fidelity.length`: a user turn is over the length cap of the persona's verbosity;
- `fidelity.invented`: a user turn states a quantity in neither the persona nor the conversation;
- `fidelity.reveal`: a user turn dumps more known facts than the reveal policy allows;
- `fidelity.events`: a scripted event fell due but the user never said it (never reached: passes);
- `fidelity.traits`: length vs verbosity and facts per turn, measured (details) and checked;
- `fidelity.patience`: the user gave up before its patience could have run out.
With a judge model, one LLM check per conversation adds `fidelity.llm.<check>` for knowledge
(paraphrased leaks, invented facts), character, reveal, language and events.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.personas.schema import Persona
from usersim.simulator import guards
from usersim.simulator.llm_prompt import current_constraints
from usersim.simulator.scripted import event_progress, said_turns
from usersim.simulator.signals import (
    constraint_violations,
    hidden_truths,
    undelivered,
    unknown_topics,
)

NAMES = (
    "fidelity.leak",
    "fidelity.character",
    "fidelity.early_stop",
    "fidelity.swayed",
    "fidelity.language",
    "fidelity.length",
    "fidelity.invented",
    "fidelity.reveal",
    "fidelity.events",
    "fidelity.traits",
    "fidelity.patience",
)
LLM_CHECKS = ("knowledge", "character", "reveal", "language", "events")
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


def _verdict(name: str, ok: bool, reason: str, turn: int | None = None) -> Verdict:
    return Verdict(
        judge=name,
        verdict="pass" if ok else "fail",
        reason=reason,
        evidence_turn=turn,
        counts_toward_status=False,
    )


def _live(transcript: list[Message], state: JudgeState) -> list[tuple[int, Message]]:
    """(transcript index, message) of the live conversation's user/assistant text messages."""
    return [
        (i, m)
        for i, m in enumerate(transcript)
        if i >= state.history_len and m.role in ("user", "assistant") and m.content
    ]


def check_leak(persona: Persona, live: list[tuple[int, Message]]) -> Verdict:
    truths = hidden_truths(persona)
    for i, m in live:
        heard = [x.content for j, x in live if j < i]
        if m.role == "user" and (how := guards.leak(persona, m.content, heard)):
            truth = next(((t, v) for t, v in truths if v.lower() in m.content.lower()), None)
            what = f"'{truth[1]}' ({truth[0]})" if truth else how
            return _verdict(
                NAMES[0], False, f"user turn at message {i} states {what}, which the persona cannot know", i
            )
    n_user = sum(1 for _, m in live if m.role == "user")
    return _verdict(
        NAMES[0], True, f"none of {n_user} user turns states any of {len(truths)} unknown_info truths"
    )


def check_character(live: list[tuple[int, Message]]) -> Verdict:
    last_agent: str | None = None
    for i, m in live:
        if m.role == "assistant":
            last_agent = m.content
            continue
        if phrase := guards.assistant_voice(m.content):
            return _verdict(
                NAMES[1], False, f"user turn at message {i} speaks as the assistant: '{phrase}'", i
            )
        if label := guards.both_sides(m.content):
            return _verdict(NAMES[1], False, f"user turn at message {i} writes both sides ('{label}')", i)
        if (ratio := guards.parroting(m.content, last_agent)) is not None:
            return _verdict(
                NAMES[1], False, f"user turn at message {i} parrots the agent's reply (similarity {ratio})", i
            )
    return _verdict(
        NAMES[1], True, "no user turn uses assistant phrasing, writes both sides or parrots the agent"
    )


def check_early_stop(persona: Persona, live: list[tuple[int, Message]], state: JudgeState) -> Verdict:
    if state.stop is None or state.stop.reason != "goal_met":
        reason = state.stop.reason if state.stop else "no stop recorded"
        return _verdict(NAMES[2], True, f"conversation ended with {reason}; no goal_met claim to check")
    texts = [m.content for _, m in live if m.role == "assistant"]
    said = said_turns(persona, [m for _, m in live], state.turns)
    missing = undelivered(persona.goal, texts, current_constraints(persona, state.turns or 10**6, said))
    if missing:
        last_user = max((i for i, m in live if m.role == "user"), default=None)
        return _verdict(
            NAMES[2],
            False,
            f"stopped with goal_met but the agent never delivered: {', '.join(missing)}",
            last_user,
        )
    return _verdict(
        NAMES[2], True, f"goal_met after all of {', '.join(persona.goal.required) or 'the goal'} appeared"
    )


def check_swayed(
    persona: Persona, live: list[tuple[int, Message]], state: JudgeState, said: dict[int, int]
) -> Verdict:
    user_turn = 0
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
            stopped_ok = state.stop is not None and state.stop.reason == "goal_met"
            if stopped_ok:
                return _verdict(
                    NAMES[3], False, f"ended with goal_met right after a proposal breaking {what}", i
                )
            continue
        j, reply = nxt
        if _ACCEPT.search(reply.content) and not _REJECT.search(reply.content):
            return _verdict(
                NAMES[3],
                False,
                f"user accepted at message {j} a proposal breaking {what}: {reply.content[:60]!r}",
                j,
            )
    return _verdict(NAMES[3], True, "no proposal breaking goal.constraints was accepted")


def _user_turns(live: list[tuple[int, Message]], case: Case) -> list[tuple[int, int, Message]]:
    """(user turn, transcript index, message) of the user turns the simulator wrote (the case's
    own opening message is the case author's, not the simulator's)."""
    out, turn = [], 0
    for i, m in live:
        if m.role == "user":
            turn += 1
            if not (turn == 1 and case.input.message and m.content.strip() == case.input.message.strip()):
                out.append((turn, i, m))
    return out


def check_language(persona: Persona, users: list[tuple[int, int, Message]]) -> Verdict:
    for _, i, m in users:
        if why := guards.language_switch(m.content, persona.language):
            return _verdict(NAMES[4], False, f"user turn at message {i}: {why}", i)
    return _verdict(NAMES[4], True, f"every user turn is in the persona's language ({persona.language})")


def check_length(persona: Persona, users: list[tuple[int, int, Message]]) -> Verdict:
    for _, i, m in users:
        if why := guards.too_long(persona, m.content):
            return _verdict(NAMES[5], False, f"user turn at message {i} has {why}", i)
    return _verdict(NAMES[5], True, f"every user turn is within {guards.length_cap(persona)} characters")


def check_invented(
    persona: Persona, live: list[tuple[int, Message]], users: list[tuple[int, int, Message]], case: Case
) -> Verdict:
    for _, i, m in users:
        context = [case.input.message or ""] + [x.content for j, x in live if j < i]
        if why := guards.invented(persona, m.content, context, case.goal):
            return _verdict(NAMES[6], False, f"user turn at message {i}: {why}", i)
    return _verdict(NAMES[6], True, "no user turn states a quantity outside the persona and the conversation")


def _asker(persona: Persona) -> Callable[[str], set[str]]:
    """Fact keys an agent reply asks about (the rule simulator's matcher, built once per check);
    empty if unknown."""
    from usersim.simulator.slots import FactMatcher

    try:
        matcher = FactMatcher(persona)
    except Exception:  # a heuristic: never let it break the verdicts
        return lambda _text: set()

    def asked(agent_text: str) -> set[str]:
        try:
            return set(matcher.asked(agent_text))
        except Exception:  # a heuristic: never let it break the verdicts
            return set()

    return asked


def check_reveal(
    persona: Persona, live: list[tuple[int, Message]], users: list[tuple[int, int, Message]]
) -> Verdict:
    limit = REVEAL_LIMIT.get(persona.reveal_policy)
    if limit is None:
        return _verdict(
            NAMES[7], True, f"reveal policy {persona.reveal_policy}: any number of facts per turn"
        )
    asked_in = _asker(persona)
    for _, i, m in users:
        low = m.content.lower()
        told = [f.slot for f in persona.known_info if f.value.strip() and f.value.strip().lower() in low]
        if len(told) < limit:  # fewer facts than the limit cannot break it, asked or not
            continue
        before = next((x.content for j, x in reversed(live) if j < i and x.role == "assistant"), "")
        asked = asked_in(before)
        volunteered = [slot for slot in told if slot not in asked]
        if len(volunteered) >= limit:
            return _verdict(
                NAMES[7],
                False,
                f"user turn at message {i} volunteers {len(volunteered)} facts nobody asked for "
                f"({', '.join(volunteered)}); reveal policy {persona.reveal_policy} allows {limit - 1}",
                i,
            )
    return _verdict(
        NAMES[7],
        True,
        f"no user turn volunteers {limit} or more unasked facts (reveal policy {persona.reveal_policy})",
    )


def check_events(persona: Persona, live: list[tuple[int, Message]], state: JudgeState) -> Verdict:
    progress = event_progress(persona, [m for _, m in live], state.turns)
    if not progress:
        return _verdict(NAMES[8], True, "the persona has no scripted events")
    missed = [s for s in progress if s.due is not None and s.due <= state.turns and s.said_at is None]
    unreached = [s for s in progress if s.due is None or s.due > state.turns]
    said = [s for s in progress if s.said_at is not None]
    notes = f"{len(said)} said" + (f", {len(unreached)} never reached" if unreached else "")
    if missed:
        return _verdict(
            NAMES[8],
            False,
            "; ".join(f"{s.describe()} due turn {s.due} but never said" for s in missed) + f" ({notes})",
        )
    return _verdict(NAMES[8], True, f"every scripted event that fell due was said ({notes})")


def _facts_in(persona: Persona, text: str) -> int:
    low = text.lower()
    return sum(1 for f in persona.known_info if f.value.strip() and f.value.strip().lower() in low)


def check_traits(persona: Persona, users: list[tuple[int, int, Message]]) -> Verdict:
    """Traits measured on the simulator's turns: length vs verbosity, facts per turn vs reveal policy.
    `details` carries the measurements (summary.json aggregates them per persona)."""
    factor = guards.EN_FACTOR if persona.language == "en" else 1
    lengths = [len(m.content) for _, _, m in users]
    facts = [_facts_in(persona, m.content) for _, _, m in users]
    details = {
        "verbosity": persona.traits.verbosity,
        "reveal_policy": persona.reveal_policy,
        "user_turns": len(users),
        "mean_chars": round(sum(lengths) / len(lengths), 1) if lengths else None,
        "max_chars": max(lengths, default=0),
        "mean_facts_per_turn": round(sum(facts) / len(facts), 2) if facts else None,
        "max_facts_in_turn": max(facts, default=0),
    }
    verdict = _verdict(NAMES[9], True, "no simulator-written user turns to measure")
    if lengths:
        mean = details["mean_chars"]
        problem = None
        if persona.traits.verbosity == "low" and mean > TERSE_MEAN_CHARS * factor:
            problem = f"a terse persona (verbosity low) wrote {mean} characters per turn on average"
        elif persona.traits.verbosity == "high" and mean < CHATTY_MIN_MEAN_CHARS * factor:
            problem = f"a chatty persona (verbosity high) wrote only {mean} characters per turn on average"
        summary = (
            f"{len(users)} user turns: {mean} characters per turn (verbosity {persona.traits.verbosity}), "
            f"{details['mean_facts_per_turn']} known facts per turn (reveal {persona.reveal_policy})"
        )
        verdict = _verdict(NAMES[9], problem is None, problem + f"; {summary}" if problem else summary)
    verdict.details = details
    return verdict


def check_patience(persona: Persona, live: list[tuple[int, Message]], state: JudgeState) -> Verdict:
    """A give_up before the persona's patience could have run out is the simulator's, not the agent's."""
    from usersim.simulator.agenda import PATIENCE_BY_TRAIT

    if state.stop is None or state.stop.reason != "gave_up":
        return _verdict(NAMES[10], True, "the user did not give up")
    patience = persona.stop_rules.patience_turns or PATIENCE_BY_TRAIT[persona.traits.patience]
    replies = sum(1 for _, m in live if m.role == "assistant")
    if replies < patience:
        return _verdict(
            NAMES[10],
            False,
            f"gave up after {replies} agent repl{'y' if replies == 1 else 'ies'}, before the persona's patience "
            f"of {patience} unhelpful replies could run out",
        )
    return _verdict(NAMES[10], True, f"gave up after {replies} agent replies (patience {patience})")


class FidelityFinding(BaseModel):
    """The judge model's verdict on one fidelity check."""

    model_config = ConfigDict(extra="ignore")

    check: Literal["knowledge", "character", "reveal", "language", "events"] = Field(
        description="Which check."
    )
    evidence: str = Field(default="", description="The user text that decides it (quoted).")
    turn: int | None = Field(default=None, description="User turn number of the evidence.")
    reasoning: str = Field(default="", description="Why.")
    verdict: Literal["pass", "fail"] = Field(description="pass | fail.")


class FidelityAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    checks: list[FidelityFinding] = Field(description="One finding per check.")


def _persona_block(persona: Persona, state: JudgeState, live: list[tuple[int, Message]]) -> str:
    lines = [f"Identity: {persona.name}. {persona.identity}", f"Language: {persona.language}"]
    lines.append(f"Reveal policy: {persona.reveal_policy}")
    lines.append("Known facts (the only facts the user has):")
    lines += [f"- {f.slot}: {f.value}" for f in persona.known_info] or ["- (none)"]
    lines.append("Unknown to the user (must never be stated, not even paraphrased):")
    truths = dict(hidden_truths(persona))
    lines += [
        f"- {t}" + (f" (truth: {truths[t]})" if t in truths else "") for t in unknown_topics(persona)
    ] or ["- (none)"]
    lines.append(f"Goal: {persona.goal.description}; constraints: {persona.goal.constraints or '(none)'}")
    progress = event_progress(persona, [m for _, m in live], state.turns)
    lines.append("Scripted events (the user must say each at or after its due turn):")
    lines += [f"- {s.describe()}, due turn {s.due or 'never reached'}" for s in progress] or ["- (none)"]
    return "\n".join(lines)


def _render(live: list[tuple[int, Message]]) -> str:
    out, turn = [], 0
    for _, m in live:
        if m.role == "user":
            turn += 1
            out.append(f"[user turn {turn}] {m.content}")
        else:
            out.append(f"[assistant] {m.content}")
    return "\n".join(out)


async def llm_fidelity(
    complete: Any, judge_model: str, persona: Persona, live: list[tuple[int, Message]], state: JudgeState
) -> list[Verdict]:
    """One judge-model call: a fidelity.llm.<check> verdict per check (error verdicts if no usable answer)."""
    from usersim.judges.llm import JudgeModelError, ask_structured, prompt

    messages = [
        {
            "role": "user",
            "content": prompt(
                "fidelity", persona=_persona_block(persona, state, live), transcript=_render(live)
            ),
        }
    ]

    def gaps(answer: FidelityAnswer) -> str | None:
        missing = [c for c in LLM_CHECKS if c not in {f.check for f in answer.checks}]
        return f"missing checks: {', '.join(missing)}" if missing else None

    try:
        answer = await ask_structured(complete, messages, FidelityAnswer, judge_model=judge_model, check=gaps)
    except JudgeModelError as exc:
        return [
            Verdict(judge=f"fidelity.llm.{c}", verdict="error", reason=str(exc), counts_toward_status=False)
            for c in LLM_CHECKS
        ]
    index = {}
    turn = 0
    for i, m in live:
        if m.role == "user":
            turn += 1
            index[turn] = i
    by_check = {f.check: f for f in answer.checks}
    out = []
    for c in LLM_CHECKS:
        f = by_check.get(c)
        if f is None:
            out.append(
                Verdict(
                    judge=f"fidelity.llm.{c}",
                    verdict="error",
                    reason="judge gave no finding",
                    counts_toward_status=False,
                )
            )
            continue
        reason = f.reasoning or "(no reasoning)"
        if f.evidence:
            reason += f" — evidence: {f.evidence!r}" + (f" (user turn {f.turn})" if f.turn else "")
        out.append(
            Verdict(
                judge=f"fidelity.llm.{c}",
                verdict=f.verdict,
                reason=reason,
                evidence_turn=index.get(f.turn) if f.turn else None,
                counts_toward_status=False,
            )
        )
    return out


async def judge_fidelity(
    *,
    transcript: list[Message],
    case: Case,
    state: JudgeState,
    judge_model: str | None = None,
    complete: Any = None,
) -> list[Verdict]:
    """Fidelity verdicts for one conversation (inconclusive without a persona); with a judge model
    (or an injected `complete`) the LLM checks are added."""
    persona = state.persona
    if isinstance(persona, dict):
        persona = Persona.model_validate(persona)
    if not isinstance(persona, Persona):
        return [
            Verdict(
                judge=n,
                verdict="inconclusive",
                reason=f"case {case.id} has no persona: fidelity applies to organic conversations",
                counts_toward_status=False,
            )
            for n in NAMES
        ]
    live = _live(transcript, state)
    users = _user_turns(live, case)
    said = said_turns(persona, [m for _, m in live], state.turns)
    out = [
        check_leak(persona, live),
        check_character(live),
        check_early_stop(persona, live, state),
        check_swayed(persona, live, state, said),
        check_language(persona, users),
        check_length(persona, users),
        check_invented(persona, live, users, case),
        check_reveal(persona, live, users),
        check_events(persona, live, state),
        check_traits(persona, users),
        check_patience(persona, live, state),
    ]
    if complete is None and judge_model:
        from usersim.judges.llm import model_complete

        complete = model_complete(judge_model)
    if complete is not None:
        llm = await llm_fidelity(complete, judge_model or "injected", persona, live, state)
        out = [_defer(v, llm) for v in out] + llm
    return out


# Rule checks the judge model also makes: where it passes a turn a heuristic failed, the judge
# model's reading stands (the rule verdict stays visible but no longer marks the record suspect).
SUPERSEDED_BY = {
    "fidelity.leak": "knowledge",
    "fidelity.invented": "knowledge",
    "fidelity.character": "character",
    "fidelity.reveal": "reveal",
    "fidelity.language": "language",
    "fidelity.events": "events",
}


def _defer(rule: Verdict, llm: list[Verdict]) -> Verdict:
    check = SUPERSEDED_BY.get(rule.judge)
    judged = next((v for v in llm if v.judge == f"fidelity.llm.{check}"), None)
    if rule.verdict != "fail" or judged is None or judged.verdict != "pass":
        return rule
    return rule.model_copy(
        update={
            "verdict": "inconclusive",
            "reason": f"{rule.reason} (rule heuristic; the judge model found no problem: {judged.judge})",
            "details": {**(rule.details or {}), "superseded_by": judged.judge},
        }
    )
