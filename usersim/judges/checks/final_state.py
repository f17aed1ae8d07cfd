"""final_state: the domain database after the conversation (the benchmark's database reward).

    - final_state:
        expect:                               # table -> records, each with its key field
          accounts:
            - {account_id: A-100, balance: 105}   # field values are matchers (exact; numbers by value)
          disputes:
            - {transaction_id: T-9, status: open} # a record that must have been created
        absent: {cards: [C-1]}                # records that must be gone
        strict: true                          # (default) nothing else changed

The state is rebuilt by re-running the conversation's tool calls (those not replaced by an
intercept) on a fresh copy of the case's environment, so re-scoring a stored run sees the same
state as the live run did. When the agent ran its own tools (ToolEvent.executed_by "agent") the
sandbox state never saw them: the check is `unjudged` and says so.

Tables, key fields and fields named here must exist in the environment (cases.state_shape):
`usersim validate` reports a typo at its file:line; met at run time (the state changed shape) it is
an `error` verdict blamed on the case, never a fail charged to the agent.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.cases.environment import EnvState, Tables, table_key
from usersim.cases.schema import Case
from usersim.cases.state_shape import StateShape
from usersim.core.errors import CaseError
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.matchers import describe, is_operator, match, validate_matcher, values_equal
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.judges.checks.vacuity import never_fails


class FinalStateParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expect: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="table -> records that must be in the final state; each names its key field, other "
        "fields are matchers (a plain value is exact typed equality; {contains: s}, {place: X}, {gte: n}, "
        "{unordered: [...]} ...).",
    )
    absent: dict[str, list[Any]] = Field(
        default_factory=dict, description="table -> key values of records that must not exist."
    )
    strict: bool = Field(
        default=True,
        description="Also require that nothing else changed: no other record added, removed or modified, "
        "no other field of an expected record changed.",
    )

    @field_validator("expect")
    @classmethod
    def _matchers(cls, v: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        for table, records in v.items():
            for i, rec in enumerate(records):
                for field, m in rec.items():
                    if is_operator(m):
                        validate_matcher(m, f"expect.{table}[{i}].{field}")
        return v

    def case_problems(self, case: Case) -> list[tuple[tuple[str | int, ...], str]]:
        """(location within these params, message) for every table, key or field the case's
        environment cannot have; `usersim validate` prints them at their file:line."""
        if case.environment is None:
            return [((), "the case declares no `environment`, so there is no state to check")]
        out = shape_problems(self, StateShape.of(case.environment))
        if not self.strict and not any(self.expect.values()) and not any(self.absent.values()):
            why = "strict: false with nothing in expect or absent checks nothing"
            fix = "Give the records the state must hold, or strict: true (nothing else may change)"
            out.append((("strict",), never_fails("final_state", why, fix)))
        return out


def shape_problems(
    params: FinalStateParams, shape: StateShape, final: Tables | None = None
) -> list[tuple[tuple[str | int, ...], str]]:
    """Tables, key fields and fields of `params` that cannot exist (also checked against the
    `final` state at run time, whose tables and fields can exist by definition)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    for table, records in params.expect.items():
        bad = shape.table_problem(table, final)
        if bad:
            out.append((("expect", table), bad))
            continue
        for i, rec in enumerate(records):
            missing = shape.key_problem(table, rec, final)
            if missing:
                out.append((("expect", table, i), missing))
            for name in rec:
                key = shape.key_of(table, final)
                bad = None if name == key else shape.field_problem(table, str(name), final)
                if bad:
                    out.append((("expect", table, i, name), bad))
    for table in params.absent:
        bad = shape.table_problem(table, final)
        if bad:
            out.append((("absent", table), bad))
    return out


def _short(v: Any) -> str:
    text = str(v)
    return text if len(text) <= 40 else text[:39] + "…"


def _field_ok(expected: Any, actual: Any, present: bool, ctx: CheckContext) -> bool:
    if is_operator(expected):
        return match(expected, present, actual, ctx.today)
    return present and values_equal(expected, actual, ctx.today)


def rebuild(ctx: CheckContext) -> tuple[EnvState, int, str | None]:
    """(state after the conversation, environment calls replayed, divergence note or None)."""
    env = ctx.case.environment
    assert env is not None
    st = EnvState(env)
    replayed, diverged = 0, None
    if ctx.state.tool_trace:
        for e in ctx.state.tool_trace:
            if e.intercepted or e.executed_by == "agent" or e.name not in st.tools:
                continue
            _, is_error = st.call(e.name, dict(e.arguments))
            replayed += 1
            if diverged is None and is_error != e.is_error:  # results may be redacted: compare outcomes
                was = "failed" if e.is_error else "succeeded"
                diverged = f"call {replayed} ({e.name}) {was} in the run but not on replay"
    else:
        for c in ctx.calls():
            if c.name in st.tools:
                st.call(c.name, dict(c.arguments))
                replayed += 1
    return st, replayed, diverged


