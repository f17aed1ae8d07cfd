"""A local OpenAI-compatible server over real HTTP for tests and benchmarks.

It serves `POST /v1/chat/completions` on 127.0.0.1 (a free port) from an aiohttp app running in
its own thread, so it works from sync code, from any pytest event loop and from benchmarks::

    with OpenAIStub() as stub:
        stub.script(text("Hello"), tool_call("search_flights", {"origin": "上海"}), error(429, retry_after=1))
        os.environ["OPENAI_BASE_URL"] = stub.base_url
        ...
        stub.requests  # the JSON bodies it received, in order

Scripted replies are consumed in order; when the script is empty the `responder` callable (if
any) answers, else the server says "ok". A reply is a dict:

* `content`, `tool_calls` ([{name, arguments (dict or raw string), id?}] or the OpenAI form),
  `usage` — a reply;
* `status` (+ `error`, `headers`) — an HTTP error with an OpenAI-style error body;
* `delay` — seconds to wait before answering (for client timeouts);
* `raw` — an exact JSON body to send.

`api_key=` makes it answer 401 to any other key; `models=` makes it answer 404 for other models.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

Reply = dict[str, Any]


def text(content: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None) -> Reply:
    """A plain text reply."""
    reply: Reply = {"content": content}
    if prompt_tokens is not None or completion_tokens is not None:
        reply["usage"] = {"prompt_tokens": prompt_tokens or 0, "completion_tokens": completion_tokens or 0}
    return reply


def tool_call(
    name: str, arguments: dict[str, Any] | str, *, call_id: str | None = None, content: str = ""
) -> Reply:
    """A reply with one tool call (arguments as a dict, or a raw string to send malformed JSON)."""
    return {"content": content, "tool_calls": [{"name": name, "arguments": arguments, "id": call_id}]}


def error(status: int, message: str = "", *, retry_after: float | None = None) -> Reply:
    """An HTTP error reply (429 with Retry-After, 500, 401 ...)."""
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return {"status": status, "error": message or f"stub error {status}", "headers": headers}


def slow(seconds: float, reply: Reply | None = None) -> Reply:
    """A reply sent after `seconds` (to trigger client timeouts)."""
    return {**(reply or text("late")), "delay": seconds}


class OpenAIStub:
    """The stub server; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: set[str] | None = None,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
    ) -> None:
        self.api_key = api_key
        self.models = models
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> OpenAIStub:
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def pending(self) -> int:
        return len(self._script)

    # --- server -------------------------------------------------------------------------------
    def start(self) -> OpenAIStub:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._serve())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="openai-stub", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("OpenAI stub server did not start")
        return self

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        if self._loop is None:
            return
        loop = self._loop
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        loop.close()
        self._loop = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            reply = self._script.popleft() if self._script else None
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error_response(401, "Incorrect API key provided.", "invalid_api_key")
        if self.models is not None and body.get("model") not in self.models:
            return _error_response(404, f"The model '{body.get('model')}' does not exist", "model_not_found")
        if reply is None:
            reply = self.responder(body) if self.responder else text("ok")
        if reply.get("delay"):
            await asyncio.sleep(float(reply["delay"]))
        if "status" in reply:
            return _error_response(int(reply["status"]), reply.get("error", ""), None, reply.get("headers"))
        if "raw" in reply:
            return web.json_response(reply["raw"])
        return web.json_response(_completion(body, reply, len(self.requests)))


def _error_response(
    status: int, message: str, code: str | None, headers: dict[str, str] | None = None
) -> web.Response:
    payload = {"error": {"message": message, "type": "stub_error", "code": code}}
    return web.json_response(payload, status=status, headers=headers or {})


def openai_tool_calls(calls: list[dict[str, Any]], id_prefix: str) -> list[dict[str, Any]]:
    """Tool calls in the OpenAI wire form, from our short form ({name, arguments, id?}) or the OpenAI form;
    dict arguments become JSON strings, raw strings are sent as given (to test malformed JSON)."""
    out = []
    for i, tc in enumerate(calls):
        fn = tc.get("function") or tc
        args = fn.get("arguments", {})
        out.append(
            {
                "id": tc.get("id") or f"{id_prefix}_{i}",
                "type": "function",
                "function": {
                    "name": fn["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                },
            }
        )
    return out


def _completion(body: dict[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content") or None}
    calls = openai_tool_calls(reply.get("tool_calls") or [], f"call_{n}")
    if calls:
        message["tool_calls"] = calls
    prompt_chars = len(json.dumps(body.get("messages", []), ensure_ascii=False))
    usage = reply.get("usage") or {
        "prompt_tokens": max(1, prompt_chars // 4),
        "completion_tokens": max(1, len(reply.get("content") or "") // 4 + 10 * len(calls)),
    }
    usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
    return {
        "id": f"chatcmpl-stub-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "stub"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": usage,
    }


@pytest.fixture
def openai_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    """A running stub; OPENAI_BASE_URL / OPENAI_API_KEY point at it; fast retries for tests."""
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stub-key-123456")
        monkeypatch.setenv("USERSIM_LLM_BACKOFF_S", "0.01")
        yield stub
