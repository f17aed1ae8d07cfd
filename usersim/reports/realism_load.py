"""The conversations of one side of `usersim realism`: records read, their cases and personas
found, each measured (reports/realism_measures.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from usersim.cases.schema import Case
from usersim.core.yamlfile import FileProblems
from usersim.personas.schema import Persona
from usersim.reports.realism_measures import Measured, Side, measure


class RealismInputError(ValueError):
    """A run, record, case or persona that cannot be read: the message names it."""


@dataclass
class SideData:
    measured: list[Measured] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _cases(paths: list[Path]) -> dict[str, Case]:
    from usersim.cases.loader import load_cases_partial

    cases, problems = load_cases_partial([str(p) for p in paths] if paths else None)
    if problems and paths:
        first = problems[0]
        raise RealismInputError(f"--cases: {first.file}:{first.line}: {first.field}: {first.message}")
    return {c.id: c for c in cases}


def measured_side(results: Path, side: Side, case_paths: list[Path], family: str | None) -> SideData:
    """Every conversation of `results` that has a persona (organic, or a case naming one), measured."""
    from usersim.personas.loader import resolve_persona
    from usersim.reports.rebuild import read_records

    try:
        records = read_records(results)
    except FileProblems as exc:
        raise RealismInputError(str(exc)) from None
    except click.ClickException as exc:
        raise RealismInputError(exc.message) from None
    cases = _cases(case_paths)
    out = SideData()
    personas: dict[str, Persona] = {}
    skipped: dict[str, int] = {}
    for r in records:
        if family and not r.case_id.startswith(family):
            continue
        case = cases.get(r.case_id)
        if case is None:
            where = ", ".join(map(str, case_paths)) or "the case library"
            raise RealismInputError(
                f"{results}: record {r.id}: case {r.case_id} is not in {where}; pass its folder with --cases"
            )
        if not case.persona:
            skipped[r.case_id] = skipped.get(r.case_id, 0) + 1
            continue
        if case.id not in personas:
            try:
                personas[case.id] = resolve_persona(case)
            except Exception as exc:  # noqa: BLE001  a persona file that does not load: named, exit 2
                raise RealismInputError(f"case {case.id}: persona {case.persona}: {exc}") from None
        out.measured.append(measure(r, case, personas[case.id], side))
    for case_id, n in skipped.items():
        out.notes.append(
            f"{results}: {n} record(s) of {case_id} skipped: the case has no persona to measure against"
        )
    return out
