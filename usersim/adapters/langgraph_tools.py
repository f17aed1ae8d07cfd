"""Binding a LangGraph graph's tool execution to usersim's sandbox.

A graph built with `langgraph.prebuilt.ToolNode` (hand-built, `create_react_agent`, LangChain's
`create_agent`) executes tool calls in that node. `bind(graph)` finds every ToolNode in the graph
and its subgraphs and installs an `awrap_tool_call` wrapper (ToolNode's own interception seam) whose
executor is the sandbox: inside a usersim conversation (`SandboxSession`) each call the node would
run goes to the harness's `run_tool` instead (intercepts apply, the call lands in the tool trace),
and the graph's own tool body never runs. A wrapper the graph already had (middleware: retries,
logging) stays in place around the sandbox executor. Outside a session (`?tools=own`, or the graph
used outside usersim) the node runs as it was built.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolNode

from usersim.adapters.base import AgentError, ToolRunner


@dataclass
class SandboxSession:
    """The conversation a graph is serving: its run_tool and what the sandbox answered so far."""

    run_tool: ToolRunner
    answered: set[str] = field(default_factory=set)  # tool_call ids a bound ToolNode sent to the sandbox
    body_calls: int = 0  # calls through the sandbox tools' bodies (factory graphs calling tools directly)


# The session of the conversation being served, so one graph serves many conversations at once.
SESSION: contextvars.ContextVar[SandboxSession | None] = contextvars.ContextVar(
    "usersim_langgraph_session", default=None
)

Wrapper = Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]


def sandbox_tools(schemas: list[dict[str, Any]]) -> list[BaseTool]:
    """LangChain tools for the sandbox tool schemas; each call goes through the harness's run_tool
    (given to a factory `attr(tools)` and in `config["configurable"]["tools"]`)."""
    tools: list[BaseTool] = []
    for schema in schemas:
        fn = schema.get("function", schema)
        name = fn["name"]

        async def _call(_name: str = name, **kwargs: Any) -> str:
            session = SESSION.get()
            if session is None:
                raise RuntimeError(f"tool {_name} called outside a usersim conversation")
            session.body_calls += 1
            result = await session.run_tool(_name, kwargs)
            return result.content

        tools.append(
            StructuredTool.from_function(
                coroutine=_call,
                name=name,
                description=fn.get("description") or name,
                args_schema=fn.get("parameters") or {"type": "object", "properties": {}},
            )
        )
    return tools


def tool_nodes(graph: Any) -> dict[str, ToolNode]:
    """Every ToolNode of a compiled graph and its subgraphs, by node path (`tools`, `sub/tools`)."""
    found: dict[str, ToolNode] = {}

    def walk(g: Any, prefix: str, depth: int) -> None:
        for name, node in (getattr(g, "nodes", None) or {}).items():
            bound = getattr(node, "bound", node)
            if isinstance(bound, ToolNode):
                found[prefix + name] = bound
            elif depth < 8 and hasattr(bound, "nodes") and hasattr(bound, "ainvoke"):  # a subgraph
                walk(bound, f"{prefix}{name}/", depth + 1)

    walk(graph, "", 0)
    return found


def bind(graph: Any, spec: str) -> dict[str, ToolNode]:
    """Route the tool calls of every ToolNode in `graph` to the sandbox (once per node); returns
    the nodes. A node with only a sync `wrap_tool_call` cannot be bound: AgentError saying so."""
    nodes = tool_nodes(graph)
    for path, node in nodes.items():
        if getattr(node, "_usersim_bound", False):
            continue
        inner: Wrapper | None = node._awrap_tool_call
        if inner is None and node._wrap_tool_call is not None:
            raise AgentError(
                f"LangGraph agent {spec}: ToolNode '{path}' has only a sync wrap_tool_call, so usersim cannot "
                "route its tool calls to the sandbox; give it an async awrap_tool_call too, or use ?tools=own"
            )
        node._awrap_tool_call = _sandbox_wrapper(inner)
        node._usersim_bound = True  # type: ignore[attr-defined]
    return nodes


def _sandbox_wrapper(inner: Wrapper | None) -> Wrapper:
    async def wrapper(request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        session = SESSION.get()
        if session is None:  # not a sandbox conversation: the node runs its own tools as built
            return await (inner(request, execute) if inner is not None else execute(request))
        active = session

        async def run_in_sandbox(req: Any) -> ToolMessage:
            call = req.tool_call
            active.answered.add(str(call.get("id")))
            result = await active.run_tool(call["name"], dict(call.get("args") or {}))
            return ToolMessage(
                content=result.content,
                name=call["name"],
                tool_call_id=call["id"],
                status="error" if result.is_error else "success",
            )

        return await (inner(request, run_in_sandbox) if inner is not None else run_in_sandbox(request))

    return wrapper


def foreign_tools(nodes: dict[str, ToolNode], sandbox: set[str]) -> dict[str, list[str]]:
    """Per ToolNode path, the tools it defines that the case's sandbox does not have."""
    out: dict[str, list[str]] = {}
    for path, node in nodes.items():
        extra = sorted(set(node.tools_by_name) - sandbox)
        if extra:
            out[path] = extra
    return out


__all__ = ["SESSION", "SandboxSession", "bind", "foreign_tools", "sandbox_tools", "tool_nodes"]
