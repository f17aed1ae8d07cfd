"""YAML files with line numbers for error messages (safe_load only; `include:` never runs code)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError


@dataclass
class Problem:
    """One problem in one file, printed as `file:line: field: message`."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field or '<file>'}: {self.message}"


class FileProblems(ValueError):
    """A file (or several) failed validation; `problems` lists each with file:line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class LineIndex:
    """Maps a key path (('judging', 'checks', 0)) to the line of that node in the YAML source."""

    def __init__(self, root: yaml.Node | None):
        self.root = root

    def line(self, loc: Iterable[Any]) -> int:
        node = self.root
        best = node.start_mark.line + 1 if node is not None else 1
        for part in loc:
            child = None
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if k.value == str(part):
                        child = v
                        best = k.start_mark.line + 1
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                child = node.value[part]
                best = child.start_mark.line + 1
            if child is None:
                break
            node = child
        return best


def read_yaml(path: Path) -> tuple[Any, LineIndex]:
    """Parse a YAML file safely; syntax errors become FileProblems with the line."""
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else 1
        raise FileProblems([Problem(str(path), line, "", f"YAML syntax error: {exc.problem}")]) from None
    return data, LineIndex(node)


def _loc_str(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc if not (isinstance(p, str) and p.startswith("function-")))


def validation_problems(
    path: Path, exc: ValidationError, lines: LineIndex, model: type[BaseModel]
) -> list[Problem]:
    """Turn a pydantic ValidationError into file:line: field: message problems with did-you-mean."""
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            allowed = _allowed_fields(model, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
            msg = f"unknown field '{loc[-1]}'" + (f"; did you mean '{close[0]}'?" if close else "")
            if allowed:
                msg += f" (allowed: {', '.join(allowed)})"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and err["type"] not in ("value_error", "assertion_error"):
            msg = f"{msg} (got {err['input']!r:.60})"
        problems.append(Problem(str(path), lines.line(loc), _loc_str(loc), msg))
    return problems


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the sub-model at `loc` (for did-you-mean on unknown keys)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        current = _model_of(field.annotation)
        if current is None:
            return []
    return sorted(getattr(current, "model_fields", {}))


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found is not None:
            return found
    return None
