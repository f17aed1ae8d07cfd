"""`usersim tools ...`: list the simulated tools, or call one as a case's N-th call would be answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from usersim.cases.schema import Case


def _adhoc_case() -> Case:
    """A case with the default tools and no intercepts, for calls made without --case."""
    return Case.model_validate(
        {
            "id": "tools-call",
            "dimension": "sandbox",
            "title": "usersim tools call",
            "input": {"message": "(tools call)"},
            "judging": {"scoring": {"methods": ["auto"]}},
        }
    )


def _load_case(ref: str) -> Case:
    from usersim.cases.loader import find_case
    from usersim.core.registry import UnknownNameError
    from usersim.core.yamlfile import FileProblems

    path = Path(ref)
    if ref.endswith((".yaml", ".yml")) and not path.is_file():
        why = "is a folder, not a case file" if path.is_dir() else "does not exist"
        raise click.ClickException(f"case file {ref} {why}")
    try:
        return find_case(ref)
    except (UnknownNameError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    except FileProblems as exc:
        raise click.ClickException(f"case '{ref}' is not valid:\n{exc}") from None


@click.group()
def tools() -> None:
    """The simulated tool sandbox: list tools, call one as a case would."""


@tools.command("list")
@click.option(
    "--case",
    "case_ref",
    default=None,
    help="Case id or case YAML: show the tools and state tables the agent gets in that case.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: the OpenAI tool schemas (with --case: {case, file, tools, state}).",
)
def list_tools(case_ref: str | None, as_json: bool) -> None:
    """List every simulated tool with its arguments, or (--case) the tools, their parameters and
    the domain state tables an agent gets in one case."""
    if case_ref is not None:
        _list_case(case_ref, as_json)
        return
    from usersim.sandbox.tools import tool_registry

    schemas = [tool_registry.get(n).schema() for n in tool_registry.names()]
    if as_json:
        click.echo(json.dumps(schemas, ensure_ascii=False, indent=2))
        return
    for s in schemas:
        fn = s["function"]
        params = fn["parameters"]
        args = [p if p in params.get("required", []) else f"{p}?" for p in params["properties"]]
        click.echo(f"{fn['name']}({', '.join(args)})")
        click.echo(f"    {fn['description'].split('. ')[0].rstrip('.')}.")


def _list_case(case_ref: str, as_json: bool) -> None:
    from usersim.cli.tools_view import case_view, render_case_view

    case = _load_case(case_ref)
    try:
        view = case_view(case)
    except (KeyError, ValueError) as exc:
        where = case.file or case_ref
        raise click.ClickException(f"{where}: {exc}") from None
    if as_json:
        click.echo(json.dumps(view, ensure_ascii=False, indent=2))
    else:
        click.echo(render_case_view(view))


@tools.command("call")
@click.argument("name")
@click.option("--args", "args_json", default="{}", show_default=True, help="Tool arguments as a JSON object.")
@click.option(
    "--case", "case_ref", default=None, help="Case id (searched under cases/) or path to a case YAML."
)
@click.option(
    "--call-number",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Answer as the N-th call of this tool in the conversation (intercepts keyed on it fire).",
)
def call_tool(name: str, args_json: str, case_ref: str | None, call_number: int) -> None:
    """Call tool NAME and print JSON {name, arguments, result, is_error, intercepted}."""
    from usersim.sandbox.base import open_sandbox

    try:
        arguments: Any = json.loads(args_json)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", param_hint="--args"
        ) from None
    if not isinstance(arguments, dict):
        raise click.BadParameter('must be a JSON object like \'{"city": "北京"}\'', param_hint="--args")
    case = _load_case(case_ref) if case_ref else _adhoc_case()
    try:
        sandbox = open_sandbox(case)
    except (KeyError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    event = asyncio.run(sandbox.call(name, arguments, turn=1, call_number=call_number))
    click.echo(
        json.dumps(
            {
                "name": event.name,
                "arguments": event.arguments,
                "result": event.result,
                "is_error": event.is_error,
                "intercepted": event.intercepted,
                "call_number": event.call_number,
                "case": case.id if case_ref else None,
            },
            ensure_ascii=False,
            indent=2,
        )
    )
