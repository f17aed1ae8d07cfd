"""Load persona files (yaml.safe_load, file:line errors) and resolve a case's persona."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from usersim.cases.loader import deep_merge
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.core.yamlfile import FileProblems, LineIndex, Problem, read_yaml, validation_problems
from usersim.personas.schema import Persona

if TYPE_CHECKING:
    from usersim.cases.schema import Case

LIBRARY_DIR = Path(__file__).resolve().parent / "library"


# Parsed persona files keyed by (resolved path, mtime_ns, size): a run parses each persona once, an
# edited file is read again. Callers get a deep copy, never the cached object.
_parsed: dict[tuple[str, int, int], tuple[Persona, LineIndex]] = {}


def read_persona_file(path: str | Path) -> tuple[Persona, LineIndex]:
    """Parse and validate one persona file; raises FileProblems (`file:line: field: message`)."""
    persona, lines = _read_shared(Path(path))
    return persona.model_copy(deep=True), lines


def _read_shared(path: Path) -> tuple[Persona, LineIndex]:
    """The cached parse itself: for callers that only read it (never changed, never handed out)."""
    if not path.is_file():
        raise FileProblems([Problem(str(path), 1, "", "persona file not found")])
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _parsed:
        _parsed[key] = _parse_persona_file(path)
    return _parsed[key]


def _parse_persona_file(path: Path) -> tuple[Persona, LineIndex]:
    data, lines = read_yaml(path)
    if not isinstance(data, dict):
        raise FileProblems(
            [Problem(str(path), 1, "", "a persona file must be a YAML mapping (id: ..., name: ...)")]
        )
    try:
        persona = Persona.model_validate(data)
    except ValidationError as exc:
        raise FileProblems(validation_problems(path, exc, lines, Persona)) from None
    if persona.id.split("~")[0] != path.stem:
        raise FileProblems(
            [
                Problem(
                    str(path),
                    lines.line(("id",)),
                    "id",
                    f"id '{persona.id}' must equal the file name '{path.stem}'",
                )
            ]
        )
    return persona, lines


def load_persona_file(path: str | Path) -> Persona:
    """A validated Persona from a YAML file."""
    return read_persona_file(path)[0]


def library_ids(library: Path = LIBRARY_DIR) -> list[str]:
    """Ids (file stems) of the personas in a library folder."""
    return sorted(p.stem for p in library.glob("*.yaml"))


# Persona folders given on the command line (`--personas DIR`); see persona_dirs().
_extra_dirs: list[Path] = []
PERSONAS_PATH_ENV = "USERSIM_PERSONAS_PATH"
_FOLDER_LEVELS = 4  # how far up from a case file a `personas/` folder is looked for


def set_persona_dirs(dirs: list[str | Path] | tuple[str | Path, ...]) -> None:
    """The persona folders of this command (`--personas DIR`, repeatable); replaces earlier ones."""
    _extra_dirs[:] = [Path(d) for d in dirs]


def persona_dirs(case_file: str | Path | None = None) -> list[Path]:
    """Where persona ids are looked up, in order: `--personas` folders, USERSIM_PERSONAS_PATH,
    a `personas/` folder beside the case file or in one of its parent folders, then the library."""
    dirs = list(_extra_dirs)
    for extra in os.environ.get(PERSONAS_PATH_ENV, "").split(os.pathsep):
        if extra.strip():
            dirs.append(Path(extra.strip()).expanduser())
    if case_file is not None:
        folder = Path(case_file).resolve().parent
        for level, d in enumerate([folder, *folder.parents]):
            if level > _FOLDER_LEVELS:
                break
            if d.name == "personas":
                dirs.append(d)
            if (d / "personas").is_dir():
                dirs.append(d / "personas")
    dirs.append(LIBRARY_DIR)
    out: list[Path] = []
    for d in dirs:
        if d.resolve() not in [o.resolve() for o in out]:
            out.append(d)
    return out


def looks_like_path(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref


def find_persona(
    ref: str | Path, *, case_file: str | Path | None = None, library: Path | None = None
) -> Path:
    """The file a persona reference names: a path (relative to the case file, else to the current
    folder) or an id looked up in persona_dirs(case_file). Raises UnknownNameError saying where it looked."""
    text = str(ref).strip()
    if looks_like_path(text):
        path = Path(text).expanduser()
        candidates = [path] if path.is_absolute() else []
        if not path.is_absolute():
            if case_file is not None:
                candidates.append(Path(case_file).parent / path)
            candidates.append(path)
        for c in candidates:
            if c.is_file():
                return c
        raise UnknownNameError(
            f"persona file not found: {text} (looked for {', '.join(str(c) for c in candidates)})"
        )
    dirs = persona_dirs(case_file)
    if library is not None and library != LIBRARY_DIR:
        dirs = [library if d == LIBRARY_DIR else d for d in dirs]
    for d in dirs:
        for suffix in (".yaml", ".yml"):
            if (d / f"{text}{suffix}").is_file():
                return d / f"{text}{suffix}"
    known = sorted({p.stem for d in dirs if d.is_dir() for p in d.glob("*.y*ml")})
    local = [str(d) for d in dirs if d != LIBRARY_DIR and d != library]
    raise UnknownNameError(
        f"Unknown persona '{text}'.{did_you_mean(text, known)} Looked in: "
        f"{', '.join(local + ['the bundled library ' + str(library or LIBRARY_DIR)])}. Name a persona id "
        f"from one of these folders or a file path relative to the case file, or pass `--personas DIR`; "
        f"create one with `usersim persona new {text}`. Available: {', '.join(known[:12])}"
        + (" ..." if len(known) > 12 else "")
    )


def load_persona(
    id_or_path: str | Path, *, library: Path = LIBRARY_DIR, case_file: str | Path | None = None
) -> Persona:
    """A persona by id or by file path (see find_persona).

    Unknown ids raise UnknownNameError: "Unknown persona 'x'. Did you mean 'y'? Looked in: ...".
    """
    return load_persona_file(_locate(id_or_path, library=library, case_file=case_file))


def _locate(id_or_path: str | Path, *, library: Path, case_file: str | Path | None) -> Path:
    text = str(id_or_path)
    if not looks_like_path(text) and Path(text).is_file():
        return Path(text)
    return find_persona(text, case_file=case_file, library=library)


def apply_overrides(
    persona: Persona, overrides: dict[str, Any], *, where: str = "persona_overrides"
) -> Persona:
    """The persona with `overrides` deep-merged in (mappings merge, lists and scalars replace)."""
    if not overrides:
        return persona
    merged = deep_merge(persona.model_dump(), overrides)
    try:
        return Persona.model_validate(merged)
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{where} for persona '{persona.id}' are invalid: {details}") from None


def resolve_persona(case: Case, *, library: Path = LIBRARY_DIR) -> Persona:
    """The persona an organic case runs with: its `persona` (an id, or a path relative to the case
    file) loaded, `persona_overrides` applied."""
    if not case.persona:
        raise ValueError(
            f"case '{case.id}' has no `persona`; organic cases name a persona id from personas/library/"
        )
    persona = load_persona(case.persona, library=library, case_file=case.file)
    return apply_overrides(persona, case.persona_overrides, where=f"case '{case.id}' persona_overrides")


def persona_problems(case: Case) -> list[Problem]:
    """The problems of a case's `persona` reference (file:line: persona: ...), empty when it resolves
    to a valid persona file and its overrides apply."""
    if not case.persona:
        return []
    where = str(case.file) if case.file else case.id
    try:
        # resolve_persona without its copy: the parsed persona is only read here (apply_overrides
        # validates a merged copy), and a library of cases sharing personas copies none of them
        persona, _ = _read_shared(_locate(case.persona, library=LIBRARY_DIR, case_file=case.file))
        apply_overrides(persona, case.persona_overrides, where=f"case '{case.id}' persona_overrides")
    except FileProblems as exc:
        line = _persona_line(case)
        return [Problem(where, line, "persona", f"the persona file has problems: {p}") for p in exc.problems]
    except (UnknownNameError, ValueError) as exc:
        return [Problem(where, _persona_line(case), "persona", str(exc))]
    return []


def _persona_line(case: Case) -> int:
    """The line of the case file's `persona:` (read only when there is a problem to report)."""
    if case.file is None:
        return 1
    try:
        return read_yaml(case.file)[1].line(("persona",))
    except FileProblems:
        return 1
