"""The same scripted conversation through openai:, python: and langgraph: gives the same transcript
structure and tool trace; each transport's failure modes end in a clear AgentError."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from tests.adapters import scripted_agents
from tests.adapters.harness import FakeTools, drive, make_case, shape
from tests.support.openai_stub import error, tool_call
from usersim.adapters.base import AgentError, load_agent
from usersim.core.messages import Message

SYSTEM = Message(role="system", content="当前日期：2026-04-07")
TURN1 = Message(role="user", content="帮我搜一下 6 月中旬从上海飞大阪的机票，两个人")
TURN2 = Message(role="user", content="第一个航班几点到？")


async def two_turns(agent) -> tuple[list[Message], FakeTools]:
    tools = FakeTools()
    history = [SYSTEM, TURN1]
    history += await drive(agent, history, tools, turn=1)
    history.append(TURN2)
    history += await drive(agent, history, tools, turn=2)
    return history, tools


EXPECTED_SHAPE = [
    ("system", SYSTEM.content, ()),
    ("user", TURN1.content, ()),
    ("assistant", "", (("search_flights", json.dumps(scripted_agents.FLIGHT_ARGS, sort_keys=True)),)),
    ("tool", None, ()),
    ("assistant", "为两位找到：MU729 票价 ¥1880/人；9C8887 票价 ¥990/人。", ()),
    ("user", TURN2.content, ()),
    ("assistant", "MU729 当地时间 11:45 到达关西机场。", ()),
]


def _normalise(s):
    return [(r, None if r == "tool" else c, t) for r, c, t in s]


@pytest.mark.parametrize(
    "spec",
    [
        "python:tests.adapters.scripted_agents:respond",
        "python:tests.adapters.scripted_agents:respond_async",
        "langgraph:tests.adapters.scripted_agents:make_graph",
        "langgraph:tests.adapters.scripted_agents:make_thread_graph?mode=thread",
        "openai:stub-model?temperature=0",
    ],
)
async def test_same_transcript_and_trace_through_every_transport(spec, openai_stub):
    openai_stub.responder = lambda body: scripted_agents.policy(body["messages"])
    history, tools = await two_turns(load_agent(spec))
    assert _normalise(shape(history)) == EXPECTED_SHAPE
    assert tools.calls == [("search_flights", scripted_agents.FLIGHT_ARGS)]
    tool_msg = history[3]
    assert tool_msg.tool_call_id == history[2].tool_calls[0].id and "MU729" in tool_msg.content


async def test_openai_agent_sends_system_tools_and_history(openai_stub):
    openai_stub.responder = lambda body: scripted_agents.policy(body["messages"])
    await two_turns(load_agent("openai:stub-model?temperature=0"))
    first, second, third = openai_stub.requests
    assert first["messages"][0] == {"role": "system", "content": SYSTEM.content}
    assert [t["function"]["name"] for t in first["tools"]] == ["search_flights", "web_search"]
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-2]["tool_calls"]
    assert third["messages"][-1] == {"role": "user", "content": TURN2.content}
    assert all(r["temperature"] == 0 and r["seed"] == 1 for r in openai_stub.requests)


async def test_openai_agent_records_usage(openai_stub):
    openai_stub.script({"content": "好的", "usage": {"prompt_tokens": 40, "completion_tokens": 2}})
    reply = await load_agent("openai:m").respond(_input([SYSTEM, TURN1]))
    assert reply.usage.calls == 1 and reply.usage.prompt_tokens == 40 and reply.usage.completion_tokens == 2


async def test_langgraph_thread_mode_sends_only_the_new_user_message(openai_stub):
    agent = load_agent("langgraph:tests.adapters.scripted_agents:make_thread_graph?mode=thread")
    history, _ = await two_turns(agent)
    graph = next(iter(agent._built.values()))
    state = await graph.aget_state({"configurable": {"thread_id": "usersim:T-ADAPT-1:1"}})
    contents = [m.content for m in state.values["messages"]]
    assert contents.count(TURN1.content) == 1 and contents.count(SYSTEM.content) == 1  # nothing re-sent
    assert contents[-1] == history[-1].content


def _input(messages):
    from usersim.adapters.base import AgentInput

    return AgentInput(messages=messages, tools=[], case=make_case(), run_tool=FakeTools().run_tool)


# --- failures ------------------------------------------------------------------------------------


async def test_openai_401_is_agent_error_naming_endpoint_and_model(openai_stub):
    openai_stub.script(error(401, "Incorrect API key provided: sk-test-st***"))
    with pytest.raises(AgentError) as info:
        await load_agent("openai:gpt-x").respond(_input([SYSTEM, TURN1]))
    msg = str(info.value)
    assert "openai:gpt-x" in msg and openai_stub.base_url in msg and "HTTP 401" in msg
    assert "sk-test-stub-key-123456" not in msg
    assert len(openai_stub.requests) == 1


async def test_openai_malformed_tool_call_is_agent_error(openai_stub):
    openai_stub.script(tool_call("search_flights", '{"origin": "上海", "destination": '))
    with pytest.raises(AgentError) as info:
        await load_agent("openai:gpt-x").respond(_input([SYSTEM, TURN1]))
    assert "Malformed tool call 'search_flights' from openai:gpt-x" in str(info.value)
    assert "not valid JSON" in str(info.value)


async def test_openai_429_then_success_is_transparent(openai_stub):
    openai_stub.script(error(429, retry_after=0), {"content": "好的"})
    reply = await load_agent("openai:gpt-x").respond(_input([SYSTEM, TURN1]))
    assert reply.messages[0].content == "好的" and len(openai_stub.requests) == 2


def test_openai_unknown_option_suggests_the_right_one():
    with pytest.raises(AgentError, match="Unknown option 'temprature'.*Did you mean 'temperature'"):
        load_agent("openai:gpt-x?temprature=0")


def test_python_import_errors_are_actionable():
    with pytest.raises(
        AgentError, match=r"Cannot import 'no_such_mod' from spec 'python:no_such_mod:f': ModuleNotFoundError"
    ):
        load_agent("python:no_such_mod:f")
    with pytest.raises(AgentError, match=r"has no attribute 'respnd'. Did you mean 'respond'\?"):
        load_agent("python:tests.adapters.scripted_agents:respnd")
    with pytest.raises(AgentError, match="not a callable"):
        load_agent("python:tests.adapters.scripted_agents:not_callable")
    with pytest.raises(AgentError, match="must look like"):
        load_agent("python:justamodule")


async def test_python_function_exception_and_malformed_reply():
    with pytest.raises(
        AgentError, match=r"python:tests.adapters.scripted_agents:broken raised ValueError: agent blew up"
    ):
        await load_agent("python:tests.adapters.scripted_agents:broken").respond(_input([TURN1]))
    with pytest.raises(AgentError, match="Malformed tool call 'web_search'.*not valid JSON"):
        await load_agent("python:tests.adapters.scripted_agents:malformed").respond(_input([TURN1]))


async def test_trivially_malformed_arguments_are_repaired():
    tools = FakeTools()
    new = await drive(load_agent("python:tests.adapters.scripted_agents:repairable"), [TURN1], tools)
    assert tools.calls == [("web_search", {"query": "x"})] and new[-1].content == "done"


# --- http ----------------------------------------------------------------------------------------


@pytest.fixture
async def http_server():
    """An aiohttp chat endpoint whose behaviour each test sets via `server.handler`."""
    state = {"requests": []}

    async def handle(request):
        body = await request.json()
        state["requests"].append(body)
        return await state["handler"](body)

    app = web.Application()
    app.router.add_post("/chat", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state["url"] = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/chat"
    yield state
    await runner.cleanup()


async def test_http_agent_same_transcript_and_payload(http_server):
    async def handler(body):
        message = scripted_agents.policy(body["messages"])
        # answer in both accepted shapes
        return web.json_response(
            {"message": message} if len(body["messages"]) % 2 else {"choices": [{"message": message}]}
        )

    http_server["handler"] = handler
    history, tools = await two_turns(load_agent(http_server["url"]))
    assert _normalise(shape(history)) == EXPECTED_SHAPE
    assert tools.calls == [("search_flights", scripted_agents.FLIGHT_ARGS)]
    first = http_server["requests"][0]
    assert first["case_id"] == "T-ADAPT-1" and first["seed"] == 1 and first["tools"][0]["function"]["name"]


async def test_http_agent_errors_name_url_and_status(http_server):
    async def fail(body):
        return web.Response(status=503, text="maintenance")

    http_server["handler"] = fail
    with pytest.raises(
        AgentError, match=r"HTTP agent http://127.0.0.1:\d+/chat answered HTTP 503: maintenance"
    ):
        await load_agent(http_server["url"]).respond(_input([TURN1]))

    async def wrong_shape(body):
        return web.json_response({"reply": "hi"})

    http_server["handler"] = wrong_shape
    with pytest.raises(AgentError, match=r"without a message.*got keys \['reply'\]"):
        await load_agent(http_server["url"]).respond(_input([TURN1]))


async def test_http_agent_timeout(http_server):
    import asyncio

    async def slow(body):
        await asyncio.sleep(2)
        return web.json_response({"message": {"content": "late"}})

    http_server["handler"] = slow
    with pytest.raises(AgentError, match=r"timed out after 0.3s"):
        await load_agent(http_server["url"] + "#timeout=0.3").respond(_input([TURN1]))


def test_unknown_scheme_suggests():
    with pytest.raises(Exception, match="Unknown agent 'refrence'. Did you mean 'reference'"):
        load_agent("refrence")


@pytest.mark.parametrize(
    ("script", "expect"),
    [
        ([error(404, "The model 'gpt-x' does not exist")], r"HTTP 404: The model 'gpt-x' does not exist"),
        ([error(500, "boom")] * 2, r"HTTP 500: boom \(gave up after 2 attempts\)"),
        ([error(429, "slow down", retry_after=0)] * 2, r"HTTP 429: slow down \(gave up after 2 attempts\)"),
        ([{"content": "late", "delay": 1.5}] * 2, r"request timed out after 0.3s"),
        ([tool_call("web_search", "not json at all")], r"Malformed tool call 'web_search'"),
    ],
)
async def test_openai_agent_endpoint_failures_end_in_agent_error(openai_stub, monkeypatch, script, expect):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")
    openai_stub.script(*script)
    with pytest.raises(AgentError, match=expect) as info:
        await load_agent("openai:gpt-x?timeout=0.3").respond(_input([SYSTEM, TURN1]))
    assert "openai:gpt-x" in str(info.value) and openai_stub.base_url in str(info.value)


def scribbling_agent(messages, tools):
    """python:tests.adapters.test_transports:scribbling_agent — changes the schemas it was given."""
    tools[0]["function"]["description"] = "changed by the agent"
    tools[0]["function"]["parameters"]["properties"].clear()
    tools.clear()
    return {"role": "assistant", "content": "done"}


async def test_a_python_agent_that_changes_its_tool_schemas_changes_no_other_conversations():
    """The sandbox's schemas are shared by every conversation of the process; a python: agent gets
    its own copy to do with as it likes."""
    from usersim.sandbox.base import open_sandbox

    case = make_case()
    before = json.dumps(open_sandbox(case).tool_schemas())
    agent = load_agent("python:tests.adapters.test_transports:scribbling_agent")
    schemas = open_sandbox(case).tool_schemas()
    new = await drive(agent, [SYSTEM, TURN1], FakeTools(), case=case, schemas=schemas)
    assert new[-1].content == "done"
    assert json.dumps(schemas) == before  # what this conversation holds
    assert json.dumps(open_sandbox(case).tool_schemas()) == before  # and every later one
