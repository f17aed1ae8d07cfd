"""Simulator fidelity: did the simulated user behave like the persona? (informational verdicts)

Four verdicts, none of which decides a conversation's status (counts_toward_status=False):
- `fidelity.leak`: a user turn stated an unknown_info truth the user cannot know;
- `fidelity.character`: a user turn spoke like an AI assistant;
- `fidelity.early_stop`: the user stopped with goal_met before every goal.required item appeared;
- `fidelity.swayed`: the user accepted a proposal that breaks goal.constraints.
"""

from __future__ import annotations

import re

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.personas.schema import Persona
from usersim.simulator.llm_prompt import current_constraints
from usersim.simulator.signals import (
    constraint_violations,
    hidden_truths,
    leaked_truth,
    role_flip,
    undelivered,
)

NAMES = ("fidelity.leak", "fidelity.character", "fidelity.early_stop", "fidelity.swayed")

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
        if m.role == "user" and (truth := leaked_truth(persona, m.content)):
            topic = next(t for t, v in truths if v == truth)
            return _verdict(
                NAMES[0],
                False,
                f"user turn at message {i} states '{truth}' ({topic}), which the persona cannot know",
                i,
            )
    n_user = sum(1 for _, m in live if m.role == "user")
    return _verdict(
        NAMES[0], True, f"none of {n_user} user turns states any of {len(truths)} unknown_info truths"
    )


def check_character(live: list[tuple[int, Message]]) -> Verdict:
    for i, m in live:
        if m.role == "user" and (phrase := role_flip(m.content)):
            return _verdict(
                NAMES[1], False, f"user turn at message {i} speaks as the assistant: '{phrase}'", i
            )
    return _verdict(NAMES[1], True, "no user turn uses AI-assistant phrasing")


def check_early_stop(persona: Persona, live: list[tuple[int, Message]], state: JudgeState) -> Verdict:
    if state.stop is None or state.stop.reason != "goal_met":
        reason = state.stop.reason if state.stop else "no stop recorded"
        return _verdict(NAMES[2], True, f"conversation ended with {reason}; no goal_met claim to check")
    texts = [m.content for _, m in live if m.role == "assistant"]
    missing = undelivered(persona.goal, texts, current_constraints(persona, state.turns or 10**6))
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


def check_swayed(persona: Persona, live: list[tuple[int, Message]], state: JudgeState) -> Verdict:
    user_turn = 0
    for pos, (i, m) in enumerate(live):
        if m.role == "user":
            user_turn += 1
            continue
        found = constraint_violations(current_constraints(persona, max(user_turn, 1)), m.content)
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


async def judge_fidelity(*, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
    """The four fidelity verdicts for one conversation (inconclusive without a persona)."""
    persona = state.persona
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
    return [
        check_leak(persona, live),
        check_character(live),
        check_early_stop(persona, live, state),
        check_swayed(persona, live, state),
    ]
