"""`usersim compare RUN_A RUN_B` and `usersim plan-repeats --baseline RUN --detect 0.1`.

Both need numpy and scipy (`pip install 'usersim-harness[compare]'`), imported only here.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import NoReturn

import click

from usersim.core.gate import Tally

EXIT_USAGE = 2


def _usage(message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    raise SystemExit(EXIT_USAGE)


def _check_stats() -> None:
    from usersim.reports.compare_stats import StatsUnavailable, require

    try:
        require()
    except StatsUnavailable as exc:
        _usage(str(exc))


def check_baseline(run_dir: Path) -> None:
    """`run --baseline`: numpy/scipy installed and RUN_DIR a readable run, else exit 2 before running."""
    from usersim.reports.compare import CompareError, load_run

    _check_stats()
    try:
        load_run(run_dir)
    except CompareError as exc:
        _usage(f"--baseline: {exc}")
    except click.ClickException as exc:
        _usage(f"--baseline: {exc.message}")


def print_comparison(comparison, out: Path) -> None:
    """The changed cases, the suite line, noise notes and warnings; the verdict line last."""
    c = comparison
    for case in c.cases:
        if case.verdict in ("no change",):
            continue
        ci = f"[{case.interval.low * 100:+.0f}, {case.interval.high * 100:+.0f}]" if case.interval else ""
        turn = f"; diverges at turn {case.first_divergence}" if case.first_divergence else ""
        click.echo(
            f"{case.case_id:<24} A {case.a_passed}/{case.decided}  B {case.b_passed}/{case.decided}  "
            f"pass->fail {case.worse}  fail->pass {case.better}  delta {_pts(case.delta)} {ci}  "
            f"p={case.p_value:.3g}  {case.verdict}{turn}"
        )
    s = c.suite
    ci = f"[{s.interval.low * 100:+.1f}, {s.interval.high * 100:+.1f}]" if s.interval else ""
    unchanged = sum(x.verdict == "no change" for x in c.cases)
    click.echo(
        f"suite: {s.decided} decided pair(s) over {len(c.cases)} case(s) ({unchanged} unchanged); "
        f"A {_rate(s.a_rate)}  B {_rate(s.b_rate)}  delta {_pts(s.delta)} {ci}  McNemar p={s.p_value:.3g}"
    )
    for name, side in (("A", c.a), ("B", c.b)):
        k = side.pass_hat_k
        if k.variants:
            iv = f" [{k.interval.low:.0%}, {k.interval.high:.0%}]" if k.interval else ""
            click.echo(f"pass^k {name}: {k.all_passed}/{k.variants} = {_rate(k.value)}{iv}")
    moved = [m for m in c.criteria[:5]]
    for m in moved:
        click.echo(
            f"moved: {m.judge}: {m.criterion[:70]}  pass->fail {m.pass_to_fail}  fail->pass {m.fail_to_pass}"
        )
    for note in c.noise.notes:
        click.echo(f"noise: {note}")
    for reason, n in c.unpaired_reasons.items():
        click.echo(f"unpaired: {n} conversation(s): {reason}")
    for w in c.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(f"{c.verdict.line}  ->  {out}/compare.html")


def _pts(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:+.1f}"


def _rate(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def run_compare(
    run_a: Path, run_b: Path, out: Path, alpha: float, same_seed_only: bool = False, min_paired: float = 0.5
) -> int:
    """Compare, write OUT/compare.json and compare.html, print; returns compare's exit code."""
    from usersim.reports.compare import CompareError, compare_runs, write_comparison

    _check_stats()
    try:
        comparison, a, b = compare_runs(
            run_a, run_b, out, alpha=alpha, same_seed_only=same_seed_only, min_paired=min_paired
        )
    except CompareError as exc:
        _usage(str(exc))
    except click.ClickException as exc:  # a results.jsonl line that does not parse: file:line
        _usage(exc.message)
    write_comparison(out, comparison, a, b)
    print_comparison(comparison, out)
    return comparison.verdict.exit_code


