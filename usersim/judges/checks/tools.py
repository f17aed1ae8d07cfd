"""Tool-use checks: tool_called, tool_not_called, tool_order."""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.core.registry import did_you_mean
from usersim.judges.checks.context import Call, CheckContext
from usersim.judges.checks.matchers import describe, match, validate_matcher
from usersim.judges.checks.normalize import resolve_date
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.judges.checks.vacuity import Problems, never_fails, never_passes, offered_tools

if TYPE_CHECKING:
    from usersim.cases.schema import Case


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too


def _names(v: str | list[str]) -> list[str]:
    return [v] if isinstance(v, str) else list(v)


# Tool names a case defines itself (mock_tools), accepted while its checks are validated.
CASE_TOOLS: ContextVar[frozenset[str]] = ContextVar("usersim_case_tools", default=frozenset())


def known_tools() -> set[str]:
    """Tool names the sandbox implements plus the case's own (empty when the sandbox is not in this build)."""
    try:
        from usersim.sandbox.tools import tool_registry
    except ImportError:
        return set()
    return set(tool_registry.names()) | {"load_skill"} | CASE_TOOLS.get()


def _registered(name: str) -> bool:
    try:
        from usersim.sandbox.tools import tool_registry
    except ImportError:
        return False
    return name in tool_registry


def _check_tool_names(v: str | list[str]) -> str | list[str]:
    """A misspelt tool name would make a check fail on every run: reject it at load time."""
    for name in _names(v):
        if name == "load_skill" or name in CASE_TOOLS.get() or _registered(name):
            continue  # known without listing every tool (the plugins' are read from entry points)
        known = known_tools()
        if known and name not in known:
            raise ValueError(
                f"unknown tool '{name}'.{did_you_mean(name, known)} Tools: {', '.join(sorted(known))}"
            )
    return v


def _fmt_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items()) or "no arguments"


def _short_result(result: str, limit: int = 200) -> str:
    text = " ".join(result.split()) or "(no result text)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _called_summary(calls: list[Call]) -> str:
    if not calls:
        return "no tools were called"
    counts = Counter(c.name for c in calls)
    return "tools called: " + ", ".join(f"{n} x{k}" for n, k in counts.items())


class Span(BaseModel):
    """Days between two date arguments of the same call, e.g. nights = check_out - check_in."""

    model_config = ConfigDict(extra="forbid")

    start: str = Field(description="Argument holding the first date (check_in, departure_date).")
    end: str = Field(description="Argument holding the last date (check_out, return_date).")
    days: int | list[int] = Field(description="Allowed day differences: a number or a list of numbers.")

    @property
    def allowed(self) -> list[int]:
        return [self.days] if isinstance(self.days, int) else list(self.days)


