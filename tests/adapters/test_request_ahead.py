"""llm.ahead against the real-HTTP stub: a model call sent ahead answers the same call once, never
a different one, and fails, retries, caches and rate-limits as the call itself would."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.support.openai_stub import error, slow, text
from usersim.core import timeline
from usersim.llm import ahead
from usersim.llm.client import LLMCallError, chat_completion
from usersim.llm.ratelimit import limiter_for

MSGS = [{"role": "user", "content": "我想暑假去日本玩"}]


@pytest.fixture(autouse=True)
def _nothing_left_ahead():
    yield
    ahead.discard()


async def _send(**kwargs) -> bool:
    return await ahead.send_ahead(chat_completion(role="agent", **kwargs))


async def test_the_same_call_is_answered_by_the_call_sent_ahead_and_the_model_asked_once(openai_stub):
    openai_stub.script(slow(0.3, text("好的，几月出发？", prompt_tokens=40, completion_tokens=6)))
    assert await _send(model="m", messages=MSGS, seed=3, cache=False)
    await asyncio.sleep(0.1)  # on its way while the caller does something else
    assert len(openai_stub.requests) == 1
    with timeline.collecting() as spans:
        message, usage = await chat_completion(model="m", role="agent", messages=MSGS, seed=3, cache=False)
    assert message == {"role": "assistant", "content": "好的，几月出发？"}
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 40, 6)
    assert len(openai_stub.requests) == 1
    (span,) = spans.shifted(0.0, str)  # as the record gets it
    assert span.kind == "chat" and span.attrs["sent_ahead_s"] >= 0.1 and span.attrs["input_tokens"] == 40
    # one shot: the next identical call goes to the model
    openai_stub.script(text("again"))
    message, _ = await chat_completion(model="m", role="agent", messages=MSGS, seed=3, cache=False)
    assert message["content"] == "again" and len(openai_stub.requests) == 2


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [{"role": "user", "content": "我想暑假去日本玩。"}]},  # one character more
        {"seed": 4},
        {"temperature": 0.2},
        {"tools": [{"type": "function", "function": {"name": "search_flights", "parameters": {}}}]},
        {"model": "m2"},
        {"role": "simulator"},
    ],
)
async def test_a_different_call_is_never_answered_by_the_call_sent_ahead(openai_stub, caplog, change):
    openai_stub.script(text("for the call sent ahead"), text("for the call made"))
    assert await _send(model="m", messages=MSGS, seed=3, cache=False)
    await asyncio.sleep(0.2)  # it went out (a call dropped before it left costs nothing)
    call = {"model": "m", "role": "agent", "messages": MSGS, "seed": 3, "cache": False} | change
    with caplog.at_level(logging.WARNING, logger="usersim.llm.ahead"):
        message, _ = await chat_completion(**call)
    assert message["content"] == "for the call made"
    assert len(openai_stub.requests) == 2  # the price: the call sent ahead was one more model call
    assert "sent ahead was not used" in caplog.text and "differs" in caplog.text


async def test_a_failing_call_sent_ahead_raises_what_the_call_itself_raises(openai_stub):
    openai_stub.script(*[error(500, "overloaded")] * 4)
    assert await _send(model="m", messages=MSGS, cache=False)
    with pytest.raises(LLMCallError) as sent_ahead:
        await chat_completion(model="m", role="agent", messages=MSGS, cache=False)
    assert len(openai_stub.requests) == 4  # the client's 4 attempts, once
    openai_stub.requests.clear()
    openai_stub.script(*[error(500, "overloaded")] * 4)
    with pytest.raises(LLMCallError) as direct:
        await chat_completion(model="m", role="agent", messages=MSGS, cache=False)
    assert (
        str(sent_ahead.value) == str(direct.value) and sent_ahead.value.status == direct.value.status == 500
    )
    assert "gave up after 4 attempts" in str(direct.value)


async def test_a_call_sent_ahead_fills_the_cache_and_a_cached_one_goes_nowhere(openai_stub):
    openai_stub.script(text("cached answer", prompt_tokens=9, completion_tokens=2))
    assert await _send(model="m", messages=MSGS, seed=5)
    _, first = await chat_completion(model="m", role="agent", messages=MSGS, seed=5)
    assert first.cached_calls == 0 and len(openai_stub.requests) == 1
    assert await _send(model="m", messages=MSGS, seed=5)
    message, again = await chat_completion(model="m", role="agent", messages=MSGS, seed=5)
    assert message["content"] == "cached answer" and again.cached_calls == 1 and again.prompt_tokens == 9
    assert len(openai_stub.requests) == 1


async def test_a_call_sent_ahead_takes_its_place_under_the_rate_limit(openai_stub, monkeypatch):
    host = openai_stub.base_url.split("//")[1].split("/")[0]
    monkeypatch.setenv("USERSIM_RATE_LIMITS", f"{host}=60")  # a bucket of 6, one a second
    assert await _send(model="m", messages=MSGS, cache=False)
    await chat_completion(model="m", role="agent", messages=MSGS, cache=False)
    limiter = limiter_for(openai_stub.base_url)  # this event loop's bucket
    assert limiter is not None and 4.5 < limiter.tokens < 5.5  # one token taken, not two


async def test_a_call_sent_ahead_that_nobody_asks_for_is_dropped_and_said(openai_stub, caplog):
    openai_stub.script(slow(5, text("never read")))
    assert await _send(model="m", messages=MSGS, cache=False)
    await asyncio.sleep(0.1)
    task = ahead._ahead.task if ahead._ahead else None
    with caplog.at_level(logging.WARNING, logger="usersim.llm.ahead"):
        ahead.discard()
    assert task is not None
    await asyncio.sleep(0)
    assert task.cancelled() and not ahead.pending()
    assert "no model call asked for it" in caplog.text


async def test_an_adapter_that_fails_before_its_call_sends_nothing(openai_stub):
    async def broken() -> None:
        raise ValueError("no input")

    assert not await ahead.send_ahead(broken())
    assert not ahead.pending() and openai_stub.requests == []
