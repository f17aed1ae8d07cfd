"""Checks on the graph state and composite checks: step_completion, skill_triggered,
skill_not_triggered, stop_reason, turns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.cases.schema import Case
from usersim.core.events import StopReason
from usersim.core.registry import did_you_mean
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry, evaluate, validate_check
from usersim.judges.checks.vacuity import Problems, exposed_skills, never_fails, never_passes

_ERROR_STOPS = {"agent_error", "simulator_error", "case_error"}  # an `error` verdict, whatever the checks say
# Only a person in the user's seat (`usersim play`) ends a conversation so; a check that lists every
# other end cannot fail in `usersim run`, which is where a suite is judged.
_SEAT_STOPS = {"user_stopped"}


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too


class Step(_Params):
    name: str = Field(description="Step name shown in the reason, e.g. 望京花园·房价.")
    check: dict[str, Any] = Field(
        description="A check (same form as judging.checks) that marks the step done."
    )

    @field_validator("check")
    @classmethod
    def _valid(cls, v: dict[str, Any]) -> dict[str, Any]:
        validate_check(v)
        return v


class StepCompletionParams(_Params):
    steps: list[Step] = Field(min_length=1, description="The task's steps.")
    threshold: float = Field(default=0.5, ge=0, le=1, description="Pass when this share of steps is done.")

    def case_problems(self, case: Case) -> Problems:
        """A threshold of 0 (no step needed), and the steps' own checks against the case (e.g. a
        final_state step naming a table that does not exist), located under steps.<i>.check.<type>."""
        out: Problems = []
        if self.threshold == 0:
            why = "a threshold of 0 needs no step done"
            out.append(
                (
                    ("threshold",),
                    never_fails("step_completion", why, "Give the share of steps needed, e.g. 0.5"),
                )
            )
        for i, step in enumerate(self.steps):
            ctype, params = check_registry.parse(step.check, case.own_tool_names)
            hook = getattr(params, "case_problems", None)
            if callable(hook):
                out += [(("steps", i, "check", ctype.name, *loc), msg) for loc, msg in hook(case)]
        return out


@check_registry.register("step_completion", StepCompletionParams)
def step_completion(params: StepCompletionParams, ctx: CheckContext) -> Outcome:
    """Partial credit: the share of steps whose check passes (seed 001: 7/9 = 78%)."""
    done, missed = [], []
    for step in params.steps:
        (done if evaluate(step.check, ctx).passed else missed).append(step.name)
    n, k = len(params.steps), len(done)
    share = k / n
    reason = f"{k}/{n} steps ({share:.0%})"
    if done:
        reason += "; done: " + ", ".join(done)
    if missed:
        reason += "; missing: " + ", ".join(missed)
    ok = share >= params.threshold
    reason += f"; threshold {params.threshold:.0%}"
    return Outcome(ok, reason, score=round(share, 4), details={"done": done, "missing": missed})


class SkillTriggeredParams(_Params):
    skill: str = Field(description="Skill name, e.g. flight-selection.")

    def case_problems(self, case: Case) -> Problems:
        """A skill the case never gives the agent cannot be triggered."""
        return _unexposed("skill_triggered", self.skill, case, never_passes)


def _unexposed(
    check: str, skill: str | None, case: Case, verdict: Callable[[str, str, str], str]
) -> Problems:
    exposed = exposed_skills(case)
    if skill is None:
        if exposed:
            return []
        why = "the case exposes no skill (skills.skill_enabled is off and no group B is run)"
        return [((), verdict(check, why, "Expose skills (skills.active_skills) or remove the check"))]
    if skill in exposed:
        return []
    if case.skills.active_skills and skill not in case.skills.active_skills:
        why = f"skill '{skill}' is not one of skills.active_skills.{did_you_mean(skill, set(case.skills.active_skills))}"
    elif exposed or case.skills.active_skills:
        why = f"skill '{skill}' is never exposed (skills.skill_enabled is off and no group B is run)"
    else:
        why = f"the case exposes no skill, so '{skill}' is never given to the agent"
    return [(("skill",), verdict(check, why, "Add it to skills.active_skills with skill_enabled: true"))]


@check_registry.register("skill_triggered", SkillTriggeredParams)
def skill_triggered(params: SkillTriggeredParams, ctx: CheckContext) -> Outcome:
    """The agent loaded (triggered) the skill."""
    triggered = ctx.skills_triggered()
    turns = [t for s, t in triggered if s == params.skill]
    if turns:
        return Outcome(True, f"skill {params.skill} triggered in turn {turns[0]}")
    others = ", ".join(sorted({s for s, _ in triggered})) or "none"
    return Outcome(False, f"skill {params.skill} was never triggered (skills triggered: {others})")


class SkillNotTriggeredParams(_Params):
    skill: str | None = Field(
        default=None, description="Skill that must not be loaded (None = no skill at all)."
    )

    def case_problems(self, case: Case) -> Problems:
        """A skill the case never gives the agent is never triggered."""
        return _unexposed("skill_not_triggered", self.skill, case, never_fails)


@check_registry.register("skill_not_triggered", SkillNotTriggeredParams)
def skill_not_triggered(params: SkillNotTriggeredParams, ctx: CheckContext) -> Outcome:
    """The skill (or any skill, when none is named) was not loaded."""
    triggered = ctx.skills_triggered()
    hits = [(s, t) for s, t in triggered if params.skill is None or s == params.skill]
    label = f"skill {params.skill}" if params.skill else "no skill"
    if hits:
        s, t = hits[0]
        return Outcome(False, f"skill {s} was triggered in turn {t}")
    return Outcome(True, f"{label} triggered" if not params.skill else f"{label} not triggered")


class StopReasonParams(_Params):
    in_: list[StopReason] = Field(alias="in", min_length=1, description="Acceptable stop reasons.")

    def case_problems(self, case: Case) -> Problems:
        """Every way the case's conversations can end listed (or none of them): an error stop is
        an `error` verdict whatever this check says, a static case always ends replay_complete."""
        listed = set(self.in_)
        if case.mode == "static":
            ends = {"replay_complete"}
        else:
            ends = set(get_args(StopReason)) - {"replay_complete"}
        ends -= _ERROR_STOPS | _SEAT_STOPS
        if ends <= listed:
            why = (
                "it lists every reason a " + case.mode + " conversation ends with: " + ", ".join(sorted(ends))
            )
            return [(("in",), never_fails("stop_reason", why, "List only the acceptable ones"))]
        if not listed & ends:
            why = f"a {case.mode} conversation ends {' / '.join(sorted(ends))}, none of which is listed"
            return [(("in",), never_passes("stop_reason", why, "List a reason it can end with"))]
        return []


@check_registry.register("stop_reason", StopReasonParams)
def stop_reason(params: StopReasonParams, ctx: CheckContext) -> Outcome:
    """The conversation ended for one of the listed reasons."""
    stop = ctx.state.stop
    if stop is None:
        return Outcome(False, "no stop reason recorded (conversation still running?)")
    detail = f" ({stop.detail})" if stop.detail else ""
    ok = stop.reason in params.in_
    need = "" if ok else f"; required one of {', '.join(params.in_)}"
    return Outcome(ok, f"stopped: {stop.reason}{detail}{need}")


class TurnsParams(_Params):
    max: int = Field(ge=1, description="At most this many user turns.")

    def case_problems(self, case: Case) -> Problems:
        """A limit at or above the case's max_turns: the conversation is stopped there anyway."""
        if case.mode == "organic" and case.max_turns is not None and self.max >= case.max_turns:
            why = f"the conversation is stopped at max_turns {case.max_turns}, within the limit of {self.max}"
            fix = "Give a lower max, or judge completion with stop_reason: {in: [goal_met]}"
            return [(("max",), never_fails("turns", why, fix))]
        return []


@check_registry.register("turns", TurnsParams)
def turns(params: TurnsParams, ctx: CheckContext) -> Outcome:
    """The conversation took at most `max` user turns."""
    n = ctx.state.turns
    if n <= params.max:
        return Outcome(True, f"{n} user turn(s), within the limit of {params.max}")
    return Outcome(False, f"{n} user turns, over the limit of {params.max}")
