"""`usersim tools ...`: list the simulated tools, or call one as a case's N-th call would be answered."""

from __future__ import annotations

import asyncio
import json
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
@click.option("--json", "as_json", is_flag=True, help="Print the OpenAI tool schemas as a JSON array.")
def list_tools(as_json: bool) -> None:
    """List every simulated tool with its arguments."""
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
