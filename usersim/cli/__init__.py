"""The `usersim` console script. Each command lives in its own module under usersim/cli and is
imported only when it runs, so `usersim --help` does not import the whole framework."""

from __future__ import annotations

import gc
import importlib

import click

from usersim import __version__

# name -> ("module:attribute", one-line help shown by `usersim --help` without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("usersim.cli.cases:validate", "Validate case, persona and SKILL.md files."),
    "cases": ("usersim.cli.cases:cases", "Inspect the case library."),
    "schema": ("usersim.cli.cases:schema", "Print the JSON Schema of a file format."),
    "expand": ("usersim.cli.longctx:expand", "Expand a long-context case's history to 4k/16k/32k tokens."),
    "decay": ("usersim.cli.longctx:decay", "Decay sweep (seed 003) over turn counts."),
    "run": ("usersim.cli.run:run", "Run cases against an agent; writes results, summary and report."),
    "play": ("usersim.cli.play:play", "A person takes the user's seat in the terminal; judged and stored."),
    "demo": ("usersim.cli.run:demo", "The offline demo: seed cases against the reference agent."),
    "rescore": ("usersim.cli.run:rescore", "Re-judge the stored transcripts of a run without re-running."),
    "explore": (
        "usersim.cli.explore:explore",
        "Persona variants x seeds on organic cases; failures clustered, coverage mapped.",
    ),
    "import": (
        "usersim.cli.importer:importer",
        "Turn production conversations (OpenAI JSONL, LangSmith, OTLP) into cases.",
    ),
    "promote": ("usersim.cli.promote:promote", "Turn a failing record of a run into a regression case."),
    "shrink": ("usersim.cli.shrink:shrink", "Shrink a failing record to the shortest regression case."),
    "tools": ("usersim.cli.tools:tools", "The simulated tool sandbox: list tools, call one."),
    "sandbox": ("usersim.cli.sandbox:sandbox", "Serve a case's simulated tools to an agent over MCP."),
    "persona": ("usersim.cli.persona:persona", "Author personas: scaffold, lint, preview, list and vary."),
    "judges": ("usersim.cli.judges:judges", "Judges and rule checks: list, calibrate, human review."),
    "report": ("usersim.cli.report:report", "Rebuild summary.json and report.html of a run folder."),
    "otel": ("usersim.cli.otel:otel", "Export stored runs as OpenTelemetry traces (OTLP/HTTP or OTLP/JSON)."),
    "compare": ("usersim.cli.compare:compare", "Pair two runs and test which differences are regressions."),
    "plan-repeats": ("usersim.cli.compare:plan_repeats", "Repeats needed to detect a drop in pass rate."),
    "realism": ("usersim.cli.realism:realism", "Compare simulated users with human ones, trait by trait."),
}


_FIRST_IMPORT = [True]


def _import_command(module_name: str) -> object:
    """The command's module. The process's first one is imported with the cyclic garbage collector
    paused, then everything imported so far is frozen out of later collections (gc.freeze): a
    command's start allocates ~10^6 long-lived objects (pydantic models, langgraph, langchain-core)
    and the collector would otherwise rescan the growing heap over and over (~15-20% of the CPU
    before `usersim run`'s first model request). Modules and classes live as long as the process,
    so nothing collectable is kept."""
    if not _FIRST_IMPORT[0] or not gc.isenabled():
        return importlib.import_module(module_name)
    _FIRST_IMPORT[0] = False
    gc.disable()
    try:
        return importlib.import_module(module_name)
    finally:
        gc.freeze()
        gc.enable()


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, attr = COMMANDS[cmd_name][0].split(":")
        return getattr(_import_command(module_name), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])

    def invoke(self, ctx: click.Context) -> object:
        """A bad input file anywhere (a case, a persona, a results.jsonl, a price table) ends any command
        with its `file:line: field: message` lines and exit 2; an OS error (permissions, a full disk)
        with one line and exit 1; never a traceback."""
        from usersim.core.yamlfile import FileProblems

        try:
            return super().invoke(ctx)
        except FileProblems as exc:
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            ctx.exit(2)
        except OSError as exc:  # a read-only folder, a full disk, a path under a file: one line
            what = exc.strerror or str(exc) or type(exc).__name__
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"Error: {what}{where}", err=True)
            ctx.exit(1)


@click.group(cls=LazyGroup)
@click.version_option(version=__version__, prog_name="usersim")
def main() -> None:
    """usersim: simulated users talk to your agent; judges score what happened."""
