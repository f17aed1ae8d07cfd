"""Plain-callable agents used through `python:tests.integration.toy_agents:NAME` specs."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


def echo_agent(messages: list[dict], tools: list[dict]) -> dict:
    """Answers in text only, never calls a tool: a deliberately weak agent."""
    last = next(m for m in reversed(messages) if m["role"] == "user")
    return {"role": "assistant", "content": f"收到：{last['content']}"}


def flights_agent(messages: list[dict], tools: list[dict]) -> dict:
    """Calls search_flights once with fixed arguments, then summarises the result."""
    if messages[-1]["role"] == "tool":
        data = json.loads(messages[-1]["content"])
        first = (data.get("outbound") or [{}])[0]
        return {
            "role": "assistant",
            "content": f"找到航班 {first.get('flight_no', '?')}，价格 {first.get('price_per_person', '?')}",
        }
    args = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search_flights", "arguments": json.dumps(args, ensure_ascii=False)},
            }
        ],
    }


def crashing_agent(messages: list[dict], tools: list[dict]) -> dict:
    raise RuntimeError("agent exploded")


def flights_graph(tools):
    """A LangGraph agent (factory form) doing what `flights_agent` does, with its own tool loop."""

    def decide(state: MessagesState) -> dict:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            data = json.loads(last.content)
            first = (data.get("outbound") or [{}])[0]
            return {
                "messages": [
                    AIMessage(
                        content=f"找到航班 {first.get('flight_no', '?')}，价格 {first.get('price_per_person', '?')}"
                    )
                ]
            }
        args = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2}
        return {
            "messages": [
                AIMessage(content="", tool_calls=[{"name": "search_flights", "args": args, "id": "c1"}])
            ]
        }

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    g = StateGraph(MessagesState)
    g.add_node("agent", decide)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile()


def order_agent(messages: list[dict], tools: list[dict]) -> dict:
    """Looks the order up with the case's own mock tool, then reports its status."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": f"订单状态：{json.loads(messages[-1]['content'])['status']}"}
    assert any(t["function"]["name"] == "get_order_status" for t in tools)
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "o1",
                "type": "function",
                "function": {"name": "get_order_status", "arguments": '{"order_id": "A100"}'},
            }
        ],
    }
