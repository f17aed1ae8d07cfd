"""`langgraph:module:attr` — a LangGraph compiled graph or LangChain Runnable as the agent under test.

`attr` is either

* a compiled graph / Runnable taking `{"messages": [...LangChain messages]}`; the sandbox tools are
  passed in `config["configurable"]["tools"]` (LangChain tools), or
* a factory `attr(tools) -> graph` that builds the graph around the given tools (called once per
  distinct tool set, then reused).

The tools are the sandbox tools wrapped as LangChain `StructuredTool`s whose bodies call the
harness's `run_tool`, so intercepts apply and every call lands in the tool trace. The graph runs
its own tool loop; the reply is the new messages it produced (assistant tool calls, tool results,
the final answer) converted to `cases.messages.Message`.

Options (spec query): `mode=full` (default: the whole conversation is sent every turn) or
`mode=thread` (a graph with a checkpointer: the first call sends the history, later calls only
the new user message, with `thread_id` = `usersim:<case id>:<seed>`); `recursion_limit=N`.
"""

from __future__ import annotations

import contextvars
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from usersim.adapters.base import AgentError, AgentInput, AgentReply, ToolRunner
from usersim.adapters.python_fn import import_target
from usersim.adapters.spec import float_option, split_spec
from usersim.core.events import Usage
from usersim.core.messages import Message, ToolCall

# The run_tool of the conversation being served; tools read it so one graph serves many conversations.
_RUN_TOOL: contextvars.ContextVar[ToolRunner] = contextvars.ContextVar("usersim_run_tool")


def to_langchain(messages: list[Message]) -> list[BaseMessage]:
    """Our messages as LangChain messages, with stable ids so new output messages can be told apart."""
    out: list[BaseMessage] = []
    for i, m in enumerate(messages):
        mid = f"usersim-{i}-{m.role}"
        if m.role == "system":
            out.append(SystemMessage(content=m.content, id=mid))
        elif m.role == "user":
            out.append(HumanMessage(content=m.content, id=mid))
        elif m.role == "assistant":
            calls = [
                {"name": c.name, "args": c.arguments, "id": c.id, "type": "tool_call"} for c in m.tool_calls
            ]
            out.append(AIMessage(content=m.content, tool_calls=calls, id=mid))
        else:
            out.append(ToolMessage(content=m.content, tool_call_id=m.tool_call_id or "", name=m.name, id=mid))
    return out


def from_langchain(message: BaseMessage) -> Message | None:
    """A LangChain message produced by the agent as our Message (None for user/system echoes)."""
    content = message.content
    if isinstance(content, list):
        content = "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)
    if isinstance(message, AIMessage):
        calls = [
            ToolCall(id=tc.get("id") or f"call_{i}", name=tc["name"], arguments=tc.get("args") or {})
            for i, tc in enumerate(message.tool_calls)
        ]
        return Message(role="assistant", content=str(content or ""), tool_calls=calls)
    if isinstance(message, ToolMessage):
        return Message(
            role="tool",
            content=str(content),
            tool_call_id=message.tool_call_id,
            name=message.name,
            is_error=getattr(message, "status", "success") == "error",
        )
    return None


def sandbox_tools(schemas: list[dict[str, Any]]) -> list[BaseTool]:
    """LangChain tools for the sandbox tool schemas; each call goes through the harness's run_tool."""
    tools: list[BaseTool] = []
    for schema in schemas:
        fn = schema.get("function", schema)
        name = fn["name"]

        async def _call(_name: str = name, **kwargs: Any) -> str:
            try:
                run_tool = _RUN_TOOL.get()
            except LookupError:
                raise RuntimeError(f"tool {_name} called outside a usersim conversation") from None
            result = await run_tool(_name, kwargs)
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


