"""`usersim promote RUN_DIR RECORD_ID --to DIR [--shrink]`: a failing record as a regression case."""

from __future__ import annotations

from pathlib import Path

import click

from usersim.cli.shrink import run_shrink, shrink_options


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("record_id")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the new case file.",
)
@click.option(
    "--form",
    type=click.Choice(["prefix", "strict"]),
    default=None,
    help="prefix (default): replay the recorded user turns up to the failing turn, then the same persona "
    "simulates on; strict: a static case judging only the reply at the failing turn.",
)
@click.option(
    "--at-turn",
    default=None,
    type=click.IntRange(1),
    help="The failing user turn (default: found from the record).",
)
@click.option(
    "--shrink",
    "do_shrink",
    is_flag=True,
    help="Shrink the record to the shortest case that still fails the same check (as `usersim shrink`).",
)
@shrink_options
@click.option(
    "--cases",
    "cases_paths",
    multiple=True,
    help="Folder or file holding the record's case, when it is not in the bundled library (repeatable).",
)
def promote(
    run_dir: Path,
    record_id: str,
    to: Path,
    form: str | None,
    at_turn: int | None,
    do_shrink: bool,
    against: str | None,
    budget: int,
    check: str | None,
    cases_paths: tuple[str, ...],
) -> None:
    """Turn RECORD_ID of RUN_DIR into a regression case that fails the way the record did."""
    import yaml

    from usersim.graphs.promote import promote as do_promote

    if do_shrink:
        if form or at_turn:
            raise click.UsageError("--shrink finds the case itself: leave out --form and --at-turn")
        run_shrink(
            run_dir,
            record_id,
            to,
            against=against,
            budget=budget,
            check=check,
            cases_paths=list(cases_paths) or None,
        )
        return
    if check:
        raise click.UsageError("--check goes with --shrink")
    form = form or "prefix"
    try:
        path = do_promote(
            run_dir,
            record_id,
            to,
            list(cases_paths) or None,
            form=form,  # type: ignore[arg-type]
            at_turn=at_turn,
            against=against,
        )
    except (ValueError, KeyError) as exc:
        raise click.ClickException(str(exc)) from None
    origin = yaml.safe_load(path.read_text(encoding="utf-8")).get("promoted_from", {})
    click.echo(str(path))
    click.echo(
        f"  {form} form, failing turn {origin.get('failing_turn')}; failed: "
        + "; ".join(f[:80] for f in origin.get("failing", [])[:3]),
        err=True,
    )
