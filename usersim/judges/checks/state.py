"""Checks on the graph state and composite checks: step_completion, skill_triggered,
skill_not_triggered, stop_reason, turns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.cases.schema import Case
from usersim.core.events import StopReason
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry, evaluate, validate_check


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

    def case_problems(self, case: Case) -> list[tuple[tuple[str | int, ...], str]]:
        """The steps' own checks against the case's environment (e.g. a final_state step naming a
        table that does not exist), located under steps.<i>.check.<type>."""
        out: list[tuple[tuple[str | int, ...], str]] = []
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


@check_registry.register("turns", TurnsParams)
def turns(params: TurnsParams, ctx: CheckContext) -> Outcome:
    """The conversation took at most `max` user turns."""
    n = ctx.state.turns
    if n <= params.max:
        return Outcome(True, f"{n} user turn(s), within the limit of {params.max}")
    return Outcome(False, f"{n} user turns, over the limit of {params.max}")
