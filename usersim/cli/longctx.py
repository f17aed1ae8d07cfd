"""`usersim expand` (long-context expansion of a C5 case) and `usersim decay` (seed-003 decay sweep)."""

from __future__ import annotations

import asyncio
import json

import click

from usersim.cases.schema import LENGTH_TOKENS


def _int_list(value: str) -> list[int]:
    try:
        out = [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(
            f"'{value}' is not a comma-separated list of turn counts, e.g. 3,5,8"
        ) from None
    if not out or min(out) < 3:
        raise click.BadParameter(f"turn counts must be at least 3 (probe, small talk, check), got '{value}'")
    return out


@click.command()
@click.argument("case_id")
@click.option(
    "--length", "length", type=click.Choice(list(LENGTH_TOKENS)), required=True, help="Target length."
)
@click.option(
    "--position",
    type=click.Choice(["beginning", "middle", "end"]),
    default=None,
    help="Where the key information goes (default: the seed's own placement).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the filler choice.")
@click.option(
    "--cases", "paths", multiple=True, help="Case files/directories to search (default: bundled cases)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the expansion as JSON.")
def expand(
    case_id: str, length: str, position: str | None, seed: int, paths: tuple[str, ...], as_json: bool
) -> None:
    """Expand a long-context case's history to 4k/16k/32k tokens with filler, key information
    placed per seed 000's position table."""
    from usersim.cases.expand import ExpansionError, expand_case
    from usersim.cases.loader import find_case

    try:
        case = find_case(case_id, list(paths) or None)
        exp = expand_case(case, length, position, seed=seed)
    except (KeyError, ValueError, ExpansionError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        out = {
            "case_id": exp.case_id,
            "length": exp.length,
            "position": exp.position,
            "seed": exp.seed,
            "tokens": exp.tokens,
            "target_tokens": exp.target_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in exp.messages],
            "rounds": exp.rounds,
            "key_turns": exp.key_turns,
            "key_rounds": exp.key_rounds,
            "key_round_bands": [list(b) for b in exp.key_round_bands],
            "key_offsets": exp.key_offsets,
            "key_bands": [list(b) for b in exp.key_bands],
            "filler_turns": exp.filler_turns,
        }
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    click.echo(
        f"{exp.case_id} {exp.length} position={exp.position or 'seed'}: {exp.tokens}/{exp.target_tokens} tokens, "
        f"{exp.rounds} rounds, {len(exp.messages)} messages ({len(exp.filler_turns)} filler)"
    )
    for idx, rnd, (ra, rb), off, (lo, hi) in zip(
        exp.key_turns, exp.key_rounds, exp.key_round_bands, exp.key_offsets, exp.key_bands
    ):
        click.echo(
            f"  key turn {idx} in round {rnd} (band {ra}-{rb}) at token {off} (band {lo}-{hi}): "
            f"{exp.messages[idx].content[:40]}"
        )


@click.command()
@click.option(
    "--agent",
    default="reference",
    show_default=True,
    help="Agent SPEC, e.g. reference, reference:window-10, openai:MODEL.",
)
@click.option(
    "--strategies",
    default=None,
    help="Compare context strategies: comma-separated options of --agent (full, window-N, summary[-N], "
    "key-info[-N], profile, external-memory[-K]; join two with '+', e.g. window-4+profile) or whole "
    "agent SPECs (openai:m). One sweep each in DIR/<strategy>/; DIR/decay.json holds the comparison table.",
)
@click.option("--turns", default="3,5,7,8,10,12,15,20", show_default=True, help="Turn counts to test.")
@click.option(
    "--repeats", type=int, default=3, show_default=True, help="Runs per turn count (seed 003: at least 3)."
)
@click.option(
    "--tests", default="memory,reference,switch,conflict,drift", show_default=True, help="Tests to run."
)
@click.option(
    "--sla",
    "sla_refs",
    multiple=True,
    help="SLA file: a case or suite file with an `sla:` list, or a bundled suite name "
    "(customer_service = 客服 Agent ≥ 80% @ 10 轮, data_analysis, companion). Repeatable.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed.")
@click.option("--concurrency", type=int, default=4, show_default=True, help="Conversations at once.")
@click.option("--resume", is_flag=True, help="Continue an interrupted sweep in the same --out directory.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
def decay(
    agent: str,
    strategies: str | None,
    turns: str,
    repeats: int,
    tests: str,
    sla_refs: tuple[str, ...],
    seed: int,
    concurrency: int,
    resume: bool,
    out_dir: str,
) -> None:
    """Decay sweep (seed 003): memory / reference / switch / conflict / drift at each turn count;
    writes DIR/decay.json with the curves, memory half-life, reference fail point, stable intervals,
    token cost and SLA marks. With --strategies, one sweep per context strategy and the comparison."""
    from usersim.core.registry import did_you_mean
    from usersim.core.yamlfile import FileProblems
    from usersim.graphs.decay import DECAY_TESTS, run_decay
    from usersim.graphs.decay_sla import load_sla

    names = [t.strip() for t in tests.split(",") if t.strip()]
    for t in names:
        if t not in DECAY_TESTS:
            raise click.BadParameter(
                f"Unknown decay test '{t}'.{did_you_mean(t, set(DECAY_TESTS))} "
                f"Available: {', '.join(DECAY_TESTS)}",
                param_hint="--tests",
            )
    try:
        sla = [item for ref in sla_refs for item in load_sla(ref)]
    except (FileProblems, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    common = dict(
        turns=_int_list(turns),
        tests=names,
        repeats=repeats,
        seed=seed,
        concurrency=concurrency,
        resume=resume,
        sla=sla,
    )
    try:
        if strategies is not None:
            _strategies(agent, strategies, out_dir, common)
            return
        summary = asyncio.run(run_decay(agent=agent, out_dir=out_dir, **common))  # type: ignore[arg-type]
    except (KeyError, ValueError) as exc:  # unknown agent SPEC, occupied --out directory ...
        raise click.ClickException(str(exc)) from None
    sys_cfg = ", ".join(f"{k}={v}" for k, v in summary.system.items())
    click.echo(f"system: {sys_cfg}")
    for test, curve in summary.curves.items():
        pts = "  ".join(f"{p.turns}:{p.score:.0%}" for p in curve.points if p.score is not None)
        click.echo(f"{test:>9} {pts}   {curve.measure}={curve.breakpoint}")
    for line in summary.sla_violations:
        click.echo(f"BELOW SLA {line}")
    click.echo(f"wrote {out_dir}/decay.json")


def _strategies(agent: str, strategies: str, out_dir: str, common: dict) -> None:
    from usersim.graphs.decay_strategies import run_strategies

    items = [s.strip().replace("+", ",") for s in strategies.split(",") if s.strip()]
    if not items:
        raise click.BadParameter(
            "give at least one strategy, e.g. full,window-4,summary", param_hint="--strategies"
        )
    comparison = asyncio.run(run_strategies(agent=agent, strategies=items, out_dir=out_dir, **common))
    flag = {True: "yes", False: "no", None: "-"}
    header = (
        f"{'strategy':<18} {'kept':>4} {'profile':>7} {'ext-mem':>7} {'half-life':>9} {'ref-fail':>8} "
        f"{'switch':>6} {'conflict':>8} {'drift':>5} {'tokens':>8}"
    )
    click.echo(header)
    longest = max(comparison.turns)

    def b(v: int | None) -> str:
        return f">{longest}" if v is None else str(v)

    for r in comparison.strategies:
        kept = "all" if r.window_turns is None else str(r.window_turns)
        tokens = "-" if r.mean_agent_tokens is None else f"{r.mean_agent_tokens:,.0f}"
        click.echo(
            f"{r.strategy:<18} {kept:>4} {flag[r.profile_injection]:>7} {flag[r.external_memory]:>7} "
            f"{b(r.memory_half_life):>9} {b(r.reference_fail_point):>8} {b(r.switch_stable_lower):>6} "
            f"{b(r.conflict_stable_lower):>8} {b(r.drift_stable_lower):>5} {tokens:>8}"
        )
        for line in r.sla_violations:
            click.echo(f"  BELOW SLA {line}")
    click.echo(
        f"wrote {out_dir}/decay.json and {out_dir}/report.html (each strategy in {out_dir}/<strategy>/)"
    )
