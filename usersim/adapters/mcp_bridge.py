"""`?tools=mcp`: hand the agent an MCP endpoint instead of tool schemas.

The first agent step that asks for it starts one streamable-HTTP MCP server for the process (a
daemon thread with its own event loop, on 127.0.0.1, any free port). Each agent step gets its own
URL `http://127.0.0.1:PORT/mcp/<token>`, valid while that step runs: tools/list answers the
conversation's sandbox tools, and tools/call runs the call through the conversation's `run_tool`
(on the conversation's own event loop), so intercepts, call numbering and the domain state are the
conversation's, and every call lands in its tool trace. The calls made during the step come back
as transcript messages (an assistant tool call and its tool result each, in order) before the
agent's answer, as if the harness had run them.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from usersim.adapters.base import AgentError, AgentInput
from usersim.core.messages import Message, ToolCall

try:
    from usersim.sandbox import mcp_server
except ImportError as exc:  # names the extra to install
    raise AgentError(str(exc)) from None

UNKNOWN_ENDPOINT = -32001


@dataclass
class Step:
    """One agent step served over MCP: its URL, the conversation's tools and the calls it made."""

    url: str
    tools: list[dict[str, Any]]
    inp: AgentInput
    loop: asyncio.AbstractEventLoop
    calls: list[tuple[ToolCall, Message]] = field(default_factory=list)
    call_prefix: str = "mcp"  # tool-call ids: unique across the steps of one turn, too

    def messages(self) -> list[Message]:
        """The step's MCP calls as transcript messages: assistant tool call, tool result, in order."""
        out: list[Message] = []
        for call, result in self.calls:
            out.append(Message(role="assistant", content="", tool_calls=[call]))
            out.append(result.model_copy(update={"tool_call_id": call.id, "name": call.name}))
        return out


class _BridgeHost:
    """Routes an MCP request to the step whose token is in its URL."""

    def __init__(self) -> None:
        self.steps: dict[str, Step] = {}

    def _step(self, token: str) -> Step:
        step = self.steps.get(token)
        if step is None:
            raise mcp_server.MCPError(
                UNKNOWN_ENDPOINT,
                f"no agent step is live at /mcp/{token}: use the mcp_url handed to the agent for the "
                "current step (a URL is valid only while that step runs)",
            )
        return step

    def tools(self, conversation: str) -> list[dict[str, Any]]:
        return self._step(conversation).tools

    async def call(self, conversation: str, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        step = self._step(conversation)
        call = ToolCall(id=f"{step.call_prefix}_{len(step.calls) + 1}", name=name, arguments=arguments)
        slot = len(step.calls)
        step.calls.append((call, Message(role="tool", content="")))

        async def run() -> Message:  # on the conversation's loop: its sandbox, its trace
            return await step.inp.run_tool(name, arguments)

        running = asyncio.run_coroutine_threadsafe(run(), step.loop)
        try:
            result = await asyncio.wrap_future(running)
        except Exception as exc:  # a case's tool crashed: the conversation ends as case_error anyway
            result = Message(role="tool", content=f"Error: tool '{name}' failed: {exc}", is_error=True)
        step.calls[slot] = (call, result)
        return result.content, result.is_error


class MCPBridge:
    """The process's MCP server for agents (started on first use, lives as long as the process)."""

    def __init__(self) -> None:
        self.host = _BridgeHost()
        self._lock = threading.Lock()
        self.base_url: str | None = None

    def start(self) -> str:
        """Start the server thread once; the base URL `http://127.0.0.1:PORT/mcp`."""
        with self._lock:
            if self.base_url is None:
                sock = mcp_server.bind("127.0.0.1", 0)
                server = mcp_server.uvicorn_server(
                    mcp_server.http_app(mcp_server.build_server(self.host, "usersim-run"))
                )
                started = threading.Event()

                async def run() -> None:
                    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
                    while not server.started and not serving.done():
                        await asyncio.sleep(0.01)
                    started.set()
                    await serving

                threading.Thread(target=asyncio.run, args=(run(),), name="usersim-mcp", daemon=True).start()
                if not started.wait(30) or not server.started:
                    raise AgentError("the MCP server for ?tools=mcp did not start within 30s")
                self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
            return self.base_url

    @contextlib.asynccontextmanager
    async def step(self, inp: AgentInput) -> AsyncIterator[Step]:
        """Serve one agent step: yields the Step whose `url` the agent connects to."""
        base = await asyncio.to_thread(self.start)
        token = secrets.token_urlsafe(12)
        step = Step(f"{base}/{token}", list(inp.tools), inp, asyncio.get_running_loop())
        # deterministic (replays compare transcripts) and unique: the conversation grows every step
        step.call_prefix = f"mcp_{len(inp.messages)}"
        self.host.steps[token] = step
        try:
            yield step
        finally:
            self.host.steps.pop(token, None)


_BRIDGE = MCPBridge()


def mcp_step(inp: AgentInput) -> contextlib.AbstractAsyncContextManager[Step]:
    """`async with mcp_step(inp) as step:` — call the agent with `step.url`, then read `step.messages()`."""
    return _BRIDGE.step(inp)
