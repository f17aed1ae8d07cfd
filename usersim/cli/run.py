"""`usersim run`, `usersim demo`, `usersim rescore` (`usersim explore`: cli/explore.py; `usersim promote`:
cli/promote.py)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from usersim.cases.loader import load_cases_or_exit
from usersim.cli.otel import check_otel, export_after, otel_options
from usersim.cli.ray_options import ray_config, ray_options

if TYPE_CHECKING:  # the graphs layer loads when a run starts (see run()), its conversation graph
    # (langgraph, ~1 s of imports) while the first model request is on its way (graphs.runner)
    from usersim.core.record import RunRecord
    from usersim.graphs.runner import RunConfig

DEMO_CASES = ["B1-EI-01", "B1-CL-01", "B1-IF-01", "B1-MR-02", "C2-TD-04"]
DEMO_FLAWED_AGENT = "reference:flaw=no-clarify,flaw=ignore-history"


def judge_options(command):
    """--judge-model (repeatable: an ensemble) and --judge-samples, shared by run and rescore."""
    command = click.option(
        "--judge-samples",
        default=1,
        show_default=True,
        type=click.IntRange(1),
        help="Samples per criterion and judge model; majority verdict (none -> inconclusive), "
        "agreement reported.",
    )(command)
    return click.option(
        "--judge-model",
        "judge_models",
        multiple=True,
        help="LLM judge SPEC (openai:MODEL, options ?context=32k&max_tokens=N&temperature=T); repeat for "
        "an ensemble (majority over all votes). Without it LLM-judged criteria are unjudged.",
    )(command)


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _select(paths: tuple[str, ...], ids: tuple[str, ...]):
    """The cases to run: all under PATHS, or those named by --id (an id, or a case file path).
    A case whose persona does not resolve is a usage error (file:line, exit 2), not a failed run."""
    files = [i for i in ids if i.endswith((".yaml", ".yml")) and Path(i).is_file()]
    names = [i for i in ids if i not in files]
    found = load_cases_or_exit(list(paths) or None) if names or not files else []
    picked = load_cases_or_exit(files) if files else []
    if names:
        by_id = {c.id: c for c in found}
        missing = [i for i in names if i not in by_id]
        if missing:
            from usersim.core.registry import did_you_mean

            hints = "; ".join(f"'{m}'.{did_you_mean(m, set(by_id))}" for m in missing)
            raise click.BadParameter(f"unknown case id(s): {hints}", param_hint="--id")
        picked += [by_id[i] for i in names]
    found = picked if ids else found
    if not found:
        raise click.UsageError("no cases selected")
    _check_personas(found)
    return found


def _check_personas(cases) -> None:
    from usersim.personas.loader import persona_problems

    problems = [p for c in cases if c.persona for p in persona_problems(c)]
    if problems:
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len({p.file for p in problems})} case file(s) with problems; nothing was run", err=True)
        raise SystemExit(2)


def _persona_dirs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from usersim.personas.loader import set_persona_dirs

    set_persona_dirs(value)  # every command invocation sets (or clears) its persona folders
    return value


personas_option = click.option(
    "--personas",
    "persona_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    callback=_persona_dirs,
    is_eager=True,
    expose_value=False,
    help="Folder of persona files whose ids cases may name (repeatable); also `personas/` beside the cases.",
)


TRACEBACK_LINES = 12  # the end of a crash's traceback on the console; the whole one is in results.jsonl


def print_outcome(records: Sequence[RunRecord], out_dir: Path) -> None:
    """One line per conversation with the deciding reason (a crash — the agent's, or the case's tool,
    check or judge code — followed by the end of its traceback), then the status counts and the pass
    rate (the gate's rule, with what was left out), then every inconclusive conversation by id.
    One pass over the records (a run's records are streamed from results.jsonl, not held)."""
    from usersim.core.gate import Tally, pass_rate  # after the run: not before its first request
    from usersim.reports.outcome import outcome_line

    statuses: list[str] = []
    inconclusive: list[str] = []
    for r in records:
        statuses.append(r.status)
        if r.status == "inconclusive":
            inconclusive.append(r.id)
        click.echo(outcome_line(r))
        if r.status == "error" and r.traceback:
            lines = r.traceback.rstrip().splitlines()
            cut = lines[-TRACEBACK_LINES:]
            if len(cut) < len(lines):
                cut = [f"... ({len(lines) - len(cut)} more lines in results.jsonl)", *cut]
            click.echo("\n".join("    " + line for line in cut))
    tally = Tally.of(statuses)
    counts = ", ".join(f"{k}: {v}" for k, v in tally.counts().items()) or "no conversations"
    click.echo(f"{counts}; pass rate {pass_rate(tally).text}  ->  {out_dir}/report.html")
    if inconclusive:
        click.echo(
            f"{len(inconclusive)} inconclusive conversation(s) (the simulator could not give a clean "
            "conversation even when simulated again; left out of the pass rate): " + ", ".join(inconclusive)
        )


async def check_models(cases, cfg: RunConfig) -> None:
    """Each OpenAI-compatible endpoint of the run (agent, simulator, judges) must serve the model it
    is asked for: a bogus --judge-model is refused before the first conversation, not after each."""
    import os

    from usersim.adapters.base import load_agent
    from usersim.graphs.runner import check_specs
    from usersim.judges.llm import judge_specs, parse_judge_spec
    from usersim.llm.client import aclose_clients, check_model
    from usersim.simulator.base import load_simulator

    check_specs(cases, cfg)  # names and syntax first (SpecError)
    roles: list[tuple[str, object]] = [("agent", load_agent(cfg.agent))]
    if any(c.mode == "organic" for c in cases):
        roles.append(("simulator", load_simulator(cfg.simulator)))
    targets = []
    for role, obj in roles:
        if type(obj).__module__ in ("usersim.adapters.openai_agent", "usersim.simulator.llm"):
            env = getattr(obj, "api_key_env", None)
            key = getattr(obj, "api_key", None) or (os.environ.get(env) if env else None)
            targets.append((role, cast(Any, obj).model, getattr(obj, "base_url", None), key))
    targets += [("judge", parse_judge_spec(spec).model, None, None) for spec in judge_specs(cfg.judge_model)]
    try:
        for role, model, base_url, key in dict.fromkeys(targets):
            await check_model(model, role=role, base_url=base_url, api_key=key)
    finally:
        await aclose_clients()


def _run(cases, cfg: RunConfig, out: Path) -> Sequence[RunRecord]:
    import sqlite3

    from usersim.graphs.runner import run_suite
    from usersim.graphs.store import check_out_dir, os_error_line
    from usersim.llm.client import LLMCallError

    try:
        check_out_dir(out)  # not a folder, read-only, /dev/null ... refused before any work
        try:
            asyncio.run(check_models(cases, cfg))
        except LLMCallError as exc:  # a model the endpoint does not serve, a rejected key
            raise click.UsageError(str(exc)) from None
        return asyncio.run(run_suite(cases, cfg, out))
    except ValueError as exc:  # SpecError, a run folder that refuses the run (busy, corrupt, resume)
        from usersim.graphs.runner import SpecError

        if isinstance(exc, SpecError):  # a bad --agent / --simulator / --judge: a usage error, exit 2
            raise click.UsageError(str(exc)) from None
        raise click.ClickException(str(exc)) from None
    except (OSError, sqlite3.Error) as exc:  # disk full, permissions: one line; finished records stay
        why = os_error_line(exc) if isinstance(exc, OSError) else str(exc)
        raise click.ClickException(
            f"{why}; finished conversations are kept in {out}/results.sqlite (continue with --resume)"
        ) from None


@click.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--id",
    "ids",
    multiple=True,
    help="Case id or case file to run (repeatable). Default: all cases under PATHS.",
)
@click.option(
    "--agent",
    default="reference",
    show_default=True,
    help=(
        "Agent SPEC (every scheme is listed under 'Agent SPEC schemes' above): reference, "
        "reference:window-N, openai:MODEL, openai-responses:MODEL, a2a:URL, python:mod:fn[?tools=mcp], "
        "http://...[#tools=mcp], langgraph:mod:graph[?tools=own&mode=thread], "
        "langgraph-server:URL?assistant=ID[&tools=own]"
    ),
)
@click.option(
    "--simulator",
    default="rule",
    show_default=True,
    help="User simulator SPEC for organic cases: rule, openai:MODEL.",
)
@judge_options
@click.option(
    "--repeats",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Runs per case variant (pass^k, flip rate).",
)
@click.option("--length", "length", default=None, help="Long-context lengths, e.g. 4k,16k,32k (C5 cases).")
@click.option(
    "--position", "position", default=None, help="Key-info positions: beginning,middle,end (C5 cases)."
)
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(1),
    help="Conversations at once (with --ray: in all, split across the Ray workers).",
)
@click.option(
    "--seed", default=0, show_default=True, type=int, help="Run seed; per-conversation seeds derive from it."
)
@click.option(
    "--resume", is_flag=True, help="Continue a run in --out, skipping conversations already stored."
)
@click.option(
    "--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Run directory."
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@ray_options
@click.option(
    "--judge",
    "extra_judges",
    multiple=True,
    help="Extra judge to run on every case, e.g. drift (repeatable).",
)
@click.option(
    "--resimulate",
    default=2,
    show_default=True,
    type=click.IntRange(0),
    help="Simulate a simulator-suspect organic conversation again (derived seed) up to N times; the "
    "first clean attempt decides, every attempt is kept; all suspect: inconclusive.",
)
@click.option(
    "--fail-under",
    "fail_under",
    default=None,
    type=click.FloatRange(0, 100),
    help="Exit 0 (or 3: see the exit codes above) when the pass rate passed / (passed + failed + error) is at least this "
    "(0.9 or 90), instead of exit 1 when any conversation failed or errored.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Unjudged conversations (a criterion no judge could decide) fail the gate like failures: exit 1, "
    "and they count in the pass rate's denominator.",
)
@click.option(
    "--allow-unjudged",
    is_flag=True,
    help="Accept a run that judged nothing (every conversation unjudged: pass rate 0/0) as green, exit 0, "
    "instead of exit 3. Not with --strict.",
)
@click.option(
    "--baseline",
    default=None,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="An earlier run folder: after the run, `usersim compare BASELINE OUT` writes OUT/compare.json and "
    "compare.html, and a significant regression exits 1 (see the exit codes).",
)
@personas_option
@otel_options
def run(
    paths,
    ids,
    agent,
    simulator,
    judge_models,
    judge_samples,
    repeats,
    length,
    position,
    concurrency,
    seed,
    resume,
    out,
    no_progress,
    ray_address,
    ray_actors,
    ray_runtime_env,
    extra_judges,
    resimulate,
    fail_under,
    strict,
    allow_unjudged,
    otel,
    otel_endpoint,
    baseline,
):
    """Run cases against an agent; writes OUT/results.jsonl, summary.json, report.html.

    \b
    Exit code:
      0  no conversation failed, errored or is inconclusive (unjudged ones do not count
         unless --strict)
      1  some conversation failed or errored (with --strict also: unjudged); with
         --fail-under RATE instead: the pass rate is below RATE
      3  the only non-passes are inconclusive (the simulator could not give a clean
         conversation even when simulated again), or nothing was judged (every
         conversation unjudged: pass rate 0/0; --allow-unjudged makes that 0)
      2  usage error (bad option, spec, case or persona file; nothing was run)
    With --baseline RUN_A, compare's code takes precedence when it is not 0: 1 on a
    significant regression against RUN_A (even when the gate alone is green), 2 when no
    conversation pairs with RUN_A (the run's outputs are kept). --fail-under 0 with --baseline
    gates on regressions only.

    \b
    Agent SPEC schemes (--agent):
      reference[:OPTIONS]                the offline reference agent
      openai:MODEL[?options]             an OpenAI-compatible chat-completions model
      openai-responses:MODEL[?options]   a model behind the OpenAI Responses API (?state=full)
      a2a:URL[?options]                  an A2A agent; runs its own tools (extra: [a2a])
      python:module:function[?tools=mcp] a Python function (messages, tools) -> message;
                                         ?tools=mcp hands it an MCP URL instead (extra: [mcp])
      http(s)://host/path[#tools=mcp]    an HTTP chat endpoint
      langgraph:module:attr[?options]    a compiled LangGraph graph; usersim's sandbox runs its
                                         ToolNode calls (?tools=own: its own tools, recorded)
      langgraph-server:URL?assistant=ID  a graph on LangGraph Server, a thread per conversation
                                         (extra: [langgraph-server])

    Pass rate = passed / (passed + failed + error); unjudged (unless --strict) and inconclusive
    conversations are left out of it and shown beside it. `usersim.run(...).passed` and the
    pytest plugin use the same gate.
    """
    for name, values, allowed in (
        ("--length", _csv(length), {"4k", "16k", "32k"}),
        ("--position", _csv(position), {"beginning", "middle", "end"}),
    ):
        bad = [v for v in values or [] if v not in allowed]
        if bad:
            raise click.BadParameter(f"{bad} not in {sorted(allowed)}", param_hint=name)
    if strict and allow_unjudged:
        raise click.UsageError(
            "--strict (unjudged conversations fail) and --allow-unjudged (a run of unjudged ones passes) "
            "contradict: choose one"
        )
    check_otel(otel, otel_endpoint)
    if baseline is not None:
        from usersim.cli.compare import check_baseline

        check_baseline(baseline)  # numpy/scipy and a readable baseline, before any conversation runs
    from usersim.graphs.runner import RunConfig

    cases = _select(paths, ids)
    cfg = RunConfig(
        otel=otel,
        otel_endpoint=otel_endpoint,
        agent=agent,
        simulator=simulator,
        judge_model=",".join(judge_models) or None,
        judge_samples=judge_samples,
        repeats=repeats,
        lengths=_csv(length),
        positions=_csv(position),
        concurrency=concurrency,
        resume=resume,
        seed=seed,
        progress=not no_progress,
        **ray_config(ray_address, ray_actors, ray_runtime_env, concurrency),
        extra_judges=list(extra_judges),
        resimulate=resimulate,
    )
    records = _run(cases, cfg, out)
    print_outcome(records, out)
    compared = 0
    if baseline is not None:
        from usersim.cli.compare import run_compare

        compared = run_compare(baseline, out, out, 0.05)
    exit_for(records, fail_under, strict, compared, allow_unjudged=allow_unjudged)


def exit_for(
    records: Sequence[RunRecord],
    fail_under: float | None,
    strict: bool = False,
    compared: int = 0,
    *,
    allow_unjudged: bool = False,
) -> None:
    """Exit with the gate's code (usersim.core.gate.decide): 0 green, 1 any failed or errored (with
    --strict also unjudged; with --fail-under: the pass rate is below it), 3 the only non-passes are
    inconclusive or nothing was judged (unless --allow-unjudged). The gate's reason goes to stderr,
    its last line. `compared` (--baseline: compare's exit code, 1 significant regression, 2 nothing
    paired) replaces the gate's code when it is not 0."""
    from usersim.graphs.records_view import gate_of

    # from the statuses alone
    gate = gate_of(records, strict=strict, fail_under=fail_under, allow_unjudged=allow_unjudged)
    click.echo(gate.reason, err=True)
    if compared:
        click.echo(f"--baseline: compare exits {compared} (the gate alone: exit {gate.exit_code})", err=True)
    code = compared or gate.exit_code
    if code:
        raise SystemExit(code)


DEMO_MARKER = ".usersim-demo"


def _fresh_demo_dir(out: Path) -> None:
    """Start the demo in an empty OUT. A folder an earlier demo wrote (it holds the marker file) is
    replaced; any other non-empty folder is refused, never deleted."""
    if out.exists() and not out.is_dir():
        raise click.UsageError(f"--out {out} is a file; choose a folder", ctx=None)
    if out.is_dir() and any(out.iterdir()):
        if not (out / DEMO_MARKER).is_file():
            raise click.UsageError(
                f"--out {out} is not empty and was not written by `usersim demo`; "
                "choose a new or empty folder (nothing was deleted)"
            )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARKER).write_text("written by `usersim demo`; the next demo run may replace this folder\n")


