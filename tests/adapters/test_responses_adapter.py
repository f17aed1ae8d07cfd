"""openai-responses: errors, blame, secrets and chaining, against the Responses API stub over HTTP."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.responses_stub import ResponsesStub
from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput, load_agent
from usersim.cases.loader import load_case
from usersim.core.messages import Message
from usersim.llm.client import aclose_clients

CASE = load_case("examples/bank/cases/bank-01-lost-card.yaml")
SPEC = "openai-responses:bank-model"
KEY = "sk-test-responses-key-98765"


@pytest.fixture
def stub(monkeypatch):
    """A running Responses stub that wants KEY; OPENAI_BASE_URL / OPENAI_API_KEY point at it."""
    with ResponsesStub(api_key=KEY) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("USERSIM_LLM_BACKOFF_S", "0.01")
        yield server


def ask(agent, messages: list[Message], tools=None):
    async def no_tools(name, args):
        raise AssertionError("the harness runs the tools")

    inp = AgentInput(messages=messages, tools=tools or [], case=CASE, run_tool=no_tools)

    async def once():
        try:
            return await agent.respond(inp)
        finally:
            await aclose_clients()  # the pooled client belongs to this event loop

    return asyncio.run(once())


def convo(*texts: str) -> list[Message]:
    out = [Message(role="system", content="You are a bank agent. Today is 2026-04-07.")]
    for i, t in enumerate(texts):
        out.append(Message(role="user" if i % 2 == 0 else "assistant", content=t))
    return out


def test_a_rejected_key_is_the_agents_error_and_the_key_is_not_in_it(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000111222")
    with pytest.raises(AgentError) as err:
        ask(load_agent(SPEC), convo("hi"))
    assert not isinstance(err.value, AgentEndpointError)
    assert "HTTP 401" in str(err.value) and f"{stub.base_url}/responses" in str(err.value)
    assert "sk-wrong-key-000111222" not in str(err.value)


def test_5xx_is_retried_then_an_outage_naming_the_endpoint(stub, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "3")
    stub.script({"status": 503, "error": "overloaded"}, {"status": 502}, {"status": 500})
    with pytest.raises(AgentEndpointError) as err:
        ask(load_agent(SPEC), convo("hi"))
    assert "HTTP 500" in str(err.value) and "gave up after 3 attempts" in str(err.value)
    assert len(stub.requests) == 3


def test_a_retry_that_succeeds_answers(stub):
    stub.script({"status": 429, "headers": {"Retry-After": "0"}}, {"content": "Hello, how can I help?"})
    reply = ask(load_agent(SPEC), convo("hi"))
    assert reply.messages[0].content == "Hello, how can I help?" and reply.usage.calls == 1


def test_a_malformed_body_is_retried_then_an_outage_saying_what(stub, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")
    stub.script({"raw": {"object": "response", "output": []}}, {"raw": {"id": "r1", "output": "x"}})
    with pytest.raises(AgentEndpointError, match="unusable reply: the response has no output list"):
        ask(load_agent(SPEC), convo("hi"))


def test_a_failed_response_is_the_agents_error_with_its_message(stub):
    failed = {
        "id": "resp_f",
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "model crashed"},
    }
    stub.script({"raw": failed})
    with pytest.raises(AgentError, match="the response failed: model crashed") as err:
        ask(load_agent(SPEC), convo("hi"))
    assert not isinstance(err.value, AgentEndpointError)


def test_malformed_function_call_arguments_name_the_tool(stub):
    stub.script({"tool_calls": [{"name": "block_card", "arguments": '{"card_id": "K-3001"'}]})
    with pytest.raises(AgentError, match="Malformed tool call 'block_card'"):
        ask(load_agent(SPEC), convo("block my card"))


def test_a_server_that_is_down_is_an_outage(monkeypatch):
    with ResponsesStub() as stub:
        url = stub.base_url
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "1")
    with pytest.raises(AgentEndpointError, match="connection failed"):
        ask(load_agent(SPEC), convo("hi"))


def test_reasoning_and_several_output_items_make_one_assistant_message(stub):
    stub.script(
        {
            "reasoning": "SECRET plan",
            "content": "Let me check.",
            "tool_calls": [{"name": "get_customer", "arguments": {"customer_id": "C-1001"}}],
        }
    )
    [message] = ask(load_agent(SPEC), convo("balance?")).messages
    assert message.content == "Let me check." and "SECRET" not in message.model_dump_json()
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_customer", {"customer_id": "C-1001"})
    ]


def test_each_conversation_branch_continues_the_response_that_answered_its_prefix(stub):
    stub.script({"content": "a1"}, {"content": "a2"}, {"content": "a2 again"}, {"content": "b1"})
    agent = load_agent(SPEC)
    first = ask(agent, convo("u1")).messages[0]
    assert first.content == "a1"
    ask(agent, [*convo("u1"), first, Message(role="user", content="u2")])
    # the same turn simulated again with other words: it chains on the answer to u1, not on a2
    ask(agent, [*convo("u1"), first, Message(role="user", content="u2, reworded")])
    ask(agent, convo("another conversation"))  # nothing known: a new chain with its whole input
    prev = [r.get("previous_response_id") for r in stub.requests]
    assert prev == [None, "resp_stub_1", "resp_stub_1", None]
    assert stub.requests[2]["input"] == [{"type": "message", "role": "user", "content": "u2, reworded"}]
    assert stub.seen_by_model[2][-1] == {"role": "user", "content": "u2, reworded"}


def test_a_response_the_server_forgot_is_the_agents_error(stub):
    agent = load_agent(SPEC)
    first = ask(agent, convo("u1")).messages[0]
    stub.conversations.clear()
    with pytest.raises(AgentError, match="Previous response with id 'resp_stub_1' not found"):
        ask(agent, [*convo("u1"), first, Message(role="user", content="u2")])


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("openai-responses:m?stat=full", "Did you mean 'state'?"),
        ("openai-responses:m?state=thread", "use state=chain or state=full"),
        ("openai-responses:m?reasoning=max", "use low, medium or high"),
        ("openai-responses:m?api_key_env=NO_SUCH_KEY_VAR_X", "NO_SUCH_KEY_VAR_X is not set"),
    ],
)
def test_spec_errors_say_what_to_change(spec, says):
    with pytest.raises(AgentError) as err:
        load_agent(spec)
    assert says in str(err.value)
