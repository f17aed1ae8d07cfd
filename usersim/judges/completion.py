"""Task completion for organic cases: the stop reason (goal_met) and the persona goal's required
deliverables, each shown by one of its deliverable keywords in an assistant reply."""

from __future__ import annotations

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.checks.mentions import has_keyword
from usersim.judges.checks.normalize import statements
from usersim.personas.schema import Persona
from usersim.simulator.signals import quantity_evidence


def _persona(state: JudgeState) -> Persona | None:
    p = state.persona
    if p is None or isinstance(p, Persona):
        return p
    try:
        return Persona.model_validate(p)
    except ValueError:
        return None


class TaskCompletionJudge:
    """Goal reached = stopped with goal_met and every required deliverable present in the replies."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "task_completion"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        stop = state.stop.reason if state.stop else None
        stop_ok = stop == "goal_met"
        stop_text = f"stopped: {stop or 'no stop recorded'}" + (
            f" ({state.stop.detail})" if state.stop and state.stop.detail else ""
        )
        persona = _persona(state)
        goal = persona.goal if persona else None
        criterion = (goal.description if goal else case.goal) or "task goal reached"
        if goal is None or not goal.required:
            return [
                Verdict(
                    judge=self.name,
                    verdict="pass" if stop_ok else "fail",
                    criterion=criterion,
                    reason=f"{stop_text}; no required deliverables listed in the persona goal",
                )
            ]
        replies = [  # what the agent states, not what it asks: a question never delivers
            (i, statements(m.content))
            for i, m in enumerate(transcript)
            if i >= state.history_len and m.role == "assistant" and m.content
        ]
        delivered: list[str] = []
        missing: list[str] = []
        last_at: int | None = None
        for item in goal.required:
            words = goal.deliverable_keywords.get(item) or [item]
            hit = next(((i, w) for i, text in replies for w in words if has_keyword(w, text)), None)
            if hit is None:  # a hotel shown by its nightly price written another way ("¥680 一晚")
                hit = next(((i, q) for i, text in replies if (q := quantity_evidence(item, [text]))), None)
            if hit is None:
                missing.append(f"{item} (none of {', '.join(words[:4])})")
            else:
                delivered.append(f"{item} ('{hit[1]}' in msg {hit[0]})")
                last_at = hit[0] if last_at is None else max(last_at, hit[0])
        n = len(goal.required)
        share = len(delivered) / n
        reason = f"{stop_text}; delivered {len(delivered)}/{n}"
        if delivered:
            reason += ": " + ", ".join(delivered)
        if missing:
            reason += "; missing: " + ", ".join(missing)
        ok = stop_ok and not missing
        return [
            Verdict(
                judge=self.name,
                verdict="pass" if ok else "fail",
                reason=reason,
                criterion=criterion,
                score=round(share, 4),
                evidence_turn=last_at,
            )
        ]


@judge_registry.register("task_completion")
def make_task_completion(config: JudgeConfig) -> TaskCompletionJudge:
    """Organic cases: stop reason goal_met and the persona goal deliverables present."""
    return TaskCompletionJudge()