def _index(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {str(r.get(key)).strip().casefold(): r for r in rows}


def _k(v: Any) -> str:
    return str(v).strip().casefold()


@check_registry.register("final_state", FinalStateParams)
def final_state(params: FinalStateParams, ctx: CheckContext) -> Outcome:
    """The domain state after the conversation has the expected records (and, strict, nothing else changed)."""
    env = ctx.case.environment
    if env is None:
        return Outcome(False, "the case declares no `environment`, so there is no state to check")
    own = [e for e in ctx.state.tool_trace if e.executed_by == "agent"]
    if own:  # the agent's own tools changed its own data, not the sandbox's: nothing here to read
        names = ", ".join(sorted({e.name for e in own}))
        return Outcome(
            None,
            f"cannot see the state: the agent ran its own tools ({len(own)} call(s): {names}), not "
            "usersim's sandbox; let the sandbox run them (e.g. drop ?tools=own) to check the state",
            unseen=True,
        )
    st, replayed, diverged = rebuild(ctx)  # a python tool's bug: CaseError
    initial: Tables = EnvState(env).tables
    final = st.tables
    wrong = shape_problems(params, StateShape.of(env), final)
    if wrong:  # the test author's names, not the agent's work: an error blamed on the case
        where = str(ctx.case.file or ctx.case.id)
        text = "; ".join(f"{'.'.join(map(str, loc))}: {msg}" for loc, msg in wrong)
        raise CaseError(f"final_state names what the environment does not have: {text}", where=where)
    problems: list[str] = []
    matched: list[str] = []
    for table, records in params.expect.items():
        key = table_key(initial if table in initial else final, env.keys, table)
        rows = _index(final.get(table, []), key)
        for rec in records:
            got = rows.get(_k(rec[key]))
            label = f"{table} {rec[key]}"
            if got is None:
                problems.append(f"{label} missing")
                continue
            bad = [
                f"{f}={_short(got.get(f)) if f in got else 'missing'} (expected {describe(m)})"
                for f, m in rec.items()
                if f != key and not _field_ok(m, got.get(f), f in got, ctx)
            ]
            if bad:
                problems.append(f"{label}: " + ", ".join(bad))
            else:
                shown = ", ".join(f"{f}={_short(got.get(f))}" for f in rec if f != key)
                matched.append(f"{label} {shown}".strip())
    for table, keys in params.absent.items():
        key = table_key(initial if table in initial else final, env.keys, table)
        rows = _index(final.get(table, []), key)
        for k in keys:
            if _k(k) in rows:
                problems.append(f"{table} {k} still exists")
    if params.strict:
        problems += _stray_changes(params, initial, final, env.keys)
    note = f"{replayed} environment call(s) replayed"
    if diverged:
        return Outcome(None, f"cannot rebuild the state: {diverged} (tools must be deterministic); {note}")
    details = {"changed_records": _changed(initial, final, env.keys)}
    if problems:
        shown = "; ".join(problems[:6]) + (f"; … {len(problems) - 6} more" if len(problems) > 6 else "")
        return Outcome(False, f"final state differs: {shown} ({note})", details=details)
    what = "; ".join(matched[:6]) or "no expected records"
    extra = "; nothing else changed" if params.strict else ""
    return Outcome(True, f"final state matches: {what}{extra} ({note})", details=details)


def _stray_changes(
    params: FinalStateParams, initial: Tables, final: Tables, keys: dict[str, str]
) -> list[str]:
    """Records added, removed or modified that `expect` / `absent` do not account for."""
    out: list[str] = []
    for table in sorted(set(initial) | set(final)):
        key = table_key(initial if table in initial else final, keys, table)
        before, after = _index(initial.get(table, []), key), _index(final.get(table, []), key)
        expected = {_k(r.get(key)): r for r in params.expect.get(table, [])}
        gone = {_k(k) for k in params.absent.get(table, [])}
        for k, rec in after.items():
            if k not in before:
                if k not in expected:
                    out.append(f"unexpected new {table} record {rec.get(key)}")
                continue
            old = before[k]
            allowed = set(expected.get(k, {}))
            changed = [
                f"{f}: {_short(old.get(f))} -> {_short(rec.get(f))}"
                for f in sorted(set(old) | set(rec))
                if f not in allowed and not values_equal(old.get(f), rec.get(f))
            ]
            if changed:
                out.append(f"unexpected change to {table} {rec.get(key)}: " + ", ".join(changed))
        for k, rec in before.items():
            if k not in after and k not in gone:
                out.append(f"{table} {rec.get(key)} was deleted")
    return out


def _changed(initial: Tables, final: Tables, keys: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """The records the conversation added or modified, per table (the whole state can be large)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for table, rows in final.items():
        key = table_key(initial if table in initial else final, keys, table)
        before = _index(initial.get(table, []), key)
        diff = [r for r in rows if before.get(_k(r.get(key))) != r]
        if diff:
            out[table] = diff
    return out
