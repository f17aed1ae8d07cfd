"""Simulator fidelity: did the simulated user behave like the persona? Verdicts that can fail.

Fidelity verdicts never decide a conversation's status (counts_toward_status=False). Each carries
`details` (precision, turn, message_index, kind, caused: judges/fidelity_evidence.py): only a failed
verdict of precision "high" — a violation the agent then used — can make a record simulator-suspect;
heuristic findings are "advisory", shown and never excusing the agent. A check that crashes is an
`error` verdict on that check. Scripted text (the opening message, the events' texts) is the
persona's own and never a violation. Rule checks (always):
- `fidelity.leak`: a user turn states an unknown_info truth, word for word or by its numbers (high
  when the agent then used it);
- `fidelity.character`: a user turn speaks as the assistant, writes both sides or parrots the agent;
- `fidelity.early_stop`: the user stopped with goal_met before every goal.required item appeared;
- `fidelity.swayed`: the user accepted a proposal that breaks goal.constraints (a constraint from a
  scripted event counts from the turn the user said it; high when the agent acted on it);
- `fidelity.language`: a user turn is not in the persona's language;
- `fidelity.length`: a user turn is over the length cap of the persona's verbosity;
- `fidelity.invented`: a user turn states a quantity in neither the persona nor the conversation
  (high when the agent then used it);
- `fidelity.reveal`: a user turn dumps more known facts than the reveal policy allows;
- `fidelity.events`: a scripted event fell due but the user never said it (never reached: passes;
  a text-only event not found in its words is inconclusive: a rewording cannot be told from a miss);
- `fidelity.traits`: length vs verbosity and facts per turn, measured (details) and checked;
- `fidelity.patience`: the user gave up before its patience could have run out.
With a judge model, one LLM check per conversation adds `fidelity.llm.<check>` for knowledge
(paraphrased leaks, invented facts), character, reveal, language and events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges import fidelity_measures as measures
from usersim.judges import fidelity_rules as rules
from usersim.judges.base import JudgeState
from usersim.judges.fidelity_evidence import Conversation, error_verdict, read_conversation
from usersim.judges.fidelity_llm import LLM_CHECKS, llm_fidelity
from usersim.personas.schema import Persona
from usersim.simulator.scripted import said_turns

__all__ = ["LLM_CHECKS", "NAMES", "judge_fidelity"]

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


def _checks(
    persona: Persona, conv: Conversation, case: Case, state: JudgeState
) -> list[tuple[str, Callable[[], Verdict]]]:
    said = said_turns(persona, [m for _, m in conv.live], state.turns)
    return [
        ("fidelity.leak", lambda: rules.check_leak(persona, conv)),
        ("fidelity.character", lambda: rules.check_character(conv)),
        ("fidelity.early_stop", lambda: rules.check_early_stop(persona, conv, state)),
        ("fidelity.swayed", lambda: rules.check_swayed(persona, conv, state, said)),
        ("fidelity.language", lambda: measures.check_language(persona, conv)),
        ("fidelity.length", lambda: measures.check_length(persona, conv)),
        ("fidelity.invented", lambda: rules.check_invented(persona, conv, case.goal)),
        ("fidelity.reveal", lambda: measures.check_reveal(persona, conv)),
        ("fidelity.events", lambda: measures.check_events(persona, conv, state)),
        ("fidelity.traits", lambda: measures.check_traits(persona, conv)),
        ("fidelity.patience", lambda: measures.check_patience(persona, conv, state)),
    ]


def _run(name: str, check: Callable[[], Verdict]) -> Verdict:
    try:
        return check()
    except Exception as exc:  # one broken check is an error on that check, never the others'
        return error_verdict(name, name.split(".", 1)[1], exc)


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
                details={
                    "precision": "advisory",
                    "turn": None,
                    "message_index": None,
                    "kind": n.split(".", 1)[1],
                    "caused": "",
                },
            )
            for n in NAMES
        ]
    conv = read_conversation(transcript, case, state, persona)
    out = [_run(name, check) for name, check in _checks(persona, conv, case, state)]
    if complete is None and judge_model:
        from usersim.judges.llm import model_complete

        complete = model_complete(judge_model)
    if complete is not None:
        llm = await llm_fidelity(complete, judge_model or "injected", persona, conv, state)
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