@click.command()
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for compare.json and compare.html (default: RUN_B).",
)
@click.option(
    "--alpha",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Family-wise false-alarm rate: for equal agents, the chance of a false regression verdict.",
)
@click.option(
    "--same-seed-only",
    is_flag=True,
    help="Pair only conversations with the same seed (the same simulated user); others are unpaired.",
)
@click.option(
    "--min-paired",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Share of the larger run's conversations that must be paired; fewer is inconclusive (exit 3).",
)
def compare(
    run_a: Path, run_b: Path, out: Path | None, alpha: float, same_seed_only: bool, min_paired: float
) -> None:
    """Pair RUN_A (the baseline) and RUN_B conversation by conversation and test the differences.

    \b
    Exit code:
      0  no significant regression (unchanged, within noise, or significantly better)
      1  significant regression: the suite or some case is significantly worse
      2  usage error, or nothing could be paired (different suites, no decided pair)
      3  inconclusive: too little pairing (--min-paired), or a change looks worse but its
         interval and the Holm-corrected test disagree (run more repeats: plan-repeats)

    Pairs: same case, variant and repeat, matched by conversation seed (the same simulated
    user), else by repeat index. Test: exact McNemar on the discordant pairs, per case and over
    the suite, decided as one Holm family so equal agents raise a false alarm at most alpha of
    the time. Writes OUT/compare.json (every figure) and OUT/compare.html.
    """
    raise SystemExit(run_compare(run_a, run_b, out or run_b, alpha, same_seed_only, min_paired))


def baseline_rates(records) -> tuple[dict[str, tuple[int, int]], int]:
    """Per case (passed, decided) and the most common number of repeats per variant."""
    from usersim.reports.compare_pairs import group_key

    statuses: dict[str, list[str]] = defaultdict(list)
    groups: Counter[tuple[str, str]] = Counter()
    for r in records:
        statuses[r.case_id].append(r.status)
        groups[group_key(r)] += 1
    rates = {}
    for case_id, ss in statuses.items():
        t = Tally.of(ss)
        rates[case_id] = (t.passed, t.judged())
    current = Counter(groups.values()).most_common(1)[0][0] if groups else 1
    return rates, current


@click.command("plan-repeats")
@click.option(
    "--baseline",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A run folder of the agent as it is now: its per-case pass rates are the plan's starting point.",
)
@click.option(
    "--detect",
    required=True,
    type=click.FloatRange(0, 100, min_open=True, max_open=True),
    help="Drop in pass rate to detect: 0.1 (or 10, in points).",
)
@click.option(
    "--power",
    "power_target",
    default=0.8,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
)
@click.option(
    "--alpha", default=0.05, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True)
)
@click.option(
    "--simulations",
    default=4000,
    show_default=True,
    type=click.IntRange(200),
    help="Simulated comparisons per repeat count.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the simulation.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_repeats(
    baseline: Path,
    detect: float,
    power_target: float,
    alpha: float,
    simulations: int,
    seed: int,
    as_json: bool,
) -> None:
    """How many repeats per case `usersim compare` needs to flag a drop of DETECT in pass rate.

    The power is simulated with compare's own test, from the baseline's observed per-case pass
    rates (a case's pass rate p gives its run-to-run variance p(1-p)).
    """
    from usersim.reports.compare import CompareError, load_run
    from usersim.reports.compare_plan import plan

    _check_stats()
    detect = detect / 100 if detect >= 1 else detect  # 10 means ten points
    try:
        records, _ = load_run(baseline)
    except CompareError as exc:
        _usage(str(exc))
    except click.ClickException as exc:
        _usage(exc.message)
    rates, current = baseline_rates(records)
    if not any(n for _, n in rates.values()):
        _usage(f"{baseline}: no conversation was decided (passed, failed or error): nothing to plan from")
    result = plan(
        str(baseline),
        rates,
        current,
        detect=detect,
        target=power_target,
        alpha=alpha,
        sims=simulations,
        seed=seed,
    )
    if as_json:
        click.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    for c in result.cases:
        need = f"{c.repeats} repeats" if c.repeats else f"more than {result.max_repeats} repeats"
        click.echo(
            f"{c.case_id:<24} pass rate {c.baseline_rate:.0%} of {c.baseline_runs} -> {c.target_rate:.0%} alone: "
            f"{need} (power {c.power:.0%})"
        )

    def per_case(n: int | None) -> str:
        return f"{n} repeats per case" if n else f"more than {result.max_repeats} repeats per case"

    goal = f"a drop of {detect * 100:.0f} points with power {power_target:.0%} at alpha {alpha:g}"
    click.echo(
        f"to detect {goal} on any one case alone: {per_case(result.repeats_one_case)} "
        f"(the hardest: {result.hardest_case})"
    )
    click.echo(
        f"to detect it on every case at once (the suite): {per_case(result.repeats)} (estimated power "
        f"{result.power:.0%}; with the baseline's {current} repeat(s): {result.power_at_current:.0%})"
    )
