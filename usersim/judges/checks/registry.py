"""The check registry: check type name -> (params model, function); validation and running."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from usersim.core import registry as registries
from usersim.core.errors import CaseError
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.judges.checks.context import CheckContext

if TYPE_CHECKING:  # annotations only: validating a case's checks needs none of them
    from usersim.cases.schema import Case
    from usersim.core.messages import Message
    from usersim.core.verdict import Verdict
    from usersim.judges.base import JudgeState


@dataclass
class Outcome:
    """What a check found. passed=None means it could not decide: `inconclusive`, or, with
    uncertain=True, `unjudged` with reason "uncertain: ..." (the language layer's cues conflict or
    none is confident; escalated to the LLM judge when one is configured). A check never returns a
    confident fail from an unsure reading. `cues` name the resource entries and spans that decided
    (lang.Cue.describe()), shown in the reason."""

    passed: bool | None
    reason: str
    score: float | None = None
    evidence_turn: int | None = None
    details: dict | None = None
    uncertain: bool = False
    cues: list[str] | None = None
    # passed=None: `unjudged` with the reason as given, never escalated (the check cannot see what
    # it judges, e.g. the state after tools the agent ran itself)
    unseen: bool = False

    @classmethod
    def unsure(
        cls, reason: str, *, cues: list[str] | None = None, evidence_turn: int | None = None
    ) -> Outcome:
        """An undecided outcome: verdict `unjudged`, reason "uncertain: <reason>"."""
        return cls(None, reason, evidence_turn=evidence_turn, uncertain=True, cues=cues)


CheckFn = Callable[[Any, CheckContext], Outcome]


@dataclass
class CheckType:
    name: str
    params: type[BaseModel]
    fn: CheckFn

    def validate(self, raw: Any, *, case_tools: Iterable[str] = ()) -> BaseModel:
        """The params of one check validated; ValueError naming the check and field, with did-you-mean.
        `case_tools`: tool names the case defines itself (mock_tools), valid in tool checks."""
        from usersim.judges.checks.tools import CASE_TOOLS

        token = CASE_TOOLS.set(frozenset(case_tools))
        try:
            return self.params.model_validate(raw if raw is not None else {})
        except ValidationError as exc:
            raise ValueError(_explain(self, exc)) from None
        finally:
            CASE_TOOLS.reset(token)

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip().splitlines()[0] if self.fn.__doc__ else ""


class CheckRegistry:
    """Check types by name, stored in the core `checks` registry (so plugins and case validation
    see them); `register(name, Params)` decorates a check function."""

    def __init__(self) -> None:
        self._items = registries.checks

    def register(self, name: str, params: type[BaseModel]) -> Callable[[CheckFn], CheckFn]:
        def deco(fn: CheckFn) -> CheckFn:
            self._items.register(name)(CheckType(name, params, fn))
            return fn

        return deco

    def names(self) -> list[str]:
        return self._items.names()

    def get(self, name: str) -> CheckType:
        try:
            return self._items.get(name)
        except UnknownNameError as exc:
            raise ValueError(str(exc)) from None

    def parse(self, spec: Any, case_tools: Iterable[str] = ()) -> tuple[CheckType, BaseModel]:
        """Split a one-key spec {check_type: params} and validate the params (ValueError)."""
        if not isinstance(spec, dict) or len(spec) != 1:
            got = sorted(spec) if isinstance(spec, dict) else type(spec).__name__
            raise ValueError(f"a check is a one-key mapping {{check_type: params}}, got {got}")
        name, raw = next(iter(spec.items()))
        ctype = self.get(str(name))
        return ctype, ctype.validate(raw, case_tools=case_tools)


def _explain(ctype: CheckType, exc: ValidationError) -> str:
    """One line per problem, naming check and field, with did-you-mean for unknown fields."""
    fields = set(ctype.params.model_fields)
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        where = f"{ctype.name}.{loc}" if loc else ctype.name
        if err["type"] == "extra_forbidden":
            bad = str(err["loc"][-1])
            hint = did_you_mean(bad, fields) if len(err["loc"]) == 1 else ""
            lines.append(f"{where}: unknown field '{bad}'.{hint} Fields: {', '.join(sorted(fields))}")
        elif err["type"] == "literal_error":
            options = re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))
            hint = did_you_mean(str(err.get("input")), set(options))
            lines.append(f"{where}: '{err.get('input')}' is not allowed.{hint} Allowed: {', '.join(options)}")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{where}: {msg}")
    return "; ".join(lines)


check_registry = CheckRegistry()


def compact(spec: dict[str, Any], limit: int = 240) -> str:
    """A check spec as one short line, for Verdict.criterion."""
    name, params = next(iter(spec.items()))
    body = json.dumps(params, ensure_ascii=False, separators=(", ", ": ")) if params else "{}"
    text = f"{name} {body}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validate_check(spec: dict[str, Any], *, case_tools: Iterable[str] = ()) -> None:
    """Raise ValueError (naming the check and field, with did-you-mean) if `spec` is not a valid check.
    `case_tools`: tool names the case defines itself (mock_tools), valid in tool checks."""
    check_registry.parse(spec, case_tools)


def evaluate(spec: dict[str, Any], ctx: CheckContext) -> Outcome:
    """Run one check on a context (used by run_check, step_completion and milestones)."""
    ctype, params = check_registry.parse(spec, ctx.case.own_tool_names)
    return ctype.fn(params, ctx)


def to_verdict(spec: dict[str, Any], outcome: Outcome) -> Verdict:
    from usersim.core.verdict import Verdict  # (imported when checks run, not when they validate)

    name = next(iter(spec))
    if outcome.passed is None:
        value = "unjudged" if outcome.uncertain or outcome.unseen else "inconclusive"
    else:
        value = "pass" if outcome.passed else "fail"
    reason = outcome.reason
    if outcome.uncertain and not reason.startswith("uncertain:"):
        reason = f"uncertain: {reason}"
    if outcome.cues:
        reason += " [cues: " + "; ".join(outcome.cues) + "]"
    details = dict(outcome.details or {})
    if outcome.uncertain:
        details["uncertain"] = True
    if outcome.cues:
        details["cues"] = list(outcome.cues)
    return Verdict(
        judge=str(name),
        verdict=value,
        reason=reason,
        criterion=compact(spec),
        score=outcome.score,
        evidence_turn=outcome.evidence_turn,
        details=details or None,
    )


async def run_check(
    spec: dict[str, Any], *, transcript: list[Message], case: Case, state: JudgeState
) -> Verdict:
    """Run one case check on a finished conversation. A malformed spec yields an `error` verdict;
    so does a check that raises, with details {fault, where, traceback}: fault `case` for a plugin's
    code, a user tool's bug or a case naming what its environment lacks (CaseError), fault
    `infrastructure` for a built-in check's bug (judges.faults)."""
    from usersim.core.verdict import Verdict
    from usersim.judges.faults import crash_verdict

    name = str(next(iter(spec))) if isinstance(spec, dict) and spec else "check"
    try:
        ctype, params = check_registry.parse(spec, case.own_tool_names)
    except ValueError as exc:
        return Verdict(judge=name, verdict="error", reason=f"invalid check: {exc}", criterion=str(spec)[:240])
    try:
        outcome = ctype.fn(params, CheckContext(transcript, case, state))
    except CaseError as exc:  # the test author's files: not a crash, not the agent's failure
        return crash_verdict(name, exc, ctype.fn, reason=f"case error: {exc}", criterion=compact(spec))
    except Exception as exc:  # one broken check must not take the other checks' verdicts with it
        import logging  # (a crash only: validating and running sound checks log nothing)

        logging.getLogger(__name__).exception("check %s crashed", name)
        reason = f"check crashed: {type(exc).__name__}: {exc}"
        return crash_verdict(name, exc, ctype.fn, reason=reason, criterion=str(spec)[:240])
    return to_verdict(spec, outcome)
