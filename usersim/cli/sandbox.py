"""`usersim sandbox serve CASE --mcp [--http PORT]`: a case's sandbox tools for an agent that takes its
tools over MCP, outside `usersim run` (e.g. to try an agent against the bank domain by hand)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from usersim.cli.tools import _load_case


@click.group()
def sandbox() -> None:
    """Serve a case's simulated tools to an agent over a protocol."""


@sandbox.command("serve")
@click.argument("case_ref", metavar="CASE")
@click.option("--mcp", "use_mcp", is_flag=True, help="Speak MCP (the only protocol so far; required).")
@click.option(
    "--http",
    "port",
    type=click.IntRange(min=0, max=65535),
    metavar="PORT",
    default=None,
    help="Serve streamable HTTP on PORT (0: any free port) instead of stdio.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on with --http.")
@click.option(
    "--trace",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write every tool call as one JSON line (the file is started afresh): conversation, "
    "call_number, name, arguments, result, is_error, intercepted, latency_s.",
)
@click.option(
    "--skills/--no-skills",
    "skills_on",
    default=None,
    help="Expose the case's skills (default: as the case says).",
)
def serve(
    case_ref: str, use_mcp: bool, port: int | None, host: str, trace: Path | None, skills_on: bool | None
) -> None:
    """Serve CASE's tools (its schemas, intercepts and domain state) over MCP.

    Each conversation gets its own state and call numbering: over stdio the process is one
    conversation; over HTTP each MCP session is one, or each URL /mcp/NAME for sessionless clients.
    """
    if not use_mcp:
        raise click.UsageError("choose the protocol to serve: --mcp")
    try:
        from usersim.sandbox import mcp_server
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    case = _load_case(case_ref)
    try:
        tool_host = mcp_server.SandboxHost(case, skills_on=skills_on, trace=trace)
    except (KeyError, ValueError) as exc:
        raise click.ClickException(f"case {case.id}: {exc}") from None
    names = ", ".join(s["function"]["name"] for s in tool_host.schemas)
    if port is None:
        click.echo(f"usersim: case {case.id}: serving {names} over MCP on stdio", err=True)
        asyncio.run(mcp_server.serve_stdio(tool_host))
        return
    try:
        sock = mcp_server.bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(
        f"usersim: case {case.id}: serving {names} over MCP at http://{shown}:{bound}/mcp "
        f"(one conversation per MCP session, or per URL http://{shown}:{bound}/mcp/NAME)",
        err=True,
    )
    asyncio.run(mcp_server.serve_http(tool_host, sock, host))
