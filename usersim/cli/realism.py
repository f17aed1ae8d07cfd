"""`usersim realism RUN --human RUN2`: are the simulated users of RUN like the human users of RUN2?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from usersim.reports.realism import RealismReport
    from usersim.reports.realism_measures import Measured

EXIT_USAGE, EXIT_INCONCLUSIVE = 2, 3


def _usage(message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    raise SystemExit(EXIT_USAGE)


def _results(run: Path, option: str) -> Path:
    path = run / "results.jsonl" if run.is_dir() else run
    if not path.is_file():
        _usage(f"{option}: {run} is not a run folder (no results.jsonl)")
    return path


@click.command("realism")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--human",
    "human_run",
    required=True,
    type=click.Path(path_type=Path),
    help="Run folder (or results.jsonl) of human conversations: `usersim play`, or any run.",
)
@click.option(
    "--cases",
    "case_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Case files or folders the records' case ids are found in (default: the library). Repeatable.",
)
@click.option("--case-family", default=None, help="Only records whose case id starts with this prefix.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where realism.json and realism.html go (default: RUN/realism).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Bootstrap seed (and the calibration runs')."
)
@click.option(
    "--calibrate",
    is_flag=True,
    help="Tune each persona's verbosity, reveal policy, cooperativeness and patience toward the human "
    "range (runs conversations: needs --agent and --cases); tuned personas go to OUT/personas.",
)
@click.option("--agent", default=None, help="Agent SPEC the calibration runs against (the one RUN used).")
@click.option(
    "--simulator", default="rule", show_default=True, help="Simulator SPEC of the calibration runs."
)
@click.option(
    "--rounds",
    type=click.IntRange(1, 50),
    default=3,
    show_default=True,
    help="Conversations per case for each calibration candidate.",
)
def realism(
    run: Path,
    human_run: Path,
    case_paths: tuple[Path, ...],
    case_family: str | None,
    out: Path | None,
    seed: int,
    calibrate: bool,
    agent: str | None,
    simulator: str,
    rounds: int,
) -> None:
    """Compare the simulated users of RUN with the human users of RUN2 (--human) trait by trait:
    turns to goal, words and questions per turn, facts revealed unasked, accepting a proposal that
    breaks a constraint, giving up, register and language; and the agent's success under each
    (the inflation). Each trait gets the difference of means with a 95% bootstrap interval; within
    the human range when the interval contains 0. --calibrate then tunes the personas.

    \b
    Exit code:
      0  the report was written (whatever it found)
      3  too few conversations to say anything (the last line says how many are needed)
      2  usage error (a run folder, a record or a case that cannot be read)
    """
    from usersim.reports.realism import MIN_PER_SIDE, build_report
    from usersim.reports.realism_html import write_realism_html
    from usersim.reports.realism_load import RealismInputError, measured_side

    if calibrate and not (agent and case_paths):
        _usage(
            "--calibrate runs conversations: give --agent SPEC (the agent RUN was run against) and --cases PATH"
        )
    sim_results, human_results = _results(run, "RUN"), _results(human_run, "--human")
    try:
        sim = measured_side(sim_results, "simulated", list(case_paths), case_family)
        human = measured_side(human_results, "human", list(case_paths), case_family)
    except RealismInputError as exc:
        _usage(str(exc))
    for note in sim.notes + human.notes:
        click.echo(f"note: {note}", err=True)
    if len(sim.measured) < MIN_PER_SIDE or len(human.measured) < MIN_PER_SIDE:
        click.echo(
            f"realism: too few conversations to compare: {len(sim.measured)} simulated and "
            f"{len(human.measured)} human; at least {MIN_PER_SIDE} per side are needed "
            f"(30+ per side for intervals narrow enough to defend): exit 3",
            err=True,
        )
        raise SystemExit(EXIT_INCONCLUSIVE)
    report = build_report(
        sim.measured,
        human.measured,
        simulated_run=str(run),
        human_run=str(human_run),
        case_family=case_family,
        seed=seed,
    )
    folder = out or (run if run.is_dir() else run.parent) / "realism"
    folder.mkdir(parents=True, exist_ok=True)
    calibrated = None
    if calibrate:
        assert agent is not None
        calibrated = _calibrate(
            report, human.measured, list(case_paths), case_family, folder, agent, simulator, rounds, seed
        )
    (folder / "realism.json").write_text(
        json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False), "utf-8"
    )
    write_realism_html(folder / "realism.html", report)
    width = max(len(t.label) for t in report.traits)
    for t in [*report.traits, report.success]:
        click.echo(f"{t.label:<{width}}  {t.status:<8} {t.reason}")
    click.echo(f"-> {folder / 'realism.html'}")
    if calibrated:
        click.echo(calibrated)
    click.echo(report.line)


def _calibrate(
    report: RealismReport,
    human: list[Measured],
    case_paths: list[Path],
    family: str | None,
    folder: Path,
    agent: str,
    simulator: str,
    rounds: int,
    seed: int,
) -> str:
    """Run the calibration, put its before/after rows in `report`, write the tuned personas;
    returns the line to print."""
    import asyncio

    from usersim.cases.loader import load_cases_partial
    from usersim.graphs.realism_calibrate import calibrate, write_personas

    cases, problems = load_cases_partial([str(p) for p in case_paths])
    if problems:
        p = problems[0]
        _usage(f"--cases: {p.file}:{p.line}: {p.field}: {p.message}")
    cases = [c for c in cases if not family or c.id.startswith(family)]
    result = asyncio.run(
        calibrate(
            cases,
            human,
            agent=agent,
            simulator=simulator,
            rounds=rounds,
            out_dir=folder / "calibration",
            seed=seed,
            human_run=report.human_run,
        )
    )
    files = write_personas(result, cases, folder / "personas")
    report.calibration = result.rows()
    b, a = result.before, result.after
    tuned = f"{len(files)} tuned persona(s) in {folder / 'personas'}" if files else "no persona came closer"
    stuck = [t.label for t in a.traits if t.status == "outside"]
    return (
        f"calibration ({result.runs} conversations simulated): {b.within}/{b.judged} traits within before, "
        f"{a.within}/{a.judged} after; distance {b.distance or 0:.2f} -> {a.distance or 0:.2f}; {tuned}"
        + (f"; still outside: {', '.join(stuck)}" if stuck else "")
    )
