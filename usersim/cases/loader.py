"""Load and validate case files: yaml.safe_load, `include:` inheritance, file:line errors."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from usersim.core import registry as registries
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.core.yamlfile import (
    FileProblems,
    LineIndex,
    Problem,
    read_text_file,
    read_yaml,
    short,
    validation_problems,
)

if TYPE_CHECKING:
    from usersim.cases.schema import Case

CASES_DIR = Path(__file__).resolve().parent
# Folders that hold support data (filler library, persona scaffolds, templates), not case or persona files.
_NOT_CASE_DIRS = {"filler", "scaffold", "templates", "lang", "__pycache__"}


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


MAX_INCLUDE_DEPTH = 8


def include_roots(root: Path | None = None) -> list[Path]:
    """Folders an `include:` may point into: the bundled cases, the folder being loaded and the
    folders listed in USERSIM_INCLUDE_PATH (os.pathsep-separated)."""
    roots = [CASES_DIR]
    if root is not None:
        roots.append(root.resolve())
    for extra in os.environ.get("USERSIM_INCLUDE_PATH", "").split(os.pathsep):
        if extra.strip():
            roots.append(Path(extra.strip()).expanduser().resolve())
    return roots


def _read_with_includes(
    path: Path, roots: list[Path] | None = None, seen: tuple[Path, ...] = ()
) -> tuple[dict[str, Any], LineIndex]:
    roots = roots if roots is not None else include_roots(path.parent)
    data, lines = read_yaml(path)
    if not isinstance(data, dict):
        raise FileProblems([Problem(str(path), 1, "", "a case file must be a YAML mapping")])
    include = data.pop("include", None)
    if include is None:
        return data, lines
    line = lines.line(("include",))

    def bad(message: str) -> FileProblems:
        return FileProblems([Problem(str(path), line, "include", message)])

    if not isinstance(include, str) or not include.strip():
        raise bad(f"include must be the path of a case file (a string), got {short(include)}")
    if len(seen) >= MAX_INCLUDE_DEPTH:
        raise bad(f"includes nest deeper than {MAX_INCLUDE_DEPTH} files")
    try:
        base_path = (path.parent / include).resolve()
        here = path.resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise bad(f"cannot resolve include {short(include)}: {exc}") from None
    if not any(base_path.is_relative_to(r) for r in roots):
        raise bad(
            f"include {short(include)} points outside the case folders ({', '.join(map(str, roots))}); "
            "add its folder to USERSIM_INCLUDE_PATH to allow it"
        )
    if base_path in seen or base_path == here:
        raise bad("include cycle")
    if not base_path.is_file():
        raise bad(f"included file not found: {short(str(base_path), 200)}")
    base, _ = _read_with_includes(base_path, roots, seen + (here,))
    return deep_merge(base, data), lines


def _semantic_problems(case: Case, path: Path, lines: LineIndex) -> list[Problem]:
    """Check specs and tool names, against the check types and tools registered by the installed plugins."""
    from usersim.cases.env_checks import environment_problems

    problems: list[Problem] = []
    case_tools = case.own_tool_names  # mock tools and environment tools
    groups: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    groups += [(("judging", "checks", i), c) for i, c in enumerate(case.judging.checks)]
    groups += [(("judging", "minefields", i), c) for i, c in enumerate(case.judging.minefields)]
    groups += [
        (("judging", "milestones", i, "check"), m.check) for i, m in enumerate(case.judging.milestones)
    ]
    for loc, spec in groups:
        name, raw = next(iter(spec.items()))  # the schema keeps checks one-key mappings
        try:
            registries.checks.get(str(name)).validate(raw, case_tools=case_tools)
        except (UnknownNameError, ValueError) as exc:
            field = ".".join(str(p) for p in loc)
            problems.append(Problem(str(path), lines.line(loc), field, str(exc)))
    named = [(("tools", i), t) for i, t in enumerate(case.tools or [])]
    named += [
        (("tool_intercepts", i, "intercept_tool"), t.intercept_tool)
        for i, t in enumerate(case.tool_intercepts)
    ]
    for loc, name in named:
        # a built-in or the case's own tool is known without listing the plugins' (entry points)
        if name not in case_tools and name not in registries.tools:
            known = set(registries.tools.names()) | set(case_tools)
            field = ".".join(str(p) for p in loc)
            problems.append(
                Problem(
                    str(path), lines.line(loc), field, f"unknown tool '{name}'.{did_you_mean(name, known)}"
                )
            )
    problems += environment_problems(case, path, lines)  # tables, keys, fields, tool parameters
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
        bad = len({p.file for p in exc.problems})
        print(f"{bad} case file(s) with problems; nothing was run", file=sys.stderr)
        sys.exit(2)
    except FileNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        sys.exit(2)


def load_case(path: str | Path, root: Path | None = None) -> Case:
    """Load one case file; raises FileProblems listing every problem with file:line: field.
    `include:` may point into the bundled cases, `root` (default: the file's folder) and
    USERSIM_INCLUDE_PATH."""
    from pydantic import ValidationError

    from usersim.cases.schema import Case

    path = Path(path)
    data, lines = _read_with_includes(path, include_roots(root or path.parent))
    try:
        case = Case.model_validate(data, context={"case_dir": path.parent})
    except ValidationError as exc:
        raise FileProblems(validation_problems(path, exc, lines, Case)) from None
    except Exception as exc:  # noqa: BLE001  a validator bug must not hide the other files
        raise FileProblems(
            [Problem(str(path), 1, "", f"cannot validate: {type(exc).__name__}: {exc}")]
        ) from None
    try:
        problems = _semantic_problems(case, path, lines)
    except Exception as exc:  # noqa: BLE001  same: report it as this file's problem
        problems = [Problem(str(path), 1, "judging", f"cannot check: {type(exc).__name__}: {exc}")]
    if problems:
        raise FileProblems(problems)
    case._file = path
    return case


def case_files(paths: list[str | Path] | None = None) -> list[Path]:
    """Case YAML files under the given files/dirs (default: the bundled cases/), sorted."""
    return [p for p, _ in _case_files_with_roots(paths)]


# Keys a case file has (one of them at least); a YAML file found in a folder walk with none of them is
# support data (an environment's state tables, a shared suite), not a case.
_CASE_KEYS = {"id", "judging", "include", "input", "mode", "dimension"}


_TOP_KEY = re.compile(r"""^(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#'"\-?:\[{&*!|>%@`][^:\n]*?))[ \t]*:(?:[ \t]|$)""")


def _top_level_keys(path: Path) -> list[str] | None:
    """The top-level keys of a block-style YAML mapping, read off the lines that start at column 0
    (in a block mapping nothing else does, but comments and `---`), or None when the file is not
    that simple (flow style, several documents, a top-level list or scalar, unreadable): then it
    is parsed. Telling a case by its keys spares a parse per case file."""
    try:
        text = read_text_file(path)
    except FileProblems:
        return None
    keys: list[str] = []
    for line in text.splitlines():
        if not line or line[0] in " \t#" or line.startswith("%YAML"):
            continue
        if line.startswith(("---", "...")) and keys:
            return None
        if line.startswith("---"):
            if line[3:].split("#", 1)[0].strip():
                return None  # content on the marker's line
            continue
        m = _TOP_KEY.match(line)
        if m is None:
            return None
        keys.append(next(g for g in m.groups() if g is not None).strip())
    return keys or None


_KINDS: dict[tuple[str, int, int], str] = {}  # (path, mtime, size) -> kind: a folder walk asks twice


def file_kind(path: Path) -> str:
    """case | persona | data, from the file's folder and its top-level keys. A file that cannot be
    read counts as a case, so that its problems are reported."""
    if "personas" in path.parts:
        return "persona"
    try:
        st = path.stat()
    except OSError:
        return _file_kind(path)
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _KINDS:
        _KINDS[key] = _file_kind(path)
    return _KINDS[key]


def _file_kind(path: Path) -> str:
    keys = _top_level_keys(path)
    if keys is not None and _CASE_KEYS & set(keys) and ("identity" not in keys or "judging" in keys):
        return "case"  # said by its keys; anything else is parsed (a broken file counts as a case)
    try:
        data, _ = read_yaml(path)
    except FileProblems:
        return "case"
    if isinstance(data, dict) and "identity" in data and "judging" not in data:
        return "persona"
    if isinstance(data, dict) and data and not (_CASE_KEYS & set(data)):
        return "data"
    return "case"


def _case_files_with_roots(paths: list[str | Path] | None) -> list[tuple[Path, Path]]:
    """(case or persona file, the folder it was found under) for each YAML file under `paths`;
    support data found in a folder walk is left out."""
    roots = [Path(p) for p in paths] if paths else [CASES_DIR]
    found: list[tuple[Path, Path]] = []
    for root in roots:
        if root.is_file():
            found.append((root, root.parent))
        elif root.is_dir():
            for p in sorted(root.rglob("*.y*ml")):
                rel = p.relative_to(root).parts
                if any(part in _NOT_CASE_DIRS for part in rel) or p.name.startswith("_"):
                    continue
                if p.is_file() and file_kind(p) != "data":
                    found.append((p, root))
        else:
            raise FileNotFoundError(f"No such case file or directory: {root}")
    return found


def load_cases(paths: list[str | Path] | None = None) -> list[Case]:
    """Load every case under `paths`; all problems of all files are raised together.
    Duplicate ids are an error (ids identify results)."""
    cases, problems = load_cases_partial(paths)
    if problems:
        raise FileProblems(problems)
    return cases


def load_cases_partial(paths: list[str | Path] | None = None) -> tuple[list[Case], list[Problem]]:
    """(the valid cases, the problems of the others): one bad file never hides the rest.
    Raises FileNotFoundError for a path that does not exist."""
    cases: list[Case] = []
    problems: list[Problem] = language_folders(paths)
    where: dict[str, Path] = {}
    explicit = {Path(p) for p in paths or []}
    for path, root in _case_files_with_roots(paths):
        if path not in explicit and file_kind(path) == "persona":
            continue  # a domain folder holds its personas beside its cases
        try:
            case = load_case(path, root)
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
    return cases, problems


def language_folders(paths: list[str | Path] | None) -> list[Problem]:
    """A `lang/` folder inside a case folder (a domain folder) extends the language layer with the
    domain's own words (`lang/<code>/<topic>.yaml`, see usersim/lang/resources.py); returns the
    problems of its files (unreadable YAML, not a mapping, an unknown language folder)."""
    from usersim import lang
    from usersim.lang.resources import ResourceError, add_resource_dir

    problems: list[Problem] = []
    for root in [Path(p) for p in paths or []]:
        folder = root / "lang" if root.is_dir() else None
        if folder is None or not folder.is_dir():
            continue
        codes = set(lang.language_codes())
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            if sub.name not in codes:
                problems.append(
                    Problem(
                        str(sub),
                        1,
                        "",
                        f"unknown language folder '{sub.name}'.{did_you_mean(sub.name, codes)} "
                        f"Languages: {', '.join(sorted(codes))}",
                    )
                )
        add_resource_dir(folder)
        for code in codes:
            try:
                lang.resources(code)
            except ResourceError as exc:
                problems.append(Problem(str(exc).split(": ", 1)[0], 1, "", str(exc).split(": ", 1)[-1]))
    return problems


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
