"""Load persona files (yaml.safe_load, file:line errors) and resolve a case's persona."""

from __future__ import annotations

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


def read_persona_file(path: str | Path) -> tuple[Persona, LineIndex]:
    """Parse and validate one persona file; raises FileProblems (`file:line: field: message`)."""
    path = Path(path)
    if not path.is_file():
        raise FileProblems([Problem(str(path), 1, "", "persona file not found")])
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


def load_persona(id_or_path: str | Path, *, library: Path = LIBRARY_DIR) -> Persona:
    """A persona by id (from the library) or by file path.

    Unknown ids raise UnknownNameError: "Unknown persona 'x'. Did you mean 'y'? Available: ...".
    """
    text = str(id_or_path)
    path = Path(text)
    if text.endswith((".yaml", ".yml")) or path.is_file():
        return load_persona_file(path)
    candidate = library / f"{text}.yaml"
    if candidate.is_file():
        return load_persona_file(candidate)
    known = library_ids(library)
    raise UnknownNameError(
        f"Unknown persona '{text}'.{did_you_mean(text, known)} Available: {', '.join(known)} "
        f"(persona files live in {library}; create one with `usersim persona new {text}`)"
    )


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
    """The persona an organic case runs with: its `persona` id loaded, `persona_overrides` applied."""
    if not case.persona:
        raise ValueError(
            f"case '{case.id}' has no `persona`; organic cases name a persona id from personas/library/"
        )
    persona = load_persona(case.persona, library=library)
    return apply_overrides(persona, case.persona_overrides, where=f"case '{case.id}' persona_overrides")
