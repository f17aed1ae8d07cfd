"""llm.wire, usersim's own client for the OpenAI wire format, against real local HTTP servers:
what the openai package used to do for us (headers, proxies, Retry-After, errors that name the
endpoint and never the key, tool calls intact) must still happen."""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from aiohttp import web

from tests.support.openai_stub import OpenAIStub, text, tool_call
from usersim.llm import wire
from usersim.llm.client import LLMCallError, _retry_after, chat_completion

MSGS = [{"role": "user", "content": "帮我订周五去大阪的机票"}]
KEY = "sk-wire-test-secret-4242"


class HeaderStub(OpenAIStub):
    """The stub whose error replies can carry any headers (Retry-After as a date, Retry-After-Ms)."""

    def __init__(self, *replies: tuple[int, dict[str, str], dict]) -> None:
        super().__init__()
        self.replies = list(replies)

    async def _handle(self, request: web.Request) -> web.Response:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        status, headers, body = self.replies.pop(0)
        return web.json_response(body, status=status, headers=headers)


GOOD = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "订好了"}}]}


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_BACKOFF_S", "0.01")
    monkeypatch.setenv("USERSIM_NO_CACHE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


async def test_tool_calls_and_options_round_trip_on_the_wire(openai_stub, fast):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "search_flights",
                "description": "航班搜索",
                "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
            },
        }
    ]
    openai_stub.script(tool_call("search_flights", {"to": "大阪", "day": "周五"}, call_id="call_7"))
    history = [
        *MSGS,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "search_flights", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": '{"error": "missing to"}'},
    ]
    message, usage = await chat_completion(
        model="m",
        messages=history,
        tools=tools,
        temperature=0.2,
        seed=11,
        response_format={"type": "json_object"},
        max_tokens=99,
    )
    assert message["tool_calls"] == [
        {
            "id": "call_7",
            "type": "function",
            "function": {"name": "search_flights", "arguments": '{"to": "大阪", "day": "周五"}'},
        }
    ]
    sent = openai_stub.requests[0]
    assert sent["messages"] == history and sent["tools"] == tools
    assert (sent["temperature"], sent["seed"], sent["max_tokens"]) == (0.2, 11, 99)
    assert sent["response_format"] == {"type": "json_object"} and sent["stream"] is False
    assert usage.calls == 1 and usage.prompt_tokens > 0


async def test_headers_the_sdk_sent_are_still_sent(openai_stub, fast, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-wire")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-wire")
    openai_stub.script(text("ok"))
    await chat_completion(
        model="m", messages=MSGS, base_url=openai_stub.base_url + "/", api_key="sk-other-1234"
    )
    headers = openai_stub.headers[0]
    assert headers["Authorization"] == "Bearer sk-other-1234"
    assert headers["Content-Type"] == "application/json"
    assert (headers["OpenAI-Organization"], headers["OpenAI-Project"]) == ("org-wire", "proj-wire")


@pytest.mark.parametrize("form", ["seconds", "milliseconds", "http-date"])
async def test_retry_after_is_read_in_every_form_servers_send(form):
    headers = {
        "seconds": {"Retry-After": "30"},
        "milliseconds": {"Retry-After-Ms": "30000"},
        "http-date": {"Retry-After": email.utils.formatdate(time.time() + 30, usegmt=True)},
    }[form]
    with HeaderStub((429, headers, {"error": {"message": "Rate limit reached"}})) as stub:
        client = wire.WireClient(stub.base_url, KEY)
        try:
            with pytest.raises(wire.StatusError) as info:
                await client.post("/chat/completions", b'{"model": "m", "messages": []}', 5.0)
        finally:
            await client.close()
    assert info.value.status_code == 429 and info.value.message == "Rate limit reached"
    wait = _retry_after(info.value)
    assert wait is not None and 20 < wait <= 30.0  # a date has whole seconds


async def test_429_and_5xx_are_retried_then_answered(fast):
    replies = [
        (429, {"Retry-After": "0"}, {"error": {"message": "slow down"}}),
        (503, {}, {"error": {"message": "overloaded"}}),
        (200, {}, GOOD),
    ]
    with HeaderStub(*replies) as stub:
        message, usage = await chat_completion(model="m", messages=MSGS, base_url=stub.base_url)
    assert message["content"] == "订好了" and usage.calls == 1
    assert len(stub.requests) == 3  # the same request each time
    assert stub.requests[0] == stub.requests[2]


