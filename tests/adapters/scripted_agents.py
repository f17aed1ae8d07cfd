"""One scripted agent policy served through every adapter transport (python:, openai:, langgraph:)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

FLIGHT_ARGS = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2}


def policy(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted agent: OpenAI-format messages in, the next assistant message out."""
    last = messages[-1]
    if last["role"] == "tool":
        flights = json.loads(last["content"])["outbound"]
        listing = "；".join(f"{f['flight_no']} 票价 ¥{f['price_per_person']}/人" for f in flights)
        return {"role": "assistant", "content": f"为两位找到：{listing}。"}
    users = [m for m in messages if m["role"] == "user"]
    if len(users) == 1:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_flights", "arguments": json.dumps(FLIGHT_ARGS)},
                }
            ],
        }
    return {"role": "assistant", "content": "MU729 当地时间 11:45 到达关西机场。"}


def respond(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """python:tests.adapters.scripted_agents:respond"""
    assert {t["function"]["name"] for t in tools} >= {"search_flights"}
    return policy(messages)


async def respond_async(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return policy(messages)


def _lc_to_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    role = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
    return [{"role": role[m.type], "content": m.content} for m in messages]


def make_graph(tools: list[Any], checkpointer: Any = None) -> Any:
    """langgraph:tests.adapters.scripted_agents:make_graph — a ReAct-style graph around the sandbox tools."""

    def agent(state: MessagesState) -> dict[str, Any]:
        reply = policy(_lc_to_dicts(state["messages"]))
        calls = [
            {
                "name": tc["function"]["name"],
                "args": json.loads(tc["function"]["arguments"]),
                "id": tc["id"],
                "type": "tool_call",
            }
            for tc in reply.get("tool_calls", [])
        ]
        return {"messages": [AIMessage(content=reply.get("content") or "", tool_calls=calls)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def make_thread_graph(tools: list[Any]) -> Any:
    """langgraph:...:make_thread_graph — the same graph with a checkpointer (mode=thread)."""
    return make_graph(tools, checkpointer=InMemorySaver())


def broken(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    raise ValueError("agent blew up")


def malformed(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c", "function": {"name": "web_search", "arguments": '{"query": "x"'}}],
    }


def repairable(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": "done"}
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "function": {"name": "web_search", "arguments": "```json\n{'query': 'x',}\n```"}}
        ],
    }


not_callable = 42