@click.command()
@click.option(
    "--out",
    "out",
    default=Path("runs/demo"),
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option("--agent", default="reference", show_default=True, help="Agent SPEC.")
def demo(out: Path, agent: str) -> None:
    """The offline demo: seed cases against the reference agent and a flawed variant (OUT/flawed/),
    with the rule simulator and rule judges."""
    from usersim.graphs.runner import RunConfig

    _fresh_demo_dir(out)
    cases = _select((), tuple(DEMO_CASES))
    records = _run(cases, RunConfig(agent=agent, simulator="rule", concurrency=4), out)
    print_outcome(records, out)
    # The same cases against a deliberately flawed agent: the judges must tell the difference.
    flawed_out = out / "flawed"
    click.echo(f"\nThe same cases against {DEMO_FLAWED_AGENT} (never asks, ignores the history):")
    flawed = _run(cases, RunConfig(agent=DEMO_FLAWED_AGENT, simulator="rule", concurrency=4), flawed_out)
    print_outcome(flawed, flawed_out)


@click.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@judge_options
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Write here instead of in place.",
)
@click.option(
    "--cases",
    "cases_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="Case files or folders to find the cases in (repeatable). Default: the files the run used.",
)
@personas_option
@otel_options
def rescore(
    run_dir: Path,
    judge_models: tuple[str, ...],
    judge_samples: int,
    out: Path | None,
    cases_paths: tuple[str, ...],
    otel: bool,
    otel_endpoint: str | None,
) -> None:
    """Re-judge the stored transcripts of RUN_DIR without re-running any conversation."""
    from usersim.core.registry import UnknownNameError
    from usersim.core.yamlfile import FileProblems
    from usersim.graphs.rescore import rescore_run
    from usersim.judges.base import JudgeConfig

    check_otel(otel, otel_endpoint)
    try:
        config = JudgeConfig(judge_model=",".join(judge_models) or None, judge_samples=judge_samples)
        records = asyncio.run(rescore_run(run_dir, config, out, list(cases_paths) or None))
    except FileProblems as exc:
        raise click.ClickException("\n".join(str(p) for p in exc.problems)) from None
    except (ValueError, UnknownNameError) as exc:
        raise click.ClickException(str(exc)) from None
    print_outcome(records, out or run_dir)
    export_after(records, otel, otel_endpoint)
