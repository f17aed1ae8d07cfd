"""A case checked against the environment it runs in (part of `usersim validate` and of loading):

* a check whose params define `case_problems(case)` (final_state, step_completion, plugins) reports
  each table, key field or field its environment cannot have;
* a tool check's `args` (and `or_each_of`), a tool intercept's `intercept_condition.param` and a
  mock tool answer's `when` must name parameters of the tool's schema, with did-you-mean.

Each problem is a `file:line: field: message` Problem, so a test author's typo is found before any
conversation runs instead of failing the agent at run time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from usersim.cases.environment import build_tools
from usersim.cases.schema import Case
from usersim.core import registry as registries
from usersim.core.registry import did_you_mean
from usersim.core.yamlfile import LineIndex, Problem

Loc = tuple[Any, ...]


def environment_problems(case: Case, path: Path, lines: LineIndex) -> list[Problem]:
    """Problems of `case` against its environment and tool schemas (empty when none)."""
    out: list[Problem] = []

    def add(loc: Loc, message: str) -> None:
        out.append(Problem(str(path), lines.line(loc), ".".join(str(p) for p in loc), message))

    schemas = _tool_parameters(case)
    for loc, spec in _specs(case):
        name, raw = next(iter(spec.items()))
        try:
            params = registries.checks.get(str(name)).validate(raw, case_tools=case.own_tool_names)
        except (KeyError, ValueError):  # an invalid spec is reported by the loader's own pass
            continue
        hook = getattr(params, "case_problems", None)
        if callable(hook):
            for sub, message in hook(case):
                add((*loc, name, *sub), message)
        for sub, message in _arg_problems(raw, schemas):
            add((*loc, name, *sub), message)
    for i, mock in enumerate(case.mock_tools):  # an answer keyed on a parameter the tool lacks never fires
        known = schemas.get(mock.name)
        for j, resp in enumerate(mock.responses):
            for param in resp.when:
                if known and param not in known:
                    add(("mock_tools", i, "responses", j, "when", param), _unknown(mock.name, param, known))
    for i, ic in enumerate(case.tool_intercepts):
        known = schemas.get(ic.intercept_tool)
        cond = ic.intercept_condition
        if known and cond is not None and cond.param not in known:
            add(
                ("tool_intercepts", i, "intercept_condition", "param"),
                _unknown(ic.intercept_tool, cond.param, known),
            )
    return out


def _specs(case: Case) -> Iterator[tuple[Loc, dict[str, Any]]]:
    for i, c in enumerate(case.judging.checks):
        yield ("judging", "checks", i), c
    for i, c in enumerate(case.judging.minefields):
        yield ("judging", "minefields", i), c
    for i, m in enumerate(case.judging.milestones):
        yield ("judging", "milestones", i, "check"), m.check


def _tool_parameters(case: Case) -> dict[str, set[str]]:
    """Tool name -> parameter names, for the tools the case defines (with a declared schema)."""
    out: dict[str, set[str]] = {}
    for t in case.mock_tools:
        props = (t.parameters or {}).get("properties") or {}
        if props:
            out[t.name] = set(props)
    if case.environment is not None:
        for name, tool in build_tools(case.environment).items():
            out.setdefault(name, set((tool.parameters or {}).get("properties") or {}))
    return out


def _registered_parameters(tool: str) -> set[str]:
    """Parameter names of a built-in or plugin tool (empty when unknown or schema-less)."""
    if tool not in registries.tools:
        return set()
    try:
        schema = registries.tools.get(tool).schema()
        return set(schema["function"]["parameters"].get("properties") or {})
    except Exception:  # noqa: BLE001  a tool without the usual schema shape: nothing to check against
        return set()


def _arg_problems(raw: Any, schemas: dict[str, set[str]]) -> Iterator[tuple[Loc, str]]:
    """A tool check's argument names that the tool does not take."""
    if not isinstance(raw, dict) or not isinstance(raw.get("tool"), str):
        return
    tool = raw["tool"]
    known = schemas.get(tool) or _registered_parameters(tool)
    if not known:
        return
    if isinstance(raw.get("args"), dict):
        for param in raw["args"]:
            if str(param) not in known:
                yield ("args", param), _unknown(tool, str(param), known)
    for i, alt in enumerate(raw.get("or_each_of") or []):
        if isinstance(alt, dict):
            for param in alt:
                if str(param) not in known:
                    yield ("or_each_of", i, param), _unknown(tool, str(param), known)


def _unknown(tool: str, param: str, known: set[str]) -> str:
    return (
        f"tool '{tool}' has no parameter '{param}'.{did_you_mean(param, known)} "
        f"Parameters: {', '.join(sorted(known))}"
    )
