"""`usersim explore`: persona variants x seeds on organic cases (random or coverage-guided), failures
clustered, the coverage of the conversations' features mapped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from usersim.cli.otel import check_otel, otel_options
from usersim.cli.run import _select, check_models, personas_option, print_outcome
from usersim.graphs.runner import RunConfig


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--id", "ids", multiple=True, help="Organic case id (repeatable). Default: all organic cases.")
@click.option("--agent", default="reference", show_default=True, help="Agent SPEC.")
@click.option("--simulator", default="rule", show_default=True, help="User simulator SPEC.")
@click.option("--judge-model", default=None, help="LLM judge SPEC.")
@click.option(
    "--n",
    "n",
    default=8,
    show_default=True,
    type=click.IntRange(1),
    help="Conversations (persona variants) per case: the budget.",
)
@click.option(
    "--strategy",
    type=click.Choice(["random", "guided"]),
    default="random",
    show_default=True,
    help="Both vary every trait and the reveal policy. random: the first N rows of a pairwise covering "
    "design, all at once; guided: a first round of the same design, then rounds that recombine and "
    "mutate failing and near-failing conversations (persona and seed) and fill axis pairs never tried.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Exploration seed.")
@click.option(
    "--branch-at", default=None, type=click.IntRange(1), help="Branch each conversation at this user turn."
)
@click.option(
    "--branches", default=0, show_default=True, type=click.IntRange(0), help="Continuations per branch point."
)
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@personas_option
@otel_options
def explore(
    paths,
    ids,
    agent,
    simulator,
    judge_model,
    n,
    strategy,
    seed,
    branch_at,
    branches,
    concurrency,
    out,
    no_progress,
    otel,
    otel_endpoint,
):
    """Persona variants x seeds on organic cases; failures clustered by judge reasons (OUT/clusters.json),
    the coverage of the conversations' features with what was never tried (OUT/coverage.json, report.html)."""
    from usersim.graphs.explore import explore as run_explore
    from usersim.graphs.store import check_out_dir
    from usersim.llm.client import LLMCallError

    check_otel(otel, otel_endpoint)
    cases = [c for c in _select(paths, ids) if c.mode == "organic"]
    cfg = RunConfig(
        agent=agent,
        simulator=simulator,
        judge_model=judge_model,
        concurrency=concurrency,
        seed=seed,
        progress=not no_progress,
        otel=otel,
        otel_endpoint=otel_endpoint,
    )
    try:
        check_out_dir(out)
        try:
            asyncio.run(check_models(cases, cfg))  # also checks the specs
        except LLMCallError as exc:
            raise click.UsageError(str(exc)) from None
        records, clusters, coverage = asyncio.run(
            run_explore(
                cases,
                cfg,
                out,
                n=n,
                branch_at=branch_at,
                branches=branches,
                case_paths=list(paths),
                strategy=strategy,
            )
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    print_outcome(records, out)
    from usersim.reports.html_explore import promote_command

    for c in clusters[:10]:
        click.echo(f"[{c['count']:>3}] {c['judge']}: {c['example_reason'][:100]}  e.g. {c['records'][0]}")
        click.echo(f"      promote: {promote_command(str(out), c['records'][0], cases=list(paths))}")
    click.echo(coverage.line() + f"  ->  {out}/coverage.json")
