"""Small graphs for the ToolNode binding's edge cases (tests/adapters/test_langgraph_tools.py):
a ToolNode with the team's own middleware, one inside a subgraph, one with only a sync wrapper."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

OWN_BODY_CALLS: list[dict[str, Any]] = []
MIDDLEWARE_SAW: list[str] = []
ARGS = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15"}


@tool
def search_flights(origin: str, destination: str, departure_date: str) -> str:
    """The team's own flight search (would call production)."""
    OWN_BODY_CALLS.append({"origin": origin, "destination": destination, "departure_date": departure_date})
    return '{"outbound": [{"flight_no": "PROD-1"}]}'


def agent(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"result: {last.content}")]}
    return {
        "messages": [AIMessage(content="", tool_calls=[{"name": "search_flights", "args": ARGS, "id": "c1"}])]
    }


async def middleware(request: Any, execute: Any) -> Any:
    """The team's own awrap_tool_call (logging, retries): it must stay around the sandbox."""
    MIDDLEWARE_SAW.append(request.tool_call["name"])
    result = await execute(request)
    result.content = f"[logged] {result.content}"
    return result


def sync_middleware(request: Any, execute: Any) -> Any:
    return execute(request)


def build(node: ToolNode) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", node)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


with_middleware = build(ToolNode([search_flights], awrap_tool_call=middleware))
sync_wrapped = build(ToolNode([search_flights], wrap_tool_call=sync_middleware))
plain = build(ToolNode([search_flights]))


def _outer() -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("support", build(ToolNode([search_flights])))
    builder.add_edge(START, "support")
    return builder.compile()


nested = _outer()
