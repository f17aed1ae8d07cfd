"""LangGraph versions of the Acme Bank example agents (examples/bank/agent.py), no model needed.

Each graph is what a team would deploy: an agent node that decides the next step (here the
example's deterministic policy instead of a chat model) and a `langgraph.prebuilt.ToolNode` with the
team's OWN tools, named like the bank's but wired to "production" — which is unreachable from a
test. Run through usersim, the sandbox must execute the calls instead (tools=sandbox); with
tools=own the production stubs answer, and usersim records that.

    langgraph:tests.adapters.langgraph_apps.bank_graph:correct_graph
    langgraph:tests.adapters.langgraph_apps.bank_graph:react_graph        (create_react_agent)
    langgraph-server:URL?assistant=bank_correct                           (langgraph.json here)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from examples.bank import agent as bank

Policy = Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]

BANK_TOOLS = [
    "verify_customer",
    "find_customer",
    "get_customer",
    "list_transactions",
    "transfer_funds",
    "open_dispute",
    "order_replacement_card",
    "block_card",
    "update_address",
]
PRODUCTION_CALLS: list[tuple[str, dict[str, Any]]] = []  # what the production stubs were asked


def production_tools(names: list[str] = BANK_TOOLS) -> list[BaseTool]:
    """The team's own tools: they would call the core banking API, which tests cannot reach."""

    def make(name: str) -> BaseTool:
        def call(**kwargs: Any) -> str:
            PRODUCTION_CALLS.append((name, kwargs))
            return f"Error: production core banking API unreachable ({name})"

        return StructuredTool.from_function(
            func=call,
            name=name,
            description=f"{name} against the production core banking API",
            args_schema={"type": "object", "properties": {}, "additionalProperties": True},
        )

    return [make(n) for n in names]


def _ai(reply: dict[str, Any]) -> AIMessage:
    calls = [
        {
            "name": tc["function"]["name"],
            "args": json.loads(tc["function"]["arguments"]),
            "id": tc["id"],
            "type": "tool_call",
        }
        for tc in reply.get("tool_calls") or []
    ]
    return AIMessage(content=reply.get("content") or "", tool_calls=calls)


def _decide(policy: Policy) -> Callable[[MessagesState], dict[str, Any]]:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [_ai(policy(convert_to_openai_messages(state["messages"]), []))]}

    return agent


def build(policy: Policy, tools: list[BaseTool] | None = None, checkpointer: Any = None) -> Any:
    """agent -> (tool calls?) -> tools -> agent ... -> END, the classic ReAct graph."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _decide(policy))
    builder.add_node("tools", ToolNode(production_tools() if tools is None else tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


class PolicyChatModel(BaseChatModel):
    """A chat model whose next message is the bank policy's: create_react_agent without an LLM."""

    flawed: bool = False

    @property
    def _llm_type(self) -> str:
        return "bank-policy"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        policy = bank.flawed if self.flawed else bank.correct
        reply = policy(convert_to_openai_messages(messages), [])
        return ChatResult(generations=[ChatGeneration(message=_ai(reply))])


def _react(flawed: bool) -> Any:
    import warnings

    from langgraph.prebuilt import create_react_agent

    with warnings.catch_warnings():  # moved to langchain.agents in LangGraph 1.0, still shipped
        warnings.simplefilter("ignore")
        return create_react_agent(PolicyChatModel(flawed=flawed), production_tools())


correct_graph = build(bank.correct)
flawed_graph = build(bank.flawed)
react_graph = _react(flawed=False)
# a graph whose ToolNode has a tool the bank sandbox does not: refused at start (tools=sandbox)
extra_tool_graph = build(bank.correct, production_tools([*BANK_TOOLS, "send_sms"]))


def _chatty() -> Any:
    """Two AI messages every turn: an acknowledgement node, then the policy's step."""

    def ack(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        if last.type != "human":
            return {}
        return {"messages": [AIMessage(content="Thanks, one moment while I look into that.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ack", ack)
    builder.add_node("agent", _decide(bank.correct))
    builder.add_node("tools", ToolNode(production_tools()))
    builder.add_edge(START, "ack")
    builder.add_edge("ack", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def _inline() -> Any:
    """Runs its tools inside the agent node (no ToolNode): usersim cannot route them anywhere."""
    tools = {t.name: t for t in production_tools()}

    def agent(state: MessagesState) -> dict[str, Any]:
        step = _ai(bank.correct(convert_to_openai_messages(state["messages"]), []))
        if not step.tool_calls:
            return {"messages": [step]}
        call = step.tool_calls[0]
        result = tools[call["name"]].invoke(call["args"])
        return {"messages": [step, ToolMessage(content=result, tool_call_id=call["id"], name=call["name"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    return builder.compile()


def _broken() -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError("core banking client not configured")

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    return builder.compile()


def _client_tools() -> Any:
    """No ToolNode at all: the run ends on the AI message's tool calls and the client answers them."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _decide(bank.correct))
    builder.add_edge(START, "agent")
    return builder.compile()


chatty_graph = _chatty()
client_tools_graph = _client_tools()
inline_graph = _inline()
broken_graph = _broken()


def factory(tools: list[BaseTool]) -> Any:
    """The factory form: built around the tools usersim passes."""
    return build(bank.correct, tools)
