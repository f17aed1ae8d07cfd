"""`usersim shrink RUN RECORD_ID --to DIR`: a failing record reduced to its shortest regression case."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from usersim.graphs.shrink import DEFAULT_BUDGET, Shrunk


def shrink_options(command):
    """--against, --budget and --check, shared by `shrink` and `promote` (--budget and --check with --shrink)."""
    for option in reversed(
        [
            click.option(
                "--against",
                default=None,
                metavar="GOOD_AGENT",
                help="Agent SPEC the case must pass with (a correct or reference agent): a promoted case that fails it is not written; a shrink keeps what it needs.",
            ),
            click.option(
                "--budget",
                default=DEFAULT_BUDGET,
                show_default=True,
                type=click.IntRange(1),
                help="Most conversations to run; when spent, the smallest case so far is written (partial).",
            ),
            click.option(
                "--check",
                default=None,
                help="The failing check to keep failing (a judge name such as final_state); default: the first.",
            ),
        ]
    ):
        command = option(command)
    return command


def run_shrink(
    run_dir: Path,
    record_id: str,
    to: Path,
    *,
    against: str | None,
    budget: int,
    check: str | None,
    cases_paths: list[str] | None,
) -> Shrunk:
    """Shrink, keep the entry in the run's report, print the case path (stdout) and what was dropped."""
    from usersim.core.registry import UnknownNameError
    from usersim.graphs.shrink import shrink
    from usersim.graphs.shrink_out import register

    if not run_dir.is_dir():
        raise click.BadParameter(f"run folder '{run_dir}' does not exist", param_hint="RUN")
    try:
        done = asyncio.run(
            shrink(
                run_dir, record_id, to, against=against, budget=budget, check=check, cases_paths=cases_paths
            )
        )
    except (UnknownNameError, ValueError, KeyError) as exc:
        raise click.ClickException(str(exc).strip("'\"")) from None
    try:
        register(run_dir, done.entry)
    except (OSError, click.ClickException) as exc:  # a read-only run folder: the case is written anyway
        click.echo(f"warning: {run_dir}/report.html not updated: {exc}", err=True)
    info = done.info
    click.echo(str(done.path))
    partial = "" if info.complete else f"; partial: the budget of {info.budget} runs ran out first"
    good = f", still passes with {info.against}" if info.against else ""
    click.echo(
        f"  shrunk: {info.shrunk} (still fails {info.check}{good}; {info.runs_used} run(s){partial})",
        err=True,
    )
    return done


@click.command()
@click.argument("run_dir", metavar="RUN", type=click.Path(file_okay=False, path_type=Path))
@click.argument("record_id")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the shrunk case file (and shrink.json).",
)
@shrink_options
@click.option(
    "--cases",
    "cases_paths",
    multiple=True,
    help="Folder or file holding the record's case, when it is not in the bundled library (repeatable).",
)
def shrink(
    run_dir: Path,
    record_id: str,
    to: Path,
    against: str | None,
    budget: int,
    check: str | None,
    cases_paths: tuple[str, ...],
) -> None:
    """Shrink RECORD_ID of RUN to the shortest case that still fails the same check (delta debugging)."""
    run_shrink(
        run_dir,
        record_id,
        to,
        against=against,
        budget=budget,
        check=check,
        cases_paths=list(cases_paths) or None,
    )
