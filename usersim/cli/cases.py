"""`usersim validate` and `usersim cases list`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from usersim.cases.loader import case_files, file_kind, load_case
from usersim.cli.collector import paced
from usersim.core.yamlfile import FileProblems, Problem


def _kind(path: Path) -> str:
    """case | persona | skill | data, from the file name, its folder and its keys."""
    return "skill" if path.name == "SKILL.md" else file_kind(path)


def _files(paths: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise click.BadParameter(f"no such file or directory: {p}", param_hint="PATH")
        if p.is_file():
            out.append(p)
            continue
        out.extend(f for f in case_files([p]))
        out.extend(sorted(p.rglob("SKILL.md")))
    return out


def validate_file(path: Path) -> list[Problem]:
    """Problems in one case, persona or skill file (empty when valid)."""
    kind = _kind(path)
    try:
        if kind == "skill":
            from usersim.sandbox.skills.loader import load_skill_file

            load_skill_file(path)
        elif kind == "persona":
            from usersim.personas.loader import load_persona_file

            load_persona_file(path)
        else:
            from usersim.personas.loader import persona_problems

            return persona_problems(load_case(path))  # the case's `persona` must resolve
    except FileProblems as exc:
        return exc.problems
    except Exception as exc:  # noqa: BLE001  one broken file must not stop the others being checked
        return [Problem(str(path), 1, "", f"internal error while validating: {type(exc).__name__}: {exc}")]
    return []


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--personas",
    "persona_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="Folder of persona files whose ids cases may name (repeatable); also `personas/` beside the cases.",
)
def validate(paths: tuple[str, ...], persona_dirs: tuple[str, ...]) -> None:
    """Validate case, persona and SKILL.md files. Exit 0 when all are valid; otherwise print
    `file:line: field: message` lines and exit 2."""
    problems: list[Problem] = []
    with paced() as tick:  # see usersim/cli/collector.py
        from usersim.personas.loader import set_persona_dirs

        set_persona_dirs(persona_dirs)
        files = _files(paths)
        for f in files:
            problems.extend(validate_file(f))
            tick()
    for p in sorted(problems, key=lambda p: (p.file, p.line)):
        click.echo(str(p))
    bad = len({p.file for p in problems})
    click.echo(f"{len(files)} file(s) checked, {bad} with problems, {len(problems)} problem(s)", err=True)
    sys.exit(2 if problems else 0)


@click.group()
def cases() -> None:
    """Inspect the case library."""


@cases.command("list")
@click.argument("paths", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def list_cases(paths: tuple[str, ...], as_json: bool) -> None:
    """List cases (default: the bundled library). Files with problems are reported on stderr and
    skipped (exit 2 at the end); the valid ones are still listed."""
    from usersim.cases.listing import list_rows

    try:
        with paced() as tick:  # see usersim/cli/collector.py
            rows, problems = list_rows(
                list(paths) or None, on_file=tick
            )  # cached per file: see cases/listing.py
    except FileNotFoundError as exc:
        raise click.BadParameter(str(exc), param_hint="PATHS") from None
    for p in problems:
        click.echo(str(p), err=True)
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=1))
    else:
        for r in rows:
            click.echo(f"{r['id']:<12} {r['dimension']:<4} {r['mode']:<8} {r['scoring']:<18} {r['title']}")
        click.echo(f"{len(rows)} case(s)", err=True)
    if problems:
        bad = len({p.file for p in problems})
        click.echo(f"{bad} file(s) with problems were skipped (listed above)", err=True)
        sys.exit(2)


@click.command()
@click.argument("kind", type=click.Choice(["case", "persona", "record", "skill"]))
def schema(kind: str) -> None:
    """Print the JSON Schema of a file format (every field is described)."""
    if kind == "case":
        from usersim.cases.schema import Case as model
    elif kind == "persona":
        from usersim.personas.schema import Persona as model
    elif kind == "record":
        from usersim.core.record import RunRecord as model
    else:
        from usersim.sandbox.skills.loader import SkillFrontmatter as model
    click.echo(json.dumps(model.model_json_schema(), ensure_ascii=False, indent=1))
