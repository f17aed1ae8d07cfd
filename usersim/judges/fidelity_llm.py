"""The judge model's fidelity check: one call per conversation, a `fidelity.llm.<check>` verdict per
check (knowledge: paraphrased leaks and invented facts; character; reveal; language; events).

Its findings are advisory (details.precision): the model's reading is not verified against what the
agent did afterwards, so it is shown and never excuses the agent. Where it passes a turn a rule
heuristic failed, the rule verdict becomes inconclusive (judges/fidelity.py `_defer`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeState
from usersim.judges.fidelity_evidence import Conversation
from usersim.personas.schema import Persona
from usersim.simulator.scripted import event_progress
from usersim.simulator.signals import hidden_truths, unknown_topics

LLM_CHECKS = ("knowledge", "character", "reveal", "language", "events")


def _details(check: str, conv: Conversation | None = None, index: int | None = None) -> dict[str, Any]:
    return {
        "precision": "advisory",
        "turn": conv.turn(index) if conv is not None and index is not None else None,
        "message_index": index,
        "kind": f"llm.{check}",
        "caused": "",
    }


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
    complete: Any, judge_model: str, persona: Persona, conv: Conversation, state: JudgeState
) -> list[Verdict]:
    """One judge-model call: a fidelity.llm.<check> verdict per check (error verdicts if no usable answer)."""
    from usersim.judges.llm import JudgeModelError, ask_structured, prompt

    live = conv.live
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
            Verdict(
                judge=f"fidelity.llm.{c}",
                verdict="error",
                reason=str(exc),
                counts_toward_status=False,
                details=_details(c),
            )
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
                    details=_details(c),
                )
            )
            continue
        reason = f.reasoning or "(no reasoning)"
        if f.evidence:
            reason += f" — evidence: {f.evidence!r}" + (f" (user turn {f.turn})" if f.turn else "")
        at = index.get(f.turn) if f.turn else None
        out.append(
            Verdict(
                judge=f"fidelity.llm.{c}",
                verdict=f.verdict,
                reason=reason,
                evidence_turn=at,
                counts_toward_status=False,
                details=_details(c, conv, at),
            )
        )
    return out
