"""A case's sandbox tools over MCP (the official `mcp` SDK, low-level `Server`).

One MCP *conversation* = one usersim conversation: its own copy of the domain state, its own call
numbering (so intercepts keyed on `intercept_on_call_number` fire on that conversation's N-th call)
and its own tool trace. Which conversation a request belongs to:

* stdio: the process serves exactly one conversation (`stdio`);
* streamable HTTP at `/mcp/<name>`: conversation `<name>` (what a sessionless 2026-07-28 client uses);
* streamable HTTP at `/mcp` with an `Mcp-Session-Id` (a handshake-era client): that session;
* streamable HTTP at `/mcp` without either: the shared conversation `default`.

`build_server(host)` is transport-free: a `ToolHost` says which tools a conversation sees and runs
its calls. `SandboxHost` is the standalone one (`usersim sandbox serve`); the agent adapters bring
their own host that routes calls into the running conversation (adapters/mcp_bridge.py).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any, Protocol

try:
    import uvicorn
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.shared.exceptions import MCPError
    from starlette.applications import Starlette
    from starlette.routing import Route
except ImportError as exc:  # the optional extra is not installed
    raise ImportError(
        f"MCP support needs the 'mcp' package ({exc.name} is missing): pip install 'usersim-harness[mcp]'"
    ) from exc

from usersim.cases.schema import Case
from usersim.core.errors import CaseError
from usersim.sandbox.base import Sandbox, open_sandbox

STDIO = "stdio"
DEFAULT = "default"
INVALID_PARAMS = -32602


class ToolHost(Protocol):
    """What an MCP server needs from usersim: the tools and the calls of one conversation."""

    def tools(self, conversation: str) -> list[dict[str, Any]]:
        """The OpenAI tool schemas this conversation sees; raise MCPError for an unknown one."""
        ...

    async def call(self, conversation: str, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one call in this conversation: (result text, is_error)."""
        ...


def conversation_of(request: Any) -> str:
    """The conversation a request belongs to (see the module docstring)."""
    if request is None:
        return STDIO
    named = request.path_params.get("conversation")
    if named:
        return str(named)
    return request.headers.get("mcp-session-id") or DEFAULT


def mcp_tool(schema: dict[str, Any]) -> types.Tool:
    """An OpenAI function schema as an MCP tool (the parameters are the input schema, unchanged)."""
    fn = schema["function"]
    return types.Tool(
        name=fn["name"],
        description=fn.get("description") or "",
        input_schema=fn.get("parameters") or {"type": "object", "properties": {}},
    )


def build_server(host: ToolHost, name: str = "usersim-sandbox") -> Server[Any]:
    """A low-level MCP server whose tools/list and tools/call are answered by `host`."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[mcp_tool(s) for s in host.tools(conversation_of(ctx.request))])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        conversation = conversation_of(ctx.request)
        arguments = params.arguments if params.arguments is not None else {}
        if not isinstance(arguments, dict):
            raise MCPError(INVALID_PARAMS, "tool arguments must be a JSON object")
        text, is_error = await host.call(conversation, params.name, dict(arguments))
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def http_app(server: Server[Any], host: str = "127.0.0.1") -> Starlette:
    """Streamable HTTP at `/mcp` and `/mcp/{conversation}` (one session manager for both)."""
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    app.router.routes.append(
        Route("/mcp/{conversation}", endpoint=StreamableHTTPASGIApp(server.session_manager))
    )
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port; read it back with getsockname)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def uvicorn_server(app: Starlette) -> uvicorn.Server:
    """A quiet uvicorn server for `app` (served on sockets bound by `bind`)."""
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False))


class SandboxHost:
    """The standalone host: a fresh `Sandbox` of `case` per conversation, every call appended to
    `trace` (JSONL, one line per call: the conversation name and the ToolEvent fields)."""

    def __init__(self, case: Case, *, skills_on: bool | None = None, trace: Path | None = None) -> None:
        self.case = case
        self.skills_on = skills_on
        self.trace = trace
        self.sandboxes: dict[str, Sandbox] = {}
        # built once up front, so a case with an unknown tool fails at start, not at the first call
        self.schemas = open_sandbox(case, skills_on=skills_on).tool_schemas()
        if trace is not None:
            trace.parent.mkdir(parents=True, exist_ok=True)
            trace.write_text("", encoding="utf-8")

    def sandbox(self, conversation: str) -> Sandbox:
        """The conversation's sandbox, opened on its first request."""
        if conversation not in self.sandboxes:
            self.sandboxes[conversation] = open_sandbox(self.case, skills_on=self.skills_on)
        return self.sandboxes[conversation]

    def tools(self, conversation: str) -> list[dict[str, Any]]:
        return self.schemas

    async def call(self, conversation: str, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        sandbox = self.sandbox(conversation)
        try:
            event = await sandbox.call(name, arguments, turn=1)
        except CaseError as exc:  # the case's own tool crashed: the author's bug, not the agent's
            print(f"usersim: tool '{name}' of case {self.case.id} crashed:\n{exc}", file=sys.stderr)
            return f"Error: tool '{name}' failed (a bug in the case's tool, see the server log)", True
        if self.trace is not None:
            line = {"conversation": conversation, **event.model_dump(exclude={"message_index"})}
            with self.trace.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        return event.result, event.is_error


async def serve_stdio(host: ToolHost) -> None:
    """Serve one conversation over this process's stdin/stdout until the client closes it."""
    server = build_server(host)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(host: ToolHost, sock: socket.socket, bind_host: str = "127.0.0.1") -> None:
    """Serve over streamable HTTP on a socket from `bind` until the process is stopped."""
    await uvicorn_server(http_app(build_server(host), bind_host)).serve(sockets=[sock])
