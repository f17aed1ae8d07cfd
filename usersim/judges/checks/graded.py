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

Where the reading cannot tell (a marker read only unsurely, a question with no reply after it, the
new premise used silently), the check is `uncertain` — unjudged, escalated to the LLM judge when one
is configured — never a guessed level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.cases.grading import FAILED_LEVEL as FAILED
from usersim.cases.grading import GradingSpec
from usersim.core.errors import CaseError
from usersim.core.saferegex import case_regex
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.mentions import _numeric, find_all, match_end
from usersim.judges.checks.registry import Outcome, check_registry, evaluate
from usersim.lang import Cue, quantity
from usersim.lang.acts import QUESTIONS, agent_acts
from usersim.lang.phrases import finditer
from usersim.lang.polarity import Reader

Marker = str | list[str]  # one thing to find; a list: any of these spellings


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
            check_registry.parse(spec)
        return v


@dataclass
class Found:
    """How one marker stands in a reply: present (said plainly), asked (only in a question or a
    hypothetical: "Do you want the national figures?"), void (said to no longer hold), doubtful (only
    unsure readings), absent; the first position and the cues that decided it."""

    state: Literal["present", "asked", "void", "doubtful", "absent"]
    text: str = ""
    at: int = -1
    cues: list[Cue] = field(default_factory=list)


def _spans(alt: str, text: str) -> list[tuple[int, int]]:
    if alt.startswith("re:"):
        return [(m.start(), max(m.end(), m.start() + 1)) for m in case_regex(alt[3:]).finditer(text)]
    if _numeric(alt):  # by value, with its scale ("50k" = "50,000", "4.5万" = 45000) and unit kind
        want = quantity.parse(alt.strip())
        if want is None:
            return []
        return [
            (q.start, q.end)
            for q in quantity.quantities(text)
            if abs(q.value - want.value) < 1e-9
            and (want.dimension is None or q.dimension in (None, want.dimension))
        ]
    return [(at, match_end(text, at, alt)) for at in find_all(alt, text)]


def _superseded_near(reader: Reader, start: int) -> list[Cue]:
    """grading.superseded cues in the mention's clause or the clause right after it."""
    idx = next((i for i, c in enumerate(reader.clauses) if c.start <= start < c.end), None)
    if idx is None:
        return []
    out: list[Cue] = []
    for c in reader.clauses[idx : idx + 2]:
        piece = reader.text[c.start : c.end]
        out += [
            Cue(q.entry, q.start + c.start, q.end + c.start, q.text)
            for q in finditer(piece, "grading", "superseded")
        ]
    return out


def read_marker(marker: Marker, text: str, reader: Reader, *, old: bool) -> Found:
    """The marker's best standing in `text`: a plain mention wins over a void or unsure one. An old
    marker is void when negated (lang polarity) or said to no longer hold (grading.superseded); a new
    one only when negated."""
    best = Found("absent")
    rank = {"absent": 0, "void": 1, "asked": 2, "doubtful": 3, "present": 4}
    for alt in [marker] if isinstance(marker, str) else marker:
        for a, b in _spans(alt, text):
            reading = reader.at(a, b) if not _numeric(alt) else None  # a number is never read as negated
            void_cues = _superseded_near(reader, a) if old else []
            if reading is not None and reading.negative and reading.sure:
                got = Found("void", _clip(text[a:b]), a, list(reading.cues))
            elif void_cues:
                got = Found("void", _clip(text[a:b]), a, void_cues)
            elif reading is not None and reading.polarity in ("asked_about", "hypothetical") and reading.sure:
                got = Found("asked", _clip(text[a:b]), a, list(reading.cues))
            elif reading is not None and not reading.sure:
                got = Found("doubtful", _clip(text[a:b]), a, list(reading.cues))
            else:
                got = Found("present", _clip(text[a:b]), a, list(reading.cues) if reading else [])
            if rank[got.state] > rank[best.state] or (got.state == best.state and 0 <= got.at < best.at):
                best = got
    return best


