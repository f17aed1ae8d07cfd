"""Task completion for organic cases: was the user's goal IN FORCE reached, on the evidence?

The goal in force (simulator/in_force.py, the reading the simulator holds too) is the persona
goal's `required` items after the add_required / drop_required events the user actually said
(simulator/scripted.py event_progress): an item the user never asked for is not owed, one the user
dropped is not either; and its constraints: goal.constraints, the needs the opening message
states ("under $40", "流量至少要10G") and the add_constraint events said. Evidence, in this order:

1. each item in force delivered: one of its deliverable keywords in an agent statement (a question
   never delivers; a tool result is what the agent read, not what the user got) — counted only
   from the turn of the user's last change of requirements (a change_fact / change_mind /
   add_constraint event said: earlier proposals must be redone) and only in replies that keep the
   constraints in force;
2. the case's deciding checks — the evidence on state and tools (final_state, tool_called, ...):
   the `rules` and `milestones` verdicts that count toward status; this judge declares
   `reads_verdicts`, so judges/base.apply_judges runs it after them;
3. the simulated user's stop — evidence, not the verdict.

    every item evidenced                         -> pass (whatever the stop: a user that never
                                                    stopped does not undo a delivered goal)
    items missing, checks passed, user goal_met  -> pass (the checks and the user agree)
    items missing, checks passed, no goal_met    -> inconclusive, details.blame_hint = "simulator"
    items missing otherwise                      -> fail
    nothing required: goal_met or checks passed  -> pass, else fail
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.checks.mentions import has_keyword, squash
from usersim.judges.checks.normalize import statements
from usersim.personas.schema import Goal, Persona
from usersim.simulator.in_force import constraints_in_force, opening_of, required_in_force
from usersim.simulator.scripted import event_progress, said_turns
from usersim.simulator.signals import constraint_violations, quantity_evidence

CHECK_JUDGES = ("rules", "milestones")
CHANGES = ("change_fact", "change_mind", "add_constraint")  # events after which proposals are redone


def _persona(state: JudgeState) -> Persona | None:
    p = state.persona
    if p is None or isinstance(p, Persona):
        return p
    try:
        return Persona.model_validate(p)
    except ValueError:
        return None


def goal_in_force(persona: Persona, live: list[Message], turns: int) -> tuple[list[str], list[str]]:
    """(required items in force, how the user changed them: "+item (turn N)" / "-item (turn N)")."""
    said = said_turns(persona, live, turns)
    items = required_in_force(persona, max(turns, 1), said)
    changes = [
        f"{'+' if s.event.kind == 'add_required' else '-'}{s.event.slot} (turn {s.said_at})"
        for s in event_progress(persona, live, turns)
        if s.said_at is not None and s.event.kind in ("add_required", "drop_required") and s.event.slot
    ]
    return items, changes


def keywords(goal: Goal, item: str) -> list[str]:
    """The words that show an item delivered: its deliverable_keywords, else its name (and the name
    with spaces for underscores: an added item `plan_change` is delivered by "plan change")."""
    words = goal.deliverable_keywords.get(item)
    if words:
        return list(words)
    return list(dict.fromkeys([item, item.replace("_", " ")]))


@dataclass
class Checks:
    """The case's deciding checks, as this conversation's rules and milestones judged them."""

    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def state(self) -> str:
        return "failed" if self.failed else "passed" if self.passed else "none"

    def describe(self) -> str:
        if self.failed:
            return f"case checks failed: {', '.join(self.failed)}"
        if self.passed:
            return f"case checks passed: {', '.join(self.passed)}"
        return "no deciding case checks"


def deciding_checks(state: JudgeState) -> Checks:
    out = Checks()
    for judge in CHECK_JUDGES:
        for v in state.verdicts.get(judge, []):
            if not v.counts_toward_status:
                continue
            if v.verdict == "pass":
                out.passed.append(v.judge)
            elif v.verdict in ("fail", "error"):
                out.failed.append(v.judge)
    return out


class TaskCompletionJudge:
    """The goal in force reached, on the evidence of replies, the case's checks and the stop."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)
    reads_verdicts = CHECK_JUDGES  # runs after rules and milestones (judges/base.apply_judges)

    name = "task_completion"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        stop = state.stop.reason if state.stop else None
        stopped = f"stopped: {stop or 'no stop recorded'}" + (
            f" ({state.stop.detail})" if state.stop and state.stop.detail else ""
        )
        persona = _persona(state)
        goal = persona.goal if persona else None
        criterion = (goal.description if goal else case.goal) or "task goal reached"
        checks = deciding_checks(state)
        live = [m for i, m in enumerate(transcript) if i >= state.history_len]
        items, changes = goal_in_force(persona, live, state.turns) if persona else ([], [])
        details: dict[str, Any] = {"goal_in_force": items, "checks": checks.state, "stop": stop}
        if persona is not None:  # the constraints in force at the end (goal, opening needs, events)
            said_at = said_turns(persona, live, state.turns)
            final = constraints_in_force(
                persona, max(state.turns, 1), said_at, opening=opening_of(persona, live)
            )
            if final:
                details["constraints_in_force"] = final
        if changes:
            details["changes"] = changes
        if goal is None or not items:
            ok = stop == "goal_met" or checks.state == "passed"
            return [
                Verdict(
                    judge=self.name,
                    verdict="pass" if ok else "fail",
                    criterion=criterion,
                    reason=f"{stopped}; no required deliverables in force"
                    + (f" ({', '.join(changes)})" if changes else "")
                    + f"; {checks.describe()}",
                    details=details,
                )
            ]
        delivered, missing, last_at = self._evidence(persona, items, transcript, state)
        share = len(delivered) / len(items)
        reason = f"{stopped}; delivered {len(delivered)}/{len(items)}"
        if delivered:
            reason += ": " + ", ".join(delivered)
        if missing:
            reason += "; missing: " + ", ".join(missing)
        if changes:
            reason += f"; goal in force after the user's changes ({', '.join(changes)}): {', '.join(items)}"
        verdict = "pass"
        if not missing:
            if stop != "goal_met":
                reason += "; the user never said the goal was met, but every item in force is evidenced"
        elif checks.state == "passed" and stop == "goal_met":
            reason += f"; the user confirmed and the {checks.describe()}"
        elif checks.state == "passed":
            verdict = "inconclusive"
            reason += (
                f"; the {checks.describe()} but the user never confirmed the goal: left to the simulator"
            )
            details["blame_hint"] = "simulator"
        else:
            verdict = "fail"
            reason += f"; {checks.describe()}"
        return [
            Verdict(
                judge=self.name,
                verdict=verdict,  # type: ignore[arg-type]
                reason=reason,
                criterion=criterion,
                score=round(share, 4),
                evidence_turn=last_at,
                details=details,
            )
        ]

    @staticmethod
    def _evidence(
        persona: Persona, items: list[str], transcript: list[Message], state: JudgeState
    ) -> tuple[list[str], list[str], int | None]:
        """(delivered items with where, missing items with the words looked for, last delivery index)."""
        goal = persona.goal
        live = [m for i, m in enumerate(transcript) if i >= state.history_len]
        said = said_turns(persona, live, state.turns)
        opening = opening_of(persona, live)  # needs stated there are held like goal.constraints
        since = max((t for i, t in said.items() if persona.events[i].kind in CHANGES), default=0)
        turn_of, turn = {}, 0
        for i, m in enumerate(transcript):
            turn += i >= state.history_len and m.role == "user"
            turn_of[i] = turn

        def counts(i: int, turn: int, text: str) -> bool:  # after the last change, keeping its constraints
            return turn >= since and not constraint_violations(
                constraints_in_force(persona, max(turn, 1), said, opening=opening), text
            )

        replies = [  # what the agent states, not what it asks: a question never delivers
            (i, statements(m.content), "msg")
            for i, m in enumerate(transcript)
            if i >= state.history_len
            and m.role == "assistant"
            and m.content
            and counts(i, turn_of[i], m.content)
        ]
        delivered: list[str] = []
        missing: list[str] = []
        last_at: int | None = None
        squashed = [squash(text) for _, text, _ in replies]
        for item in items:
            words = keywords(goal, item)
            hit = next(
                (
                    (i, w, where)
                    for (i, text, where), hay in zip(replies, squashed, strict=True)
                    for w in words
                    if _may_mention(w, hay) and has_keyword(w, text)
                ),
                None,
            )
            if hit is None:  # a hotel shown by its nightly price written another way ("¥680 一晚")
                hit = next(
                    ((i, q, where) for i, text, where in replies if (q := quantity_evidence(item, [text]))),
                    None,
                )
            if hit is None:
                after = f" since the user's change in turn {since}" if since else ""
                missing.append(f"{item} (none of {', '.join(words[:4])}{after})")
                continue
            i, w, where = hit
            delivered.append(
                f"{item} ('{w}' in {where} {i})" if where == "msg" else f"{item} ('{w}' in {where})"
            )
            if i >= 0:
                last_at = i if last_at is None else max(last_at, i)
        return delivered, missing, last_at


def _may_mention(word: str, hay: str) -> bool:
    """Whether `has_keyword(word, text)` can hold, `hay` being squash(text): a word without a digit
    is looked up as its squashed letters, which must then be in the squashed text (most keywords
    are in no reply: the full lookup, which maps every character's offset, runs only when they
    are); a word with a digit may be a number matched by value."""
    if any(ch.isdigit() for ch in word):
        return True
    needle = squash(word)
    return bool(needle) and needle in hay


@judge_registry.register("task_completion")
def make_task_completion(config: JudgeConfig) -> TaskCompletionJudge:
    """Organic cases: the goal in force reached, on the evidence (replies, case checks, stop)."""
    return TaskCompletionJudge()