async def test_a_server_that_echoes_the_key_never_gets_it_into_the_error(fast, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")  # the key reaches us only as an argument, not from the env
    secret = "sk-only-in-argument-777777"
    body = {"error": {"message": f"Incorrect API key provided: {secret}. Authorization: Bearer {secret}"}}
    with HeaderStub((401, {}, body)) as stub:
        url = stub.base_url + f"?api_key={secret}"  # a proxy that takes the key in the URL
        with pytest.raises(LLMCallError) as info:
            await chat_completion(model="m", messages=MSGS, base_url=url, api_key=secret, role="judge")
        assert len(stub.requests) == 1  # 401 is not retried
    msg = str(info.value)
    assert secret not in msg and "777777" not in msg
    assert msg.startswith("judge model 'm' at http://127.0.0.1:") and "HTTP 401" in msg
    assert "Incorrect API key provided" in msg and "OPENAI_API_KEY" in msg


async def test_a_timeout_names_the_endpoint_and_the_seconds(fast, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")
    with OpenAIStub() as stub:
        stub.script({**text("late"), "delay": 1.0}, {**text("late"), "delay": 1.0})
        with pytest.raises(LLMCallError) as info:
            await chat_completion(model="slowpoke", messages=MSGS, base_url=stub.base_url, timeout=0.2)
        assert len(stub.requests) == 2
    assert info.value.status is None
    assert str(info.value) == (
        f"agent model 'slowpoke' at {stub.base_url}: request timed out after 0.2s (gave up after 2 attempts)"
    )


async def test_the_proxy_from_the_environment_is_used_unless_no_proxy_says_otherwise(fast, monkeypatch):
    """HTTP_PROXY points at a port where nothing listens: the call goes there (and fails naming the
    proxy's refusal) unless NO_PROXY exempts the endpoint's host."""
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "1")
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with OpenAIStub() as stub:
        stub.script(text("direct"))
        with pytest.raises(LLMCallError) as info:
            await chat_completion(model="m", messages=MSGS, base_url=stub.base_url)
        assert "connection failed" in str(info.value) and "127.0.0.1:9" in str(info.value)
        assert stub.requests == []
        await wire.aclose()  # a new session reads the environment again
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        message, _ = await chat_completion(model="m", messages=MSGS, base_url=stub.base_url)
    assert message["content"] == "direct"


async def test_an_error_body_that_is_not_json_is_quoted(fast, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")

    class HtmlStub(OpenAIStub):
        async def _handle(self, request: web.Request) -> web.Response:
            self.requests.append(await request.json())
            return web.Response(text="<html>502 Bad Gateway</html>", status=502, content_type="text/html")

    with HtmlStub() as stub:
        with pytest.raises(LLMCallError) as info:
            await chat_completion(model="m", messages=MSGS, base_url=stub.base_url)
    assert info.value.status == 502
    assert "Error code: 502 - <html>502 Bad Gateway</html> (gave up after 2 attempts)" in str(info.value)


async def test_sessions_are_pooled_per_endpoint_and_closed_at_the_end(openai_stub, fast):
    openai_stub.script(text("a"), text("b"))
    await chat_completion(model="m", messages=MSGS)
    await chat_completion(model="m", messages=MSGS)
    client = wire.client_for(openai_stub.base_url, KEY)
    session = client._session
    assert session is not None and not session.closed  # both calls went over the one session
    await wire.aclose()
    assert session.closed and wire.client_for(openai_stub.base_url, KEY) is not client


def test_endpoint_urls_keep_a_query_of_the_base_url_last():
    assert wire.endpoint_url("http://h:1/v1", "/chat/completions") == "http://h:1/v1/chat/completions"
    assert wire.endpoint_url("http://h:1/v1/", "/models") == "http://h:1/v1/models"
    assert (
        wire.endpoint_url(
            "https://x.example/openai/deployments/d?api-version=2024-06-01", "/chat/completions"
        )
        == "https://x.example/openai/deployments/d/chat/completions?api-version=2024-06-01"
    )


async def test_the_json_of_a_request_survives_what_orjson_cannot_encode(openai_stub, fast):
    """A seed beyond 64 bits (a user's own) is sent as written, through the json module."""
    openai_stub.script(text("ok"))
    await chat_completion(model="m", messages=MSGS, seed=2**70)
    assert openai_stub.requests[0]["seed"] == 2**70
    assert json.loads(json.dumps(openai_stub.requests[0]))["seed"] == 2**70