class LangGraphAgent:
    """Drives a LangGraph graph (or any LangChain Runnable) as the agent under test."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        body, opts = split_spec(spec, "langgraph", {"mode", "recursion_limit"})
        self.mode = opts.get("mode") or "full"
        if self.mode not in {"full", "thread"}:
            raise AgentError(
                f"Option 'mode={self.mode}' in agent spec '{spec}': use mode=full or mode=thread"
            )
        limit = float_option(spec, opts, "recursion_limit")
        self.recursion_limit = int(limit) if limit else 50
        self.target = import_target(spec, body, example="langgraph:my_pkg.graph:graph")
        if not hasattr(self.target, "ainvoke") and not callable(self.target):
            raise AgentError(
                f"Agent spec '{spec}': '{body}' is neither a Runnable/compiled graph nor a factory"
            )
        self._built: dict[tuple[str, ...], Any] = {}

    def _runnable(self, schemas: list[dict[str, Any]]) -> tuple[Any, list[BaseTool]]:
        tools = sandbox_tools(schemas)
        if hasattr(self.target, "ainvoke"):
            return self.target, tools
        key = tuple(t.name for t in tools)
        if key not in self._built:
            graph = self.target(tools)
            if not hasattr(graph, "ainvoke"):
                raise AgentError(
                    f"Agent {self.spec}: the factory returned {type(graph).__name__}, not a Runnable"
                )
            self._built[key] = graph
        return self._built[key], tools

    def check_mode(self, schemas: list[dict[str, Any]]) -> None:
        """Before any conversation: `mode=thread` needs a graph compiled with a checkpointer (the
        factory form is built once with `schemas` to look). Raises AgentError saying how to fix it."""
        if self.mode != "thread":
            return
        runnable, _ = self._runnable(schemas)
        if not hasattr(runnable, "aget_state") or getattr(runnable, "checkpointer", None) in (None, False):
            raise AgentError(
                f"Agent spec '{self.spec}': mode=thread needs a LangGraph graph compiled with a checkpointer "
                "(builder.compile(checkpointer=InMemorySaver())), and this one has none; compile it with a "
                "checkpointer or use mode=full (the whole history every turn)"
            )

    async def respond(self, inp: AgentInput) -> AgentReply:
        runnable, tools = self._runnable(inp.tools)
        thread_id = f"usersim:{inp.case.id}:{inp.seed}"
        config = {
            "configurable": {"tools": tools, "thread_id": thread_id},
            "recursion_limit": self.recursion_limit,
        }
        lc_messages = to_langchain(inp.messages)
        known: set[Any] = {m.id for m in lc_messages}
        if self.mode == "thread":
            prior = await _thread_messages(runnable, config)
            known |= {m.id for m in prior}
            if prior:  # the checkpointer already holds the earlier turns: send only the new ones
                last_user = max(i for i, m in enumerate(inp.messages) if m.role == "user")
                lc_messages = lc_messages[last_user:]
        token = _RUN_TOOL.set(inp.run_tool)
        try:
            result = await runnable.ainvoke({"messages": lc_messages}, config=config)
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"LangGraph agent {self.spec} raised {type(exc).__name__}: {exc}") from exc
        finally:
            _RUN_TOOL.reset(token)
        produced = _new_messages(result, known, self.spec)
        converted = [m for m in (from_langchain(x) for x in produced) if m is not None]
        if not converted:
            raise AgentError(f"LangGraph agent {self.spec} produced no assistant message")
        return AgentReply(messages=converted, usage=_usage(produced))

    def describe(self) -> dict[str, Any]:
        return {
            "agent": "langgraph",
            "target": self.spec.split(":", 1)[1],
            "mode": self.mode,
            "context_strategy": "thread" if self.mode == "thread" else "full",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": self.mode == "thread",
            "temperature": None,
        }


async def _thread_messages(runnable: Any, config: dict[str, Any]) -> list[BaseMessage]:
    if not hasattr(runnable, "aget_state"):
        raise AgentError("mode=thread needs a compiled LangGraph graph with a checkpointer")
    try:
        snapshot = await runnable.aget_state(config)
    except ValueError as exc:  # "No checkpointer set"
        raise AgentError(f"mode=thread needs a graph compiled with a checkpointer: {exc}") from None
    return list((snapshot.values or {}).get("messages", []))


def _new_messages(result: Any, known: set[Any], spec: str) -> list[BaseMessage]:
    if isinstance(result, BaseMessage):
        return [result]
    if isinstance(result, str):
        return [AIMessage(content=result)]
    if isinstance(result, dict) and isinstance(result.get("messages"), list):
        return [m for m in result["messages"] if isinstance(m, BaseMessage) and m.id not in known]
    raise AgentError(
        f"LangGraph agent {spec} returned {type(result).__name__}; expected {{'messages': [...]}}"
    )


def _usage(messages: list[BaseMessage]) -> Usage | None:
    metas = [m.usage_metadata for m in messages if isinstance(m, AIMessage) and m.usage_metadata]
    if not metas:
        return None
    return Usage(
        calls=len(metas),
        prompt_tokens=sum(int(u.get("input_tokens", 0)) for u in metas),
        completion_tokens=sum(int(u.get("output_tokens", 0)) for u in metas),
    )


__all__ = ["LangGraphAgent", "from_langchain", "sandbox_tools", "to_langchain"]
