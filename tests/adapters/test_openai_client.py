"""chat_completion against the real-HTTP stub: retries, errors, cache, usage, secrets."""

from __future__ import annotations

import time

import pytest

from tests.support.openai_stub import OpenAIStub, error, slow, text, tool_call
from usersim.llm.client import LLMCallError, chat_completion

MSGS = [{"role": "user", "content": "你好"}]


async def test_text_reply_records_usage_and_request(openai_stub):
    openai_stub.script(text("您好！", prompt_tokens=12, completion_tokens=3))
    message, usage = await chat_completion(model="m1", messages=MSGS, temperature=0)
    assert message == {"role": "assistant", "content": "您好！"}
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.cached_calls) == (1, 12, 3, 0)
    sent = openai_stub.requests[0]
    assert sent["model"] == "m1" and sent["messages"] == MSGS and sent["temperature"] == 0
    assert sent.get("stream") is False
    assert openai_stub.headers[0]["Authorization"] == "Bearer sk-test-stub-key-123456"


async def test_tool_calls_pass_through_with_tools(openai_stub):
    tools = [{"type": "function", "function": {"name": "maps_weather", "parameters": {"type": "object"}}}]
    openai_stub.script(tool_call("maps_weather", {"city": "北京"}, call_id="c1"))
    message, _ = await chat_completion(model="m", messages=MSGS, tools=tools)
    assert message["tool_calls"][0]["function"] == {"name": "maps_weather", "arguments": '{"city": "北京"}'}
    assert openai_stub.requests[0]["tools"] == tools


async def test_second_identical_call_is_served_from_cache(openai_stub):
    openai_stub.script(text("first", prompt_tokens=5, completion_tokens=1), text("second"))
    m1, u1 = await chat_completion(model="m", messages=MSGS, seed=7)
    m2, u2 = await chat_completion(model="m", messages=MSGS, seed=7)
    assert m1 == m2 == {"role": "assistant", "content": "first"}
    assert u1.cached_calls == 0 and u2.cached_calls == 1 and u2.prompt_tokens == 5
    assert len(openai_stub.requests) == 1
    # a different seed salt is a different key: the model is asked again
    m3, u3 = await chat_completion(model="m", messages=MSGS, seed=8)
    assert m3["content"] == "second" and u3.cached_calls == 0


async def test_cache_can_be_disabled_by_env(openai_stub, monkeypatch):
    monkeypatch.setenv("USERSIM_NO_CACHE", "1")
    openai_stub.script(text("a"), text("b"))
    first, _ = await chat_completion(model="m", messages=MSGS)
    second, _ = await chat_completion(model="m", messages=MSGS)
    assert (first["content"], second["content"]) == ("a", "b")


async def test_429_is_retried_after_retry_after(openai_stub):
    openai_stub.script(error(429, "Rate limit reached", retry_after=1), text("done"))
    t0 = time.monotonic()
    message, _ = await chat_completion(model="m", messages=MSGS, cache=False)
    assert message["content"] == "done"
    assert time.monotonic() - t0 >= 0.9  # honoured Retry-After: 1 (the base backoff is 0.01 s in tests)
    assert len(openai_stub.requests) == 2


async def test_500_retried_then_gives_up_with_clear_error(openai_stub, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "3")
    openai_stub.script(error(500, "upstream exploded"), error(502, "bad gateway"), error(503, "overloaded"))
    with pytest.raises(LLMCallError) as info:
        await chat_completion(model="m", messages=MSGS, cache=False)
    assert info.value.status == 503
    assert "gave up after 3 attempts" in str(info.value)
    assert openai_stub.base_url in str(info.value) and "'m'" in str(info.value)
    assert len(openai_stub.requests) == 3


async def test_401_not_retried_and_key_never_shown(monkeypatch):
    with OpenAIStub(api_key="sk-right-key-000000") as stub:
        with pytest.raises(LLMCallError) as info:
            await chat_completion(
                model="m", messages=MSGS, base_url=stub.base_url, api_key="sk-wrong-key-999999", cache=False
            )
        assert len(stub.requests) == 1
    msg = str(info.value)
    assert info.value.status == 401
    assert stub.base_url in msg and "OPENAI_API_KEY" in msg
    assert "sk-wrong-key-999999" not in msg and "sk-right-key" not in msg


async def test_404_unknown_model_not_retried(monkeypatch):
    with OpenAIStub(models={"gpt-real"}) as stub:
        with pytest.raises(LLMCallError) as info:
            await chat_completion(model="gpt-typo", messages=MSGS, base_url=stub.base_url, cache=False)
        assert len(stub.requests) == 1
    assert info.value.status == 404
    assert "model 'gpt-typo'" in str(info.value) and "does not exist" in str(info.value)


async def test_timeout_is_retried_then_reported(openai_stub, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")
    openai_stub.script(slow(1.5), slow(1.5))
    with pytest.raises(LLMCallError) as info:
        await chat_completion(model="m", messages=MSGS, timeout=0.3, cache=False)
    assert info.value.status is None
    assert "timed out after 0.3s" in str(info.value)
    assert len(openai_stub.requests) == 2


async def test_timeout_then_success(openai_stub):
    openai_stub.script(slow(1.5), text("recovered"))
    message, _ = await chat_completion(model="m", messages=MSGS, timeout=0.3, cache=False)
    assert message["content"] == "recovered"


async def test_connection_refused_is_an_llm_call_error(monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "1")
    with pytest.raises(LLMCallError) as info:
        await chat_completion(model="m", messages=MSGS, base_url="http://127.0.0.1:9/v1", cache=False)
    assert "connection failed" in str(info.value) and "127.0.0.1:9" in str(info.value)


async def test_fake_model_replaces_the_network(fake_model):
    fake_model.add("scripted", {"tool_calls": [{"name": "web_search", "arguments": {"query": "x"}}]})
    first, usage = await chat_completion(model="judge", messages=MSGS, role="judge")
    second, _ = await chat_completion(model="judge", messages=MSGS)
    assert first["content"] == "scripted" and usage.calls == 1
    assert second["tool_calls"][0]["function"]["name"] == "web_search"
    assert [c["model"] for c in fake_model.calls] == ["judge", "judge"]


async def test_the_chat_span_names_the_response_model_id_provider_and_server(openai_stub):
    # the GenAI conventions' chat span attributes come from the response as read here; a cache
    # hit names the response it reuses; the caller's message never carries them
    from usersim.core import timeline

    openai_stub.script(text("hi"))
    with timeline.collecting() as tl:
        m1, _ = await chat_completion(model="m9", messages=MSGS, seed=3)
        m2, u2 = await chat_completion(model="m9", messages=MSGS, seed=3)
    assert m1 == m2 == {"role": "assistant", "content": "hi"} and u2.cached_calls == 1
    first, again = (s[6] for s in tl.spans)
    assert first["response_id"] == again["response_id"] == "chatcmpl-stub-1"
    assert first["response_model"] == "m9" and first["provider"] == "openai"
    assert first["server_address"] == "127.0.0.1" and first["server_port"] == openai_stub.port
