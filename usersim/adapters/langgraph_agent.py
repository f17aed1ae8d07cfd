"""`langgraph:module:attr` — a LangGraph compiled graph or LangChain Runnable as the agent under test.

`attr` is either

* a compiled graph / Runnable taking `{"messages": [...LangChain messages]}`, or
* a factory `attr(tools) -> graph` that builds the graph around the given tools (LangChain tools
  whose bodies call usersim's sandbox; called once per distinct tool set, then reused).

Who runs the tools (option `tools`):

* `tools=sandbox` (default): usersim's sandbox executes every tool call the graph makes, so
  intercepts apply, every call is in the tool trace and state checks see the state it changed.
  Every `langgraph.prebuilt.ToolNode` in the graph (a hand-built graph, `create_react_agent`,
  LangChain's `create_agent`, subgraphs too) is bound to the sandbox through its `awrap_tool_call`
  seam: the node's own tool bodies never run, a wrapper it already had stays around the sandbox.
  The graph's ToolNodes may only define tools the case's sandbox has (`usersim tools list --case
  FILE`): another tool is an error at start naming it. A graph that ends its run on an AI message
  with tool calls (no ToolNode) has them run by the harness like any agent's. A graph that runs a
  tool some other way (a tool called inside a plain node) is an AgentError naming the tool, never
  a silent run of the graph's own code. The sandbox tools are also passed in
  `config["configurable"]["tools"]`.
* `tools=own`: the graph runs its own tools (a compiled graph only). Their calls and results are
  read from the graph's messages and recorded as the agent's own tool events
  (`ToolEvent.executed_by: agent`): tool checks see them; `final_state` is `unjudged` ("cannot see
  the state: the agent ran its own tools ...") since the sandbox never saw the writes.

Each turn's reply is every new message the graph produced (several AI messages, tool calls, tool
results, the final answer), converted to `cases.messages.Message`.

Other options (spec query): `mode=full` (default: the whole conversation is sent every turn) or
`mode=thread` (a graph with a checkpointer: the first call sends the history, later calls only
the new user message, with `thread_id` = `usersim:<case id>:<seed>`); `recursion_limit=N`.

    usersim run examples/bank/cases --agent "langgraph:my_bank.graph:graph"
    usersim run examples/bank/cases --agent "langgraph:my_bank.graph:graph?tools=own"
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

from usersim.adapters.base import AgentError, AgentInput, AgentReply
from usersim.adapters.langgraph_tools import SESSION, SandboxSession, bind, foreign_tools, sandbox_tools
from usersim.adapters.python_fn import import_target
from usersim.adapters.spec import float_option, split_spec
from usersim.core.events import Usage
from usersim.core.messages import Message, ToolCall


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


class LangGraphAgent:
    """Drives a LangGraph graph (or any LangChain Runnable) as the agent under test."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        body, opts = split_spec(spec, "langgraph", {"mode", "recursion_limit", "tools"})
        self.mode = opts.get("mode") or "full"
        if self.mode not in {"full", "thread"}:
            raise AgentError(
                f"Option 'mode={self.mode}' in agent spec '{spec}': use mode=full or mode=thread"
            )
        self.tools = opts.get("tools") or "sandbox"
        if self.tools not in {"sandbox", "own"}:
            raise AgentError(
                f"Option 'tools={self.tools}' in agent spec '{spec}': use tools=sandbox (usersim's sandbox "
                "runs every tool call, the default) or tools=own (the graph runs its own tools)"
            )
        limit = float_option(spec, opts, "recursion_limit")
        self.recursion_limit = int(limit) if limit else 50
        self.target = import_target(spec, body, example="langgraph:my_pkg.graph:graph")
        if not hasattr(self.target, "ainvoke") and not callable(self.target):
            raise AgentError(
                f"Agent spec '{spec}': '{body}' is neither a Runnable/compiled graph nor a factory"
            )
        if self.tools == "own" and not hasattr(self.target, "ainvoke"):
            raise AgentError(
                f"Agent spec '{spec}': tools=own runs the graph's own tools, but '{body}' is a factory, "
                "which is given usersim's sandbox tools; point the spec at the compiled graph instead"
            )
        self._built: dict[tuple[str, ...], Any] = {}
        self._checked: set[tuple[int, tuple[str, ...]]] = set()

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

    def _bind(self, runnable: Any, tools: list[BaseTool]) -> None:
        """tools=sandbox: route the graph's ToolNodes to the sandbox; a ToolNode tool the sandbox
        does not have is an AgentError naming it (checked once per graph and tool set)."""
        names = tuple(t.name for t in tools)
        if self.tools != "sandbox" or (id(runnable), names) in self._checked:
            return
        foreign = foreign_tools(bind(runnable, self.spec), set(names))
        if foreign:
            where = "; ".join(f"ToolNode '{path}' has {', '.join(extra)}" for path, extra in foreign.items())
            raise AgentError(
                f"LangGraph agent {self.spec}: usersim's sandbox runs every tool call the graph makes, but "
                f"{where}, which the case's sandbox does not have (it has: {', '.join(names) or 'no tools'}). "
                "Name the graph's tools after the sandbox's (`usersim tools list --case FILE`), build the "
                "graph in a factory `attr(tools)` around the tools usersim passes, or run the graph's own "
                "tools with ?tools=own"
            )
        self._checked.add((id(runnable), names))

    def check_mode(self, schemas: list[dict[str, Any]]) -> None:
        """Before any conversation (with the first case's tool schemas): the tools contract (see the
        module doc) and `mode=thread`'s checkpointer. Raises AgentError saying how to fix it."""
        runnable, tools = self._runnable(schemas)
        self._bind(runnable, tools)
        if self.mode != "thread":
            return
        if not hasattr(runnable, "aget_state") or getattr(runnable, "checkpointer", None) in (None, False):
            raise AgentError(
                f"Agent spec '{self.spec}': mode=thread needs a LangGraph graph compiled with a checkpointer "
                "(builder.compile(checkpointer=InMemorySaver())), and this one has none; compile it with a "
                "checkpointer or use mode=full (the whole history every turn)"
            )

    async def respond(self, inp: AgentInput) -> AgentReply:
        runnable, tools = self._runnable(inp.tools)
        self._bind(runnable, tools)
        thread_id = f"usersim:{inp.case.id}:{inp.seed}"
        configurable: dict[str, Any] = {"thread_id": thread_id}
        if self.tools == "sandbox":
            configurable["tools"] = tools
        config = {"configurable": configurable, "recursion_limit": self.recursion_limit}
        lc_messages = to_langchain(inp.messages)
        known: set[Any] = {m.id for m in lc_messages}
        if self.mode == "thread":
            prior = await _thread_messages(runnable, config)
            known |= {m.id for m in prior}
            if prior:  # the checkpointer already holds the earlier turns: send only the new ones
                last_user = max(i for i, m in enumerate(inp.messages) if m.role == "user")
                lc_messages = lc_messages[last_user:]
        session = SandboxSession(inp.run_tool) if self.tools == "sandbox" else None
        token = SESSION.set(session)
        try:
            result = await runnable.ainvoke({"messages": lc_messages}, config=config)
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"LangGraph agent {self.spec} raised {type(exc).__name__}: {exc}") from exc
        finally:
            SESSION.reset(token)
        produced = _new_messages(result, known, self.spec)
        if session is not None:
            self._no_own_results(produced, session)
        converted = [m for m in (from_langchain(x) for x in produced) if m is not None]
        if not converted:
            raise AgentError(f"LangGraph agent {self.spec} produced no assistant message")
        return AgentReply(messages=converted, usage=_usage(produced), tools_run_by_agent=self.tools == "own")

    def _no_own_results(self, produced: list[BaseMessage], session: SandboxSession) -> None:
        """tools=sandbox: every tool result the graph produced came from the sandbox, or the graph
        ran a tool itself (outside a ToolNode usersim could bind) and that is an AgentError."""
        results = [m for m in produced if isinstance(m, ToolMessage)]
        unexplained = [m for m in results if m.tool_call_id not in session.answered]
        if len(unexplained) <= session.body_calls:
            return
        name = unexplained[session.body_calls].name or "?"
        raise AgentError(
            f"LangGraph agent {self.spec} ran tool '{name}' itself: its result did not come from usersim's "
            "sandbox (the tool ran outside a langgraph.prebuilt ToolNode usersim can bind). Execute the "
            "graph's tools in a ToolNode, build the graph in a factory `attr(tools)` around the tools "
            "usersim passes, or run the graph's own tools with ?tools=own"
        )

    def describe(self) -> dict[str, Any]:
        return {
            "agent": "langgraph",
            "target": self.spec.split(":", 1)[1],
            "mode": self.mode,
            "tools": self.tools,
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


__all__ = ["LangGraphAgent", "from_langchain", "to_langchain"]
