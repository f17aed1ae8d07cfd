"""The `usersim` console script. Each package contributes its command group from its own cli.py."""

from __future__ import annotations

import importlib
import importlib.util

import click

# "module:attribute" of click commands/groups contributed by the packages.
SUBCOMMANDS = [
    "cases.cli:validate",
    "cases.cli:cases",
    "cases.cli:schema",
    "cases.cli:expand",
    "cases.cli:decay",
    "graphs.cli:run",
    "graphs.cli:demo",
    "graphs.cli:rescore",
    "graphs.cli:explore",
    "graphs.cli:promote",
    "sandbox.cli:tools",
    "personas.cli:persona",
    "judges.cli:judges",
    "reports.cli:report",
]


@click.group()
@click.version_option(package_name="usersim")
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
