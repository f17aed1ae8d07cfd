"""`usersim persona new | lint | preview | list | vary`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from usersim.core.registry import UnknownNameError
from usersim.personas.loader import LIBRARY_DIR, library_ids, load_persona, set_persona_dirs
from usersim.personas.scaffold import DOMAINS, scaffold


def _personas_option(f):
    return click.option(
        "--personas",
        "persona_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False),
        help="Folder of persona files whose ids may be named (repeatable).",
    )(f)


@click.group()
def persona() -> None:
    """Author personas: scaffold, lint, preview, list and vary them."""


@persona.command("new")
@click.argument("persona_id")
@click.option(
    "--domain",
    type=click.Choice(DOMAINS),
    default="travel",
    show_default=True,
    help="Example content to start from.",
)
@click.option(
    "--to",
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder to write into (e.g. the `personas/` folder beside your cases); never the installed package.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def new(persona_id: str, domain: str, directory: Path, force: bool) -> None:
    """Write a commented persona file PERSONA_ID.yaml to edit (in the current folder, or --to DIR)."""
    from usersim.simulator.persona_lint import lint_file

    path = directory / f"{persona_id}.yaml"
    if path.exists() and not force:
        raise click.ClickException(f"{path} already exists; pick another id or pass --force")
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(scaffold(persona_id, domain, path), encoding="utf-8")
    errors = [p for p in lint_file(path) if p.severity == "error"]
    if errors:  # e.g. an id the schema rejects: say so instead of leaving a broken file behind
        path.unlink()
        raise click.ClickException("\n".join(str(p) for p in errors))
    click.echo(
        f"wrote {path}\nnext: edit it, then `usersim persona lint {path}` and `usersim persona preview {path}`"
    )


@persona.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
def lint(paths: tuple[Path, ...]) -> None:
    """Check persona files (default: the library). Exit 2 on errors; warnings do not fail."""
    from usersim.simulator.persona_lint import lint_paths, persona_files

    targets = list(paths) or [LIBRARY_DIR]
    problems = lint_paths(targets)
    for p in problems:
        click.echo(str(p), err=p.severity == "error")
    errors = sum(p.severity == "error" for p in problems)
    n = len(persona_files(targets))
    click.echo(f"{n} persona file(s): {errors} error(s), {len(problems) - errors} warning(s)")
    if errors:
        raise SystemExit(2)


@persona.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@_personas_option
def list_personas(as_json: bool, persona_dirs: tuple[str, ...]) -> None:
    """The personas in the library (and in --personas folders, listed first)."""
    from usersim.core.yamlfile import FileProblems
    from usersim.personas.loader import load_persona_file

    rows = []
    files = [f for d in persona_dirs for f in sorted(Path(d).glob("*.yaml"))]
    files += [LIBRARY_DIR / f"{pid}.yaml" for pid in library_ids()]
    for f in files:
        try:
            p = load_persona_file(f)
        except FileProblems as exc:  # a broken file is reported, the others still listed
            click.echo("\n".join(str(x) for x in exc.problems), err=True)
            continue
        rows.append(
            {
                "id": p.id,
                "name": p.name,
                "language": p.language,
                "required": p.goal.required,
                "tags": p.tags,
                "file": str(f),
            }
        )
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    for r in rows:
        click.echo(f"{r['id']:<28} {r['language']}  {', '.join(r['required']):<28} {' '.join(r['tags'])}")


@persona.command("vary")
@click.argument("persona_ref")
@click.option("--n", "n", type=int, default=12, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--axes", default=None, help="Comma-separated axes, e.g. patience,verbosity,reveal_policy.")
@_personas_option
def vary_cmd(persona_ref: str, n: int, seed: int, axes: str | None, persona_dirs: tuple[str, ...]) -> None:
    """Print N pairwise-covering variants of a persona (their axis levels) as JSON lines."""
    from usersim.personas.variation import pairwise_coverage, vary

    set_persona_dirs(persona_dirs)
    try:
        variants = vary(load_persona(persona_ref), n, seed, axes.split(",") if axes else None)
    except (UnknownNameError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for v in variants:
        click.echo(json.dumps({"id": v.id, **v.variation}, ensure_ascii=False))
    axes_used = {k: sorted({str(v.variation[k]) for v in variants}) for k in variants[0].variation}
    click.echo(
        f"pairwise coverage: {pairwise_coverage([v.variation for v in variants], list(axes_used)):.0%}",
        err=True,
    )


@persona.command("preview")
@click.argument("persona_ref", required=False)
@click.option(
    "--case",
    "case_id",
    default=None,
    help="Run on this case's goal/opening/overrides: a case id or a case file.",
)
@click.option("--simulator", default="rule", show_default=True, help="rule | rule:SALT | openai:MODEL")
@click.option("--agent", default="reference", show_default=True, help="Agent SPEC.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-turns", type=int, default=None)
@_personas_option
def preview(
    persona_ref: str | None,
    case_id: str | None,
    simulator: str,
    agent: str,
    seed: int,
    max_turns: int | None,
    persona_dirs: tuple[str, ...],
) -> None:
    """Print a sample conversation of PERSONA (id or file; default: the --case's persona) against an agent."""
    from usersim.adapters.base import AgentError
    from usersim.core.yamlfile import FileProblems
    from usersim.graphs.preview import format_preview, run_preview
    from usersim.simulator.base import SimulatorError

    set_persona_dirs(persona_dirs)
    case = None
    try:
        if case_id:
            from usersim.cases.loader import find_case

            case = find_case(case_id)
        ref = persona_ref or (case.persona if case is not None else None)
        if not ref:
            raise click.UsageError("name a PERSONA (id or file), or a --case that has one")
        result = asyncio.run(
            run_preview(ref, case=case, simulator=simulator, agent=agent, seed=seed, max_turns=max_turns)
        )
    except FileProblems as exc:
        raise click.ClickException("\n".join(str(p) for p in exc.problems)) from None
    except (UnknownNameError, ValueError, AgentError, SimulatorError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(format_preview(result))
