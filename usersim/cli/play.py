"""`usersim play CASE --agent SPEC`: a person takes the user's seat in the terminal."""

from __future__ import annotations

import asyncio
import signal
import sys
from dataclasses import replace
from pathlib import Path

import click

from usersim.cli.run import judge_options, personas_option


def _case(case: str, paths: tuple[str, ...]):
    """CASE as a case file, or an id among the cases under --cases (default: the bundled library)."""
    from usersim.cases.loader import load_cases_or_exit
    from usersim.core.registry import did_you_mean

    if case.endswith((".yaml", ".yml")) and Path(case).is_file():
        found = load_cases_or_exit([case])
    else:
        by_id = {c.id: c for c in load_cases_or_exit(list(paths) or None)}
        if case not in by_id:
            where = ", ".join(paths) if paths else "the bundled library (give --cases PATH for your own)"
            raise click.BadParameter(
                f"unknown case '{case}' in {where}.{did_you_mean(case, set(by_id))}", param_hint="CASE"
            )
        found = [by_id[case]]
    if found[0].mode != "organic":
        raise click.BadParameter(
            f"case '{found[0].id}' is static (it replays a fixed history): play needs an organic case "
            "with a persona and a goal",
            param_hint="CASE",
        )
    from usersim.cli.run import _check_personas

    _check_personas(found)
    return found[0]


def _max_turns(case, persona) -> int:
    return case.max_turns or persona.max_turns or 10  # as graphs.nodes counts the budget


def _auto_spec(simulator_model: str | None) -> str:
    if simulator_model is None:
        return "rule"
    return simulator_model if ":" in simulator_model else f"openai:{simulator_model}"


@click.command()
@click.argument("case")
@click.option(
    "--cases",
    "case_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="Case files or folders to find CASE in (repeatable). Default: the bundled library.",
)
@click.option("--agent", default="reference", show_default=True, help="Agent SPEC (as for `usersim run`).")
@click.option(
    "--take-over",
    "take_over",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="The turn you take the seat at: the simulator plays turns 1..N-1.",
)
@click.option(
    "--simulator-model",
    default=None,
    help="The LLM simulator (openai:MODEL, or MODEL) plays the turns you do not (before --take-over, "
    "after /hand-back). Default: the rule simulator.",
)
@judge_options
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed (the simulator's wording).")
@click.option(
    "--out",
    "out",
    default=Path("runs/play"),
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Run folder; each session is added to it as the case's next repeat.",
)
@personas_option
def play(case, case_paths, agent, take_over, simulator_model, judge_models, judge_samples, seed, out):
    """A person takes the user's seat: you read the persona card and the goal, type each user turn,
    and see the agent's reply with the tools it called, their results and the state rows they
    changed. The conversation is judged and stored in OUT like any run's (`simulator: human`, or
    `human+rule` when the seat was shared; each user turn marked `by: human|simulator`).

    \b
    At the prompt:
      /done [last words]  the goal is reached: end (goal_met)
      /stop [why]         end without the goal (user_stopped); end of input does the same
      /hand-back          the simulator plays this turn and the rest
      /card               the persona card and the goal again
      /help               the commands
    Ctrl-C ends the conversation after the turn under way and keeps it; a second one aborts.
    Exit code as `usersim run`: 0 passed, 1 failed or errored, 3 inconclusive or unjudged, 2 usage.
    """
    from usersim.graphs.plan import RunPlan
    from usersim.graphs.runner import RunConfig
    from usersim.simulator.base import load_simulator
    from usersim.simulator.human import HumanSimulator
    from usersim.simulator.human_input import LineReader

    picked = _case(case, case_paths)
    persona = RunPlan().persona(picked)
    budget = _max_turns(picked, persona)
    if take_over > budget:
        raise click.BadParameter(
            f"{take_over} is beyond case {picked.id}'s max_turns {budget}: the seat can be taken at turns 1-{budget}",
            param_hint="--take-over",
        )
    auto = _auto_spec(simulator_model)
    cfg = RunConfig(
        agent=agent,
        simulator=auto,
        judge_model=",".join(judge_models) or None,
        judge_samples=judge_samples,
        seed=seed,
        concurrency=1,
        resimulate=0,  # a person's conversation is not simulated again
        progress=False,
    )
    _check(picked, cfg, out)
    keys = picked.environment.keys if picked.environment else {}
    seat = HumanSimulator(
        auto=load_simulator(auto),
        reader=LineReader(sys.stdin.fileno()),
        out=sys.stdout,
        take_over=take_over,
        title=picked.title or "",
        keys=dict(keys),
    )
    record = _play(picked, replace(cfg, simulator="human", simulator_instance=seat), out, seat)
    from usersim.cli.run import exit_for, print_outcome

    print_outcome([record], out)
    exit_for([record], None)


def _check(case, cfg, out: Path) -> None:
    """The specs and OUT, before the person types a word (a usage error exits 2)."""
    from usersim.cli.run import check_models
    from usersim.graphs.runner import SpecError
    from usersim.graphs.store import check_out_dir
    from usersim.llm.client import LLMCallError

    try:
        check_out_dir(out)
        _check_folder_agent(cfg, out)
        asyncio.run(check_models([case], cfg))
    except (SpecError, LLMCallError) as exc:
        raise click.UsageError(str(exc)) from None
    except ValueError as exc:  # RunFolderError
        raise click.ClickException(str(exc)) from None


def _check_folder_agent(cfg, out: Path) -> None:
    """A folder of play sessions holds one agent's (graphs.play.session_meta says why)."""
    if not (out / "results.sqlite").is_file():
        return
    from usersim.core.secrets import redact
    from usersim.graphs.store import RunStore

    store = RunStore(out / "results.sqlite")
    try:
        agent = store.get_meta().get("agent")
    finally:
        store.close()
    if agent not in (None, redact(cfg.agent)):
        raise click.UsageError(
            f"--out {out} holds sessions with the agent {agent}, not {redact(cfg.agent)}: a folder's "
            "sessions share one agent (their success rate is its); choose another --out"
        )


def _play(case, cfg, out: Path, seat):
    """The session, with Ctrl-C handed to the seat: the first ends the conversation and keeps it."""
    from usersim.graphs.play import play_session

    def on_sigint(signum, frame):
        seat.interrupt()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        return asyncio.run(play_session(case, cfg, out))
    except KeyboardInterrupt:
        click.echo("\naborted: this conversation was not stored", err=True)
        raise SystemExit(130) from None
    except ValueError as exc:  # RunFolderError: a folder with another agent's sessions, busy, corrupt
        raise click.ClickException(str(exc)) from None
    finally:
        signal.signal(signal.SIGINT, previous)
