"""Endpoint replies that are not usable completions, and a corrupt LLM cache.

A 200 with a cut or non-JSON body, no choices, a null message or fields of the wrong type is retried
like a transport fault; when it never gets better the error names the role, the endpoint and the
model. A corrupt cache file is moved aside with a warning and the call goes on."""

from __future__ import annotations

import json
import logging

import pytest
from aiohttp import web

from tests.support.openai_stub import OpenAIStub
from usersim.llm.client import LLMCallError, chat_completion

GOOD = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}}]}
FAULTS = {
    "cut_json": b'{"id": "x", "choices": [{"message": {"role": "assist',
    "html": b"<html>502 bad gateway</html>",
    "json_null": b"null",
    "json_list": b"[]",
    "no_choices": b"{}",
    "empty_choices": json.dumps({"choices": []}).encode(),
    "null_message": json.dumps({"choices": [{"index": 0, "message": None}]}).encode(),
    "content_not_text": json.dumps({"choices": [{"message": {"content": 5}}]}).encode(),
    "tool_call_without_name": json.dumps(
        {"choices": [{"message": {"content": None, "tool_calls": [{"function": None}]}}]}
    ).encode(),
    "tool_calls_not_list": json.dumps(
        {"choices": [{"message": {"content": "", "tool_calls": "x"}}]}
    ).encode(),
}


class FaultyStub(OpenAIStub):
    """Answers the first `bad` requests with a raw faulty body (status 200), then a good completion."""

    def __init__(self, body: bytes, bad: int) -> None:
        super().__init__()
        self.body, self.bad, self.count = body, bad, 0

    async def _handle(self, request: web.Request) -> web.Response:
        self.requests.append(await request.json())
        self.count += 1
        if self.count <= self.bad:
            kind = "text/html" if self.body.startswith(b"<") else "application/json"
            return web.Response(body=self.body, status=200, content_type=kind)
        return web.json_response(GOOD)


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_BACKOFF_S", "0.01")
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "3")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fault-key-987654")


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_bad_200_reply_is_retried_like_a_transport_fault(fault, fast, monkeypatch):
    with FaultyStub(FAULTS[fault], bad=1) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        message, usage = await chat_completion(model="m-1", messages=[{"role": "user", "content": "hi"}])
    assert message == {"role": "assistant", "content": "fine"}
    assert stub.count == 2 and usage.calls == 1


@pytest.mark.parametrize("fault", ["cut_json", "null_message", "no_choices"])
async def test_a_reply_that_never_gets_better_names_role_endpoint_and_model(fault, fast, monkeypatch):
    with FaultyStub(FAULTS[fault], bad=99) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        with pytest.raises(LLMCallError) as info:
            await chat_completion(
                model="judge-model-x", messages=[{"role": "user", "content": "hi"}], role="judge"
            )
    text = str(info.value)
    assert text.startswith(f"judge model 'judge-model-x' at {stub.base_url}: HTTP 200: unusable reply")
    assert "gave up after 3 attempts" in text and stub.count == 3
    assert "sk-test-fault-key" not in text


async def test_content_parts_are_joined_not_refused(fast, monkeypatch):
    parts = {
        "choices": [
            {"message": {"content": [{"type": "text", "text": "fi"}, {"type": "text", "text": "ne"}]}}
        ]
    }
    with FaultyStub(json.dumps(parts).encode(), bad=1) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        message, _usage = await chat_completion(model="m", messages=[{"role": "user", "content": "p"}])
    assert message == {"role": "assistant", "content": "fine"} and stub.count == 1


async def test_a_bad_reply_is_never_cached(fast, monkeypatch):
    with FaultyStub(FAULTS["null_message"], bad=1) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        for _ in range(2):
            message, _usage = await chat_completion(model="m", messages=[{"role": "user", "content": "a"}])
            assert message["content"] == "fine"
    assert stub.count == 2  # one bad, one good; the second call was a cache hit of the good one


async def test_a_corrupt_cache_is_moved_aside_and_the_call_goes_on(tmp_path, fast, monkeypatch, caplog):
    from usersim.llm import cache as cache_mod

    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "llm_cache.sqlite").write_bytes(b"definitely not sqlite\n" * 500)
    monkeypatch.setenv("USERSIM_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(cache_mod, "_caches", {})
    with FaultyStub(b"", bad=0) as stub, caplog.at_level(logging.WARNING, logger="usersim.llm.cache"):
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        for _ in range(2):
            message, _usage = await chat_completion(model="m", messages=[{"role": "user", "content": "b"}])
            assert message["content"] == "fine"
    assert stub.count == 1  # the fresh cache served the second call
    aside = sorted(p.name for p in cache_dir.glob("llm_cache.sqlite.corrupt-*"))
    assert len(aside) == 1
    assert any("is corrupt" in r.message and "moved it to" in r.message for r in caplog.records)
    assert (cache_dir / aside[0]).read_bytes().startswith(b"definitely not sqlite")


def test_a_cache_damaged_while_open_is_replaced_not_fatal(tmp_path, caplog):
    from usersim.llm.cache import LLMCache

    path = tmp_path / "llm_cache.sqlite"
    cache = LLMCache(path)
    cache._conn.executemany(
        "INSERT INTO llm_calls (key, model, message) VALUES (?, 'm', ?)",
        [(f"k{i}", json.dumps({"content": "x" * 200})) for i in range(1500)],
    )
    cache._conn.commit()
    cache._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache.close()
    data = bytearray(path.read_bytes())
    for at in range(8192, len(data) - 8192, 4096):  # trash every page after the first two
        data[at : at + 200] = b"\xff" * 200
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="usersim.llm.cache"):
        cache = LLMCache(path)
        assert cache.get("k1400") is None  # a miss, not an exception
        cache.put("new", "m", {"content": "y"}, 1, 1)
        assert cache.get("new") == ({"content": "y"}, 1, 1)
        cache.close()
    assert any("is corrupt" in r.message for r in caplog.records)
