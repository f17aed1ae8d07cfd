"""The ToolNode binding: the team's own middleware stays around the sandbox executor, ToolNodes in
subgraphs are bound too, a sync-only wrapper is refused with what to change, and outside a usersim
conversation a bound graph runs as built. Plus the harness's own-tool events."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from tests.adapters.harness import TOOLS, FakeTools, drive, make_case
from tests.adapters.langgraph_apps import wiring
from usersim.adapters.base import AgentError, AgentInput, load_agent
from usersim.adapters.langgraph_tools import bind, tool_nodes
from usersim.core.events import ToolEvent
from usersim.core.messages import Message, ToolCall
from usersim.graphs.agent_tools import own_events, place_events

APP = "langgraph:tests.adapters.langgraph_apps.wiring"
USER = [Message(role="system", content="today"), Message(role="user", content="上海飞大阪")]


@pytest.fixture(autouse=True)
def _clear():
    wiring.OWN_BODY_CALLS.clear()
    wiring.MIDDLEWARE_SAW.clear()


async def test_the_teams_middleware_wraps_the_sandbox_executor():
    tools = FakeTools()
    new = await drive(load_agent(f"{APP}:with_middleware"), USER, tools)
    assert tools.calls == [("search_flights", wiring.ARGS)]
    assert wiring.MIDDLEWARE_SAW == ["search_flights"] and wiring.OWN_BODY_CALLS == []
    tool_msg = next(m for m in new if m.role == "tool")
    assert tool_msg.content.startswith("[logged] {") and "MU729" in tool_msg.content
    assert new[-1].content.startswith("result: [logged]")


async def test_a_toolnode_inside_a_subgraph_is_bound():
    assert list(tool_nodes(wiring.nested)) == ["support/tools"]
    tools = FakeTools()
    new = await drive(load_agent(f"{APP}:nested"), USER, tools)
    assert tools.calls == [("search_flights", wiring.ARGS)] and wiring.OWN_BODY_CALLS == []
    assert "MU729" in new[-1].content


def test_a_sync_only_wrapper_is_refused_naming_the_node_and_the_fix():
    agent = load_agent(f"{APP}:sync_wrapped")
    with pytest.raises(AgentError) as info:
        agent.check_mode(TOOLS)
    msg = str(info.value)
    assert "ToolNode 'tools' has only a sync wrap_tool_call" in msg and "awrap_tool_call" in msg
    assert "?tools=own" in msg


async def test_outside_a_usersim_conversation_a_bound_graph_runs_its_own_tools():
    bind(wiring.plain, "test")
    out = await wiring.plain.ainvoke({"messages": [HumanMessage("hi")]})
    assert wiring.OWN_BODY_CALLS == [wiring.ARGS]
    assert "PROD-1" in out["messages"][-1].content


async def test_own_mode_leaves_the_graph_alone_and_flags_the_reply():
    agent = load_agent(f"{APP}:plain?tools=own")
    tools = FakeTools()
    reply = await agent.respond(
        AgentInput(messages=USER, tools=TOOLS, case=make_case(), run_tool=tools.run_tool)
    )
    assert tools.calls == []
    assert reply.tools_run_by_agent and [m.role for m in reply.messages] == ["assistant", "tool", "assistant"]
    assert "PROD-1" in reply.messages[1].content and wiring.OWN_BODY_CALLS == [wiring.ARGS]


def test_own_events_number_calls_after_the_conversations_earlier_ones():
    prior = [ToolEvent(turn=1, call_number=1, name="get_customer", result="{}", executed_by="agent")]
    turn = [
        Message(role="user", content="again"),
        Message(
            role="assistant",
            tool_calls=[ToolCall(id="a", name="get_customer", arguments={"customer_id": "C-1"})],
        ),
        Message(role="tool", tool_call_id="a", name="get_customer", content='{"name": "Dana"}'),
        Message(role="tool", tool_call_id="zz", name="lookup", content="Error: no", is_error=True),
        Message(role="assistant", content="Hi Dana"),
    ]
    events = own_events(turn, 1, 10, 2, prior)
    assert [(e.name, e.call_number, e.message_index, e.is_error, e.executed_by) for e in events] == [
        ("get_customer", 2, 12, False, "agent"),
        ("lookup", 1, 13, True, "agent"),
    ]
    assert events[0].arguments == {"customer_id": "C-1"} and events[1].arguments == {}


def test_place_events_points_each_sandbox_event_at_its_tool_message():
    events = [
        ToolEvent(turn=1, call_number=n, name=name, result="r") for n, name in ((1, "a"), (1, "b"), (2, "a"))
    ]
    reply = [
        Message(role="assistant", tool_calls=[ToolCall(id="1", name="a"), ToolCall(id="2", name="b")]),
        Message(role="tool", tool_call_id="1", name="a", content="r"),
        Message(role="tool", tool_call_id="2", name="b", content="r"),
        Message(role="assistant", tool_calls=[ToolCall(id="3", name="a")]),
        Message(role="tool", tool_call_id="3", name="a", content="r"),
    ]
    place_events(events, reply, 5)
    assert [e.message_index for e in events] == [6, 7, 9]
