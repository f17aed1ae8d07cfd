"""Load and validate case files: yaml.safe_load, `include:` inheritance, file:line errors."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from usersim.cases.schema import Case
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.core.yamlfile import FileProblems, LineIndex, Problem, read_yaml, validation_problems

CASES_DIR = Path(__file__).resolve().parent
# Folders that hold support data (filler library, persona scaffolds, templates), not case or persona files.
_NOT_CASE_DIRS = {"filler", "scaffold", "templates", "__pycache__"}


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_with_includes(path: Path, seen: tuple[Path, ...] = ()) -> tuple[dict[str, Any], LineIndex]:
    data, lines = read_yaml(path)
    if not isinstance(data, dict):
        raise FileProblems([Problem(str(path), 1, "", "a case file must be a YAML mapping")])
    include = data.pop("include", None)
    if include is None:
        return data, lines
    base_path = (path.parent / str(include)).resolve()
    if base_path in seen or base_path == path.resolve():
        raise FileProblems([Problem(str(path), lines.line(("include",)), "include", "include cycle")])
    if not base_path.is_file():
        raise FileProblems(
            [Problem(str(path), lines.line(("include",)), "include", f"included file not found: {base_path}")]
        )
    base, _ = _read_with_includes(base_path, seen + (path.resolve(),))
    return deep_merge(base, data), lines


def _semantic_problems(case: Case, path: Path, lines: LineIndex) -> list[Problem]:
    """Checks that need other packages: check specs, tool names."""
    problems: list[Problem] = []
    if importlib.util.find_spec("usersim.judges.checks") is not None:
        from usersim.judges.checks import validate_check

        groups: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        groups += [(("judging", "checks", i), c) for i, c in enumerate(case.judging.checks)]
        groups += [(("judging", "minefields", i), c) for i, c in enumerate(case.judging.minefields)]
        groups += [
            (("judging", "milestones", i, "check"), m.check) for i, m in enumerate(case.judging.milestones)
        ]
        for loc, spec in groups:
            try:
                validate_check(spec, case_tools=[t.name for t in case.mock_tools])
            except ValueError as exc:
                field = ".".join(str(p) for p in loc)
                problems.append(Problem(str(path), lines.line(loc), field, str(exc)))
    if importlib.util.find_spec("usersim.sandbox.tools") is not None:
        from usersim.sandbox.tools import tool_registry

        known = set(tool_registry.names()) | {t.name for t in case.mock_tools}
        named = [(("tools", i), t) for i, t in enumerate(case.tools or [])]
        named += [
            (("tool_intercepts", i, "intercept_tool"), t.intercept_tool)
            for i, t in enumerate(case.tool_intercepts)
        ]
        for loc, name in named:
            if name not in known:
                field = ".".join(str(p) for p in loc)
                problems.append(
                    Problem(
                        str(path),
                        lines.line(loc),
                        field,
                        f"unknown tool '{name}'.{did_you_mean(name, known)}",
                    )
                )
    ids = [m.id for m in case.judging.milestones]
    for i, m in enumerate(case.judging.milestones):
        for req in m.requires:
            if req not in ids:
                problems.append(
                    Problem(
                        str(path),
                        lines.line(("judging", "milestones", i, "requires")),
                        f"judging.milestones.{i}.requires",
                        f"unknown milestone '{req}'.{did_you_mean(req, set(ids))}",
                    )
                )
    return problems


def load_cases_or_exit(paths: list[str] | None) -> list[Case]:
    """For commands: the cases under `paths`, or every problem printed as file:line and exit 2."""
    import sys

    try:
        return load_cases(paths)
    except FileProblems as exc:
        for p in exc.problems:
            print(str(p), file=sys.stderr)
        sys.exit(2)


def load_case(path: str | Path) -> Case:
    """Load one case file; raises FileProblems listing every problem with file:line: field."""
    path = Path(path)
    data, lines = _read_with_includes(path)
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        raise FileProblems(validation_problems(path, exc, lines, Case)) from None
    problems = _semantic_problems(case, path, lines)
    if problems:
        raise FileProblems(problems)
    return case


def case_files(paths: list[str | Path] | None = None) -> list[Path]:
    """Case YAML files under the given files/dirs (default: the bundled cases/), sorted."""
    roots = [Path(p) for p in paths] if paths else [CASES_DIR]
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            for p in sorted(root.rglob("*.y*ml")):
                rel = p.relative_to(root).parts
                if any(part in _NOT_CASE_DIRS for part in rel) or p.name.startswith("_"):
                    continue
                found.append(p)
        else:
            raise FileNotFoundError(f"No such case file or directory: {root}")
    return found


def load_cases(paths: list[str | Path] | None = None) -> list[Case]:
    """Load every case under `paths`; all problems of all files are raised together.
    Duplicate ids are an error (ids identify results)."""
    cases: list[Case] = []
    problems: list[Problem] = []
    where: dict[str, Path] = {}
    for path in case_files(paths):
        try:
            case = load_case(path)
        except FileProblems as exc:
            problems.extend(exc.problems)
            continue
        if case.id in where:
            problems.append(
                Problem(str(path), 1, "id", f"duplicate case id '{case.id}' (also in {where[case.id]})")
            )
            continue
        where[case.id] = path
        cases.append(case)
    if problems:
        raise FileProblems(problems)
    return cases


@lru_cache(maxsize=8)
def _index(paths: tuple[str, ...]) -> dict[str, Path]:
    index: dict[str, Path] = {}
    for path in case_files(list(paths) or None):
        try:
            data, _ = read_yaml(path)
        except FileProblems:
            continue
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            index.setdefault(data["id"], path)
    return index


def find_case(case_id: str, paths: list[str] | None = None) -> Case:
    """A case by id (searching `paths`, default the bundled cases/) or by file path."""
    if case_id.endswith((".yaml", ".yml")) and Path(case_id).is_file():
        return load_case(case_id)
    index = _index(tuple(str(p) for p in paths or ()))
    if case_id not in index:
        raise UnknownNameError(f"Unknown case '{case_id}'.{did_you_mean(case_id, set(index))}")
    return load_case(index[case_id])
