"""Per-endpoint rate limits and cost accounting."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.openai_stub import OpenAIStub, text
from usersim.llm.client import chat_completion
from usersim.llm.prices import cost_usd
from usersim.llm.ratelimit import limiter_for, parse_limits


def test_parse_limits_and_errors():
    assert parse_limits("api.openai.com=500, *=60") == {"api.openai.com": 500.0, "*": 60.0}
    with pytest.raises(ValueError, match="bad entry 'localhost'"):
        parse_limits("localhost")


async def test_limiter_spaces_calls_to_the_configured_rate(monkeypatch):
    monkeypatch.setenv("USERSIM_RATE_LIMITS", "127.0.0.1:9=600")  # 10/s, burst 60 -> use a small burst check
    lim = limiter_for("http://127.0.0.1:9/v1")
    assert lim is not None and limiter_for("http://other:1/v1") is None
    lim.tokens = 0  # start empty: each acquisition must wait ~0.1 s
    t0 = time.monotonic()
    for _ in range(3):
        await lim.acquire()
    assert time.monotonic() - t0 >= 0.25


async def test_chat_completion_records_cost_and_respects_limits(monkeypatch):
    monkeypatch.setenv("USERSIM_NO_CACHE", "1")
    with OpenAIStub() as stub:
        monkeypatch.setenv("USERSIM_RATE_LIMITS", f"127.0.0.1:{stub.port}=1200")
        stub.script(*[text("ok", prompt_tokens=1000, completion_tokens=500) for _ in range(3)])
        results = await asyncio.gather(
            *[
                chat_completion(
                    model="gpt-4o-mini",
                    messages=[{"role": "user", "content": "hi"}],
                    base_url=stub.base_url,
                    cache=False,
                )
                for _ in range(3)
            ]
        )
    for _, usage in results:
        assert usage.cost_usd == pytest.approx(cost_usd("gpt-4o-mini", 1000, 500))
        assert usage.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)


def test_cost_prefix_match_and_unknown_model(tmp_path, monkeypatch):
    assert cost_usd("gpt-4o-2024-08-06", 1_000_000, 0) == pytest.approx(2.5)
    assert cost_usd("my-local-llama", 10_000, 10_000) == 0.0
    extra = tmp_path / "p.yaml"
    extra.write_text("my-local-llama: [1.0, 2.0]\n", encoding="utf-8")
    monkeypatch.setenv("USERSIM_PRICES", str(extra))
    assert cost_usd("my-local-llama", 1_000_000, 1_000_000) == pytest.approx(3.0)


async def test_json_mode_rejected_by_server_is_dropped_and_retried(monkeypatch):
    from tests.support.openai_stub import error

    with OpenAIStub() as stub:
        stub.script(
            error(400, "response_format json_object is not supported by this model"), text('{"ok": 1}')
        )
        message, _ = await chat_completion(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            base_url=stub.base_url,
            response_format={"type": "json_object"},
            cache=False,
        )
        assert message["content"] == '{"ok": 1}'
        assert "response_format" in stub.requests[0] and "response_format" not in stub.requests[1]