class ToolCalledParams(_Params):
    tool: str | list[str] = Field(description="Tool name, or a list of acceptable tool names.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="param -> matcher the call must satisfy. A plain value is exact typed equality "
        "(text trimmed and case-folded, numbers and money by value, dates by value with relative ones "
        "resolved against context.current_date); {contains: s} is a substring, {place: 上海} a city "
        "or any of its airports; see usersim/judges/checks/matchers.py for every operator.",
    )
    min_calls: int = Field(default=1, ge=1, description="Matching calls needed.")
    spans: list[Span] = Field(
        default_factory=list,
        description="Day differences between date arguments the matching call must have "
        "(e.g. {start: check_in, end: check_out, days: 3} for 3 nights).",
    )
    or_each_of: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Alternative to `args`: argument sets (param -> matcher) that calls of the tool match "
        "between them, each by some call, e.g. two one-way searches instead of one round-trip search.",
    )
    allow_error: bool = Field(
        default=False,
        description="Count calls the tool answered with an error too (default: an errored call never "
        "satisfies the check: a write the environment refused did not happen).",
    )

    @field_validator("tool")
    @classmethod
    def _known(cls, v: str | list[str]) -> str | list[str]:
        return _check_tool_names(v)

    @field_validator("args")
    @classmethod
    def _matchers(cls, v: dict[str, Any]) -> dict[str, Any]:
        for param, matcher in v.items():
            validate_matcher(matcher, f"args.{param}")
        return v

    @field_validator("or_each_of")
    @classmethod
    def _alt_matchers(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, args in enumerate(v):
            for param, matcher in args.items():
                validate_matcher(matcher, f"or_each_of.{i}.{param}")
        return v

    def case_problems(self, case: Case) -> Problems:
        """Acceptable tools none of which the agent is given: no call can match."""
        missing = _not_offered(_names(self.tool), case)
        if missing is None or len(missing) < len(_names(self.tool)):
            return []
        return [(("tool",), never_passes("tool_called", _offer_text(missing, case), _OFFER_FIX))]


def _span_problem(span: Span, call: Call, ctx: CheckContext) -> str | None:
    a, b = call.arguments.get(span.start), call.arguments.get(span.end)
    ra, rb = resolve_date(a, ctx.today), resolve_date(b, ctx.today)
    want = " or ".join(map(str, span.allowed))
    if ra is None or rb is None or ra[0] != ra[1] or rb[0] != rb[1]:
        return f"{span.end} - {span.start} not computable from {span.start}={a}, {span.end}={b} (expected {want} days)"
    days = (rb[0] - ra[0]).days
    return None if days in span.allowed else f"{span.end} - {span.start} = {days} days (expected {want})"


def _mismatches(params: ToolCalledParams, call: Call, ctx: CheckContext, args: Any = None) -> list[str]:
    out = []
    if args is None:
        out += [p for span in params.spans if (p := _span_problem(span, call, ctx))]
    for param, matcher in (params.args if args is None else args).items():
        present = param in call.arguments
        if not match(matcher, present, call.arguments.get(param), ctx.today):
            got = f"{param}={call.arguments[param]}" if present else f"{param} missing"
            out.append(f"{got} (expected {describe(matcher)})")
    return out


@check_registry.register("tool_called", ToolCalledParams)
def tool_called(params: ToolCalledParams, ctx: CheckContext) -> Outcome:
    """The agent called the tool (with arguments matching) at least min_calls times."""
    wanted = _names(params.tool)
    calls = ctx.calls()
    named = [c for c in calls if c.name in wanted]
    label = " or ".join(wanted)
    if not named:
        return Outcome(False, f"{label} was never called ({_called_summary(calls)})")
    # an errored call did not do what it asked (a refused write, a failed search): not evidence
    candidates = named if params.allow_error else [c for c in named if not c.is_error]
    refused = [c for c in named if c.is_error and not params.allow_error and not _mismatches(params, c, ctx)]
    matching = [c for c in candidates if not _mismatches(params, c, ctx)]
    n_args = len(params.args) + len(params.spans)
    if len(matching) >= params.min_calls:
        first = matching[0]
        detail = f"; all {n_args} required arguments match" if n_args else ""
        times = f" ({len(matching)} matching calls)" if len(matching) > 1 else ""
        return Outcome(
            True,
            f"{first.name} called with {_fmt_args(first.arguments)}{detail}{times}",
            evidence_turn=first.index if first.index >= 0 else None,
        )
    alt = ""
    if params.or_each_of:
        legs = [
            next((c for c in candidates if not _mismatches(params, c, ctx, a)), None)
            for a in params.or_each_of
        ]
        if all(legs):
            shown = "; ".join(f"{c.name}({_fmt_args(c.arguments)})" for c in legs if c)
            return Outcome(
                True,
                f"no single call matches all {n_args} arguments, but calls cover each of the "
                f"{len(legs)} alternative argument sets: {shown}",
                evidence_turn=max(c.index for c in legs if c)
                if all(c and c.index >= 0 for c in legs)
                else None,
            )
        unmet = [i for i, c in enumerate(legs) if c is None]
        alt = (
            f"; nor do the calls cover the alternative argument sets (no call matches set "
            f"{unmet[0] + 1}: {_fmt_args({k: describe(m) for k, m in params.or_each_of[unmet[0]].items()})})"
        )
    if refused:
        first = refused[0]
        return Outcome(
            False,
            f"{first.name} was called with {_fmt_args(first.arguments)} but the call errored: "
            f"{_short_result(first.result)}"
            + (
                f" ({len(matching)} matching call(s) succeeded, {params.min_calls} required)"
                if matching
                else ""
            )
            + alt,
            evidence_turn=first.index if first.index >= 0 else None,
        )
    if matching:
        return Outcome(False, f"{label}: {len(matching)} matching call(s), {params.min_calls} required")
    if not candidates:  # every call errored and none had the required arguments
        candidates = named
    best = min(candidates, key=lambda c: len(_mismatches(params, c, ctx)))
    bad = _mismatches(params, best, ctx)
    return Outcome(
        False,
        f"{best.name} called {len(candidates)} time(s) but no call matches; closest call had "
        f"{_fmt_args(best.arguments)} — {n_args - len(bad)}/{n_args} required arguments match; "
        f"mismatched: {'; '.join(bad)}{alt}",
        evidence_turn=best.index if best.index >= 0 else None,
    )


class ToolNotCalledParams(_Params):
    tool: str | list[str] = Field(description="Tool name(s) that must not be called.")

    @field_validator("tool")
    @classmethod
    def _known(cls, v: str | list[str]) -> str | list[str]:
        return _check_tool_names(v)

    def case_problems(self, case: Case) -> Problems:
        """Forbidden tools the agent is never given: they cannot be called."""
        missing = _not_offered(_names(self.tool), case)
        if not missing:
            return []
        loc: tuple[str | int, ...] = (
            ("tool",) if isinstance(self.tool, str) else ("tool", _names(self.tool).index(missing[0]))
        )
        return [(loc, never_fails("tool_not_called", _offer_text(missing, case), _OFFER_FIX))]


@check_registry.register("tool_not_called", ToolNotCalledParams)
def tool_not_called(params: ToolNotCalledParams, ctx: CheckContext) -> Outcome:
    """None of the tools was called."""
    wanted = _names(params.tool)
    calls = ctx.calls()
    hits = [c for c in calls if c.name in wanted]
    if hits:
        first = hits[0]
        return Outcome(
            False,
            f"{first.name} was called {len(hits)} time(s), first in turn {first.turn} with {_fmt_args(first.arguments)}",
            evidence_turn=first.index if first.index >= 0 else None,
        )
    return Outcome(True, f"{' / '.join(wanted)} not called ({_called_summary(calls)})")


class ToolOrderParams(_Params):
    tools: list[str] = Field(min_length=2, description="Tools whose first calls must appear in this order.")

    @field_validator("tools")
    @classmethod
    def _known(cls, v: str | list[str]) -> str | list[str]:
        return _check_tool_names(v)

    def case_problems(self, case: Case) -> Problems:
        """A tool in the order that the agent is never given: it is never called."""
        missing = _not_offered(self.tools, case)
        if not missing:
            return []
        loc = ("tools", self.tools.index(missing[0]))
        return [(loc, never_passes("tool_order", _offer_text(missing, case), _OFFER_FIX))]


_OFFER_FIX = "Add it to the case's `tools:` (or mock_tools), or name a tool the agent has"


def _not_offered(names: list[str], case: Case) -> list[str] | None:
    """The names the case never gives its agent (None when that cannot be known in this build)."""
    offered = offered_tools(case)
    return None if offered is None else [n for n in names if n not in offered]


def _offer_text(missing: list[str], case: Case) -> str:
    offered = offered_tools(case) or set()
    shown = ", ".join(sorted(offered)[:12]) + (" …" if len(offered) > 12 else "")
    domain = case.tools is None and case.environment is not None
    note = "; a domain case has only its own unless `tools:` adds more" if domain else ""
    return f"the agent is never given {', '.join(missing)} (its tools here: {shown or 'none'}{note})"


@check_registry.register("tool_order", ToolOrderParams)
def tool_order(params: ToolOrderParams, ctx: CheckContext) -> Outcome:
    """The first calls of the tools appear in the given order."""
    calls = ctx.calls()
    first: dict[str, int] = {}
    for pos, c in enumerate(calls):
        first.setdefault(c.name, pos)
    missing = [t for t in params.tools if t not in first]
    if missing:
        return Outcome(False, f"never called: {', '.join(missing)} ({_called_summary(calls)})")
    actual = sorted(params.tools, key=lambda t: first[t])
    seq = " -> ".join(f"{t} (call #{first[t] + 1})" for t in actual)
    if actual == params.tools:
        return Outcome(True, f"first calls in the required order: {seq}")
    return Outcome(False, f"first calls out of order: {seq}; required {' -> '.join(params.tools)}")
