"""graded: seed 003's graded scores, decided from the agent's replies through the language layer.

The case's `judging.grading` names the scale (usersim/cases/grading.py); this check decides the level:

- conflict (100/80/40/0): after the user's change (`turn`), does the final reply carry out the new
  instruction (`new` markers, each read with its polarity: "不再按价格" is no mention), does it keep
  the old one's result (`old` markers not said to be void — "之前的 3,810 元已不成立" is not kept,
  `lang` grading.superseded), and did the agent ask to confirm (an asking act, `lang.acts`) before
  acting? new and nothing old kept: 立即纠正, or 确认后纠正 when a question came first; new and old
  kept: 部分纠正; new not carried out: 不纠正.
- implicit_conflict (100/0): the new premise used, nothing of the old kept, and the reply points out
  that the premise changed (an old result said to be void, or grading.acknowledged: "按新的汇率重新
  计算"): 隐性冲突识别; the old premise still used, or the new one not: 隐性冲突忽略.
- reference / topic_switch (100/80/60): the `done` checks decide whether the referent was resolved
  (the topic's progress recalled); resolved earns the scenario's level, else 0.

A reply that only repeats the answer to the old instruction (the signs of the new one were already
in it and nothing of the old was dropped) is 不纠正, not 部分纠正.

Where the reading cannot tell (a marker read only unsurely, a question with no reply after it, the
new premise used silently), the check is `uncertain` — unjudged, escalated to the LLM judge when one
is configured — never a guessed level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.cases.grading import FAILED_LEVEL as FAILED
from usersim.cases.grading import GRADING_SCALES, GradingSpec
from usersim.core.errors import CaseError
from usersim.core.saferegex import case_regex
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.graded_reading import Marker, ReplyReading, marker_name, questions_in, read_reply
from usersim.judges.checks.registry import Outcome, check_registry, evaluate
from usersim.judges.checks.vacuity import Problems, matches_empty, never_fails, never_passes
from usersim.lang import Cue
from usersim.lang.phrases import finditer

if TYPE_CHECKING:
    from usersim.cases.schema import Case


class GradedParams(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    turn: int = Field(
        default=1, ge=1, description="The live user turn that changes the instruction (conflict scales)."
    )
    new: list[Marker] = Field(
        default_factory=list,
        description="conflict scales: what carrying out the new instruction / premise shows, every one "
        "needed (a string, 're:REGEX', or a list of alternatives; numbers by value).",
    )
    old: list[Marker] = Field(
        default_factory=list,
        description="conflict scales: what keeping the old instruction / premise shows (any one kept).",
    )
    done: list[dict[str, Any]] = Field(
        default_factory=list,
        description="reference / topic_switch: rule checks that all pass when the referent was resolved "
        "(the topic's progress recalled).",
    )

    @field_validator("new", "old")
    @classmethod
    def _markers(cls, v: list[Marker]) -> list[Marker]:
        for m in v:
            for alt in [m] if isinstance(m, str) else m:
                if not str(alt).strip():
                    raise ValueError("a marker is a non-empty string")
                if alt.startswith("re:"):
                    case_regex(alt[3:])  # re.error / UnsafePatternError name the pattern
        return v

    @field_validator("done")
    @classmethod
    def _checks(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, spec in enumerate(v):
            if not isinstance(spec, dict) or len(spec) != 1:
                raise ValueError(f"done[{i}] must be a one-key mapping {{check_type: params}}")
            if "graded" in spec:
                raise ValueError(f"done[{i}]: a graded check cannot contain another")
            from usersim.judges.checks.tools import CASE_TOOLS

            check_registry.parse(spec, CASE_TOOLS.get())  # the case's own tools stay valid in done checks
        return v

    def case_problems(self, case: Case) -> Problems:
        """The scale's required part missing, a pass mark every
        reachable level meets or none does, a marker found in every reply, and the `done` checks'
        own problems."""
        grading = case.judging.grading
        if grading is None:  # the case schema requires judging.grading with a graded check
            return []
        out: Problems = []
        if grading.scale in FAILED and not self.done:
            out.append(
                (("done",), f"a {grading.scale} grade needs `done` checks (when the referent was resolved)")
            )
        if grading.scale not in FAILED and not self.new:
            out.append(
                (("new",), f"a {grading.scale} grade needs `new` markers (what the new instruction shows)")
            )
        levels = GRADING_SCALES[grading.scale]
        if grading.scale in FAILED:
            levels = [lv for lv in levels if lv.code in (grading.scenario, FAILED[grading.scale])]
        points = sorted(lv.points for lv in levels)
        if grading.threshold <= points[0]:
            why = f"every level of the {grading.scale} scale reaches pass_at {grading.threshold}"
            out.append(
                ((), never_fails("graded", why, "Give judging.grading.pass_at above the lowest level"))
            )
        elif grading.threshold > points[-1]:
            why = f"no level this case can reach has {grading.threshold} points (at most {points[-1]})"
            out.append(((), never_passes("graded", why, "Lower judging.grading.pass_at")))
        for name in ("new", "old"):
            for i, m in enumerate(getattr(self, name)):
                for alt in [m] if isinstance(m, str) else m:
                    if alt.startswith("re:") and matches_empty(alt[3:]):
                        out.append(
                            ((name, i), f"/{alt[3:]}/ matches the empty string, so it is in every reply")
                        )
        for i, spec in enumerate(self.done):
            ctype, params = check_registry.parse(spec, case.own_tool_names)
            hook = getattr(params, "case_problems", None)
            if callable(hook):
                out += [(("done", i, ctype.name, *loc), msg) for loc, msg in hook(case)]
        return out


def _replies(params: GradedParams, ctx: CheckContext) -> list[tuple[int, str]]:
    return [
        (i, m.content)
        for i, m in ctx.live()
        if m.role == "assistant" and m.content.strip() and ctx.turn_of(i) >= params.turn
    ]


def _before_change(params: GradedParams, ctx: CheckContext) -> str:
    """The agent's last reply before the user's change (what the old instruction produced)."""
    live_users = [i for i, m in ctx.live() if m.role == "user"]
    cut = live_users[params.turn - 1] if len(live_users) >= params.turn else len(ctx.transcript)
    return next(
        (m.content for m in reversed(ctx.transcript[:cut]) if m.role == "assistant" and m.content.strip()), ""
    )


def _repeats(params: GradedParams, r: ReplyReading, before: str) -> bool:
    """The reply only repeats the old answer: every sign of the new instruction was already in the
    answer before the change, and nothing the old answer showed was dropped."""
    if not before:
        return False
    prior = read_reply(params.new, params.old, before)
    new_then = all(f.state == "present" for _, f in prior.new)
    old_then = {marker_name(m) for m, f in prior.old if f.state == "present"}
    return new_then and bool(old_then) and old_then <= {marker_name(m) for m, _ in r.kept}


def _conflict(params: GradedParams, ctx: CheckContext) -> tuple[str | None, str, list[Cue], int | None]:
    """(level code or None when unsure, why, cues, evidence transcript index)."""
    replies = _replies(params, ctx)
    if not replies:
        return "none", f"no assistant reply after the change in user turn {params.turn}", [], None
    at, final = replies[-1]
    r = read_reply(params.new, params.old, final)
    new, kept, unsure_old = r.new_state, r.kept, r.doubtful_old
    said_new = ", ".join(f.text for _, f in r.new if f.state == "present")
    if new == "doubtful" or (new == "present" and unsure_old):
        what = [f"{marker_name(m)} ({f.text})" for m, f in r.new + r.old if f.state == "doubtful"]
        return (
            None,
            "unsure how these stand in the reply: " + ", ".join(what),
            [c for _, f in r.new + r.old for c in f.cues],
            at,
        )
    if new == "absent":
        asked = questions_in(final)
        if asked:
            return (
                None,
                "the agent asked about the change and the conversation ends before it acted on it",
                asked,
                at,
            )
        missing = ", ".join(marker_name(m) for m, f in r.new if f.state != "present")
        why = f"the new instruction is not carried out (missing {missing})"
        if kept:
            why += "; the reply keeps the old: " + ", ".join(f.text for _, f in kept)
        return "none", why, [c for _, f in kept for c in f.cues], at
    if kept and _repeats(params, r, _before_change(params, ctx)):
        return (
            "none",
            "repeats the answer to the old instruction: " + ", ".join(f.text for _, f in kept),
            [c for _, f in kept for c in f.cues],
            at,
        )
    if kept:
        return (
            "partial",
            f"carried out the new instruction ({said_new}) but kept the old: "
            + ", ".join(f.text for _, f in kept),
            [c for _, f in kept for c in f.cues],
            at,
        )
    # a question before the reply's first sign of the new instruction (not "anything else?" after it)
    asked = [
        c
        for _, t in replies[:-1]
        for c in questions_in(t, before=read_reply(params.new, params.old, t).first_new)
    ]
    asked += questions_in(final, before=r.first_new)
    voided = [c for _, f in r.old for c in f.cues if f.state == "void"]
    if asked:
        return (
            "confirmed",
            f"asked to confirm first, then carried out the new instruction ({said_new})",
            asked + voided,
            at,
        )
    return (
        "immediate",
        f"carried out the new instruction at once ({said_new}), nothing of the old kept",
        voided,
        at,
    )


def _implicit(params: GradedParams, ctx: CheckContext) -> tuple[str | None, str, list[Cue], int | None]:
    replies = _replies(params, ctx)
    if not replies:
        return "ignored", f"no assistant reply after the change in user turn {params.turn}", [], None
    at, final = replies[-1]
    r = read_reply(params.new, params.old, final)
    if r.kept:
        return (
            "ignored",
            "still uses the old premise: " + ", ".join(f.text for _, f in r.kept),
            [c for _, f in r.kept for c in f.cues],
            at,
        )
    if r.new_state == "doubtful" or r.doubtful_old:
        what = [f"{marker_name(m)} ({f.text})" for m, f in r.new + r.old if f.state == "doubtful"]
        return (
            None,
            "unsure how these stand in the reply: " + ", ".join(what),
            [c for _, f in r.new + r.old for c in f.cues],
            at,
        )
    if r.new_state == "absent":
        asked = questions_in(final)
        if asked:
            return (
                None,
                "the agent asked about the new premise and the conversation ends before it used it",
                asked,
                at,
            )
        missing = ", ".join(marker_name(m) for m, f in r.new if f.state != "present")
        return "ignored", f"the new premise is not used (missing {missing})", [], at
    said_new = ", ".join(f.text for _, f in r.new if f.state == "present")
    voided = [c for _, f in r.old for c in f.cues if f.state == "void"]
    pointed = voided + list(finditer(final, "grading", "acknowledged"))
    if pointed:
        return (
            "recognized",
            f"pointed out that the premise changed and used the new one ({said_new})",
            pointed,
            at,
        )
    return (
        None,
        f"used the new premise ({said_new}) without saying that the earlier result no longer holds",
        [],
        at,
    )


def _resolved(
    grading: GradingSpec, params: GradedParams, ctx: CheckContext
) -> tuple[str | None, str, list[Any], int | None]:
    outcomes = [(spec, evaluate(spec, ctx)) for spec in params.done]
    unsure = [o for _, o in outcomes if o.passed is None]
    failed = [o for _, o in outcomes if o.passed is False]
    turn = next((o.evidence_turn for _, o in outcomes if o.evidence_turn is not None), None)
    assert grading.scenario is not None  # GradingSpec requires it for these scales
    deciding = failed or unsure or [o for _, o in outcomes]
    cues = [c for o in deciding for c in o.cues or []]
    why = "; ".join(o.reason for o in deciding)
    if failed:
        return FAILED[grading.scale], why, cues, turn
    return (None if unsure else grading.scenario), why, cues, turn


@check_registry.register("graded", GradedParams)
def graded(params: GradedParams, ctx: CheckContext) -> Outcome:
    """Seed 003 graded level (conflict 100/80/40/0, implicit 100/0, reference / topic switch 100/80/60)."""
    grading = ctx.case.judging.grading
    if grading is None:
        raise CaseError(f"case {ctx.case.id}: a graded check needs judging.grading (its scale)")
    if grading.scale in FAILED:
        if not params.done:
            raise CaseError(f"case {ctx.case.id}: graded.done is empty; a {grading.scale} grade needs checks")
        code, why, cues, turn = _resolved(grading, params, ctx)
    else:
        if not params.new:
            raise CaseError(f"case {ctx.case.id}: graded.new is empty; a {grading.scale} grade needs markers")
        code, why, cues, turn = (_conflict if grading.scale == "conflict" else _implicit)(params, ctx)
    shown = list(dict.fromkeys(c if isinstance(c, str) else c.describe() for c in cues)) or None
    base = {"scale": grading.scale, "pass_at": grading.threshold}
    if code is None:
        out = Outcome.unsure(f"{grading.scale} level: {why}", cues=shown)
        out.details = {**base, "level": "uncertain"}
        out.evidence_turn = turn
        return out
    lv = grading.level(code)
    passed = lv.points >= grading.threshold
    return Outcome(
        passed,
        f"{lv.name} ({lv.points} points, pass at {grading.threshold}): {why}",
        score=round(lv.points / 100, 4),
        evidence_turn=turn,
        cues=shown,
        details={**base, "level": lv.code, "level_name": lv.name, "points": lv.points},
    )


__all__ = ["GradedParams", "graded"]