def _clip(text: str, limit: int = 40) -> str:
    """A matched span as shown in a reason: one line, at most `limit` characters."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _name(m: Marker) -> str:
    return m if isinstance(m, str) else "/".join(m)


@dataclass
class ReplyReading:
    """What the final reply after the change does with the new and old markers."""

    new: list[tuple[Marker, Found]]
    old: list[tuple[Marker, Found]]

    @property
    def new_state(self) -> str:
        states = {f.state for _, f in self.new}
        if not self.new or states <= {"present"}:
            return "present" if self.new else "absent"
        return "doubtful" if "doubtful" in states and not states & {"absent", "void", "asked"} else "absent"

    @property
    def kept(self) -> list[tuple[Marker, Found]]:
        return [(m, f) for m, f in self.old if f.state == "present"]

    @property
    def doubtful_old(self) -> list[tuple[Marker, Found]]:
        return [(m, f) for m, f in self.old if f.state == "doubtful"]

    @property
    def first_new(self) -> int | None:
        """Where the reply first carries out the new instruction (None: nowhere)."""
        ats = [f.at for _, f in self.new if f.state == "present" and f.at >= 0]
        return min(ats) if ats else None


def _read(params: GradedParams, text: str) -> ReplyReading:
    reader = Reader(text)
    return ReplyReading(
        [(m, read_marker(m, text, reader, old=False)) for m in params.new],
        [(m, read_marker(m, text, reader, old=True)) for m in params.old],
    )


def _asked(text: str, before: int | None = None) -> list[Cue]:
    """Cues of a question to the user (request / confirm_request / clarify, lang.acts), only those
    starting before offset `before` when given."""
    out = []
    for act in agent_acts(text):
        if act.kind in QUESTIONS and act.sure and (before is None or act.start < before):
            out += list(act.cues) or [Cue(f"acts.{act.kind}", act.start, act.end, act.text[:40])]
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
    prior = _read(params, before)
    new_then = all(f.state == "present" for _, f in prior.new)
    old_then = {_name(m) for m, f in prior.old if f.state == "present"}
    return new_then and bool(old_then) and old_then <= {_name(m) for m, _ in r.kept}


def _conflict(params: GradedParams, ctx: CheckContext) -> tuple[str | None, str, list[Cue], int | None]:
    """(level code or None when unsure, why, cues, evidence transcript index)."""
    replies = _replies(params, ctx)
    if not replies:
        return "none", f"no assistant reply after the change in user turn {params.turn}", [], None
    at, final = replies[-1]
    r = _read(params, final)
    new, kept, unsure_old = r.new_state, r.kept, r.doubtful_old
    said_new = ", ".join(f.text for _, f in r.new if f.state == "present")
    if new == "doubtful" or (new == "present" and unsure_old):
        what = [f"{_name(m)} ({f.text})" for m, f in r.new + r.old if f.state == "doubtful"]
        return (
            None,
            "unsure how these stand in the reply: " + ", ".join(what),
            [c for _, f in r.new + r.old for c in f.cues],
            at,
        )
    if new == "absent":
        asked = _asked(final)
        if asked:
            return (
                None,
                "the agent asked about the change and the conversation ends before it acted on it",
                asked,
                at,
            )
        missing = ", ".join(_name(m) for m, f in r.new if f.state != "present")
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
    asked = [c for _, t in replies[:-1] for c in _asked(t, before=_read(params, t).first_new)]
    asked += _asked(final, before=r.first_new)
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
    r = _read(params, final)
    if r.kept:
        return (
            "ignored",
            "still uses the old premise: " + ", ".join(f.text for _, f in r.kept),
            [c for _, f in r.kept for c in f.cues],
            at,
        )
    if r.new_state == "doubtful" or r.doubtful_old:
        what = [f"{_name(m)} ({f.text})" for m, f in r.new + r.old if f.state == "doubtful"]
        return (
            None,
            "unsure how these stand in the reply: " + ", ".join(what),
            [c for _, f in r.new + r.old for c in f.cues],
            at,
        )
    if r.new_state == "absent":
        asked = _asked(final)
        if asked:
            return (
                None,
                "the agent asked about the new premise and the conversation ends before it used it",
                asked,
                at,
            )
        missing = ", ".join(_name(m) for m, f in r.new if f.state != "present")
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


__all__ = ["GradedParams", "graded", "read_marker"]
