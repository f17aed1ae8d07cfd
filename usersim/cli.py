"""The `usersim` console script. Each package contributes its command group from its own cli.py."""

from __future__ import annotations

import importlib
import importlib.util

import click

from usersim import __version__

# "module:attribute" of click commands/groups contributed by the packages.
SUBCOMMANDS = [
    "usersim.cases.cli:validate",
    "usersim.cases.cli:cases",
    "usersim.cases.cli:schema",
    "usersim.cases.cli:expand",
    "usersim.cases.cli:decay",
    "usersim.graphs.cli:run",
    "usersim.graphs.cli:demo",
    "usersim.graphs.cli:rescore",
    "usersim.graphs.cli:explore",
    "usersim.graphs.cli:promote",
    "usersim.sandbox.cli:tools",
    "usersim.personas.cli:persona",
    "usersim.judges.cli:judges",
    "usersim.reports.cli:report",
]


@click.group()
@click.version_option(version=__version__, prog_name="usersim")
def main() -> None:
    """usersim: simulated users talk to your agent; judges score what happened."""


def _install_subcommands() -> None:
    for ref in SUBCOMMANDS:
        module_name, attr = ref.split(":")
        if importlib.util.find_spec(module_name) is None:
            continue  # package part not present in this build
        command = getattr(importlib.import_module(module_name), attr)
        main.add_command(command)


_install_subcommands()
