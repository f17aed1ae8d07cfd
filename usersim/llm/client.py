"""One shared helper for OpenAI-compatible chat calls (agent, simulator and LLM judge use it).

`chat_completion(...)` sends one non-streaming chat-completions request through `llm.wire`, a thin
client for the OpenAI wire format on aiohttp (the `openai` package's request pipeline cost 3-4x
the whole wire round trip in CPU per call; see llm/wire.py), and adds what every caller needs:

* configuration from `OPENAI_BASE_URL` / `OPENAI_API_KEY`, overridable per call;
* retries with exponential backoff that honour `Retry-After` for 429, 5xx, timeouts and
  connection errors (`USERSIM_LLM_MAX_ATTEMPTS`, default 4 attempts; `USERSIM_LLM_BACKOFF_S`,
  default 0.5 s base; a Retry-After above `USERSIM_LLM_MAX_WAIT_S`, default 60 s, is capped);
* no retry for 400/401/403/404 — those raise `LLMCallError` at once, naming endpoint and model;
* a 200 reply that is not a usable completion (cut or non-JSON body, no choices, null message,
  wrong field types) is retried like a transport fault, then an error naming role, endpoint, model;
* the SQLite call cache of `adapters.llm_cache` (cached answers count in `Usage.cached_calls`);
* token usage as `graphs.state.Usage`;
* secrets redacted from every error message.

The Responses API adapter still drives the `openai` package (`_client` below, imported lazily).
Tests replace the network with a scripted model via `use_fake_model` (see tests/support/fake_model.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from usersim.core import timeline
from usersim.core.events import Usage
from usersim.core.messages import Message
from usersim.core.secrets import redact
from usersim.core.turns import away
from usersim.llm import ahead
from usersim.llm.cache import cache_key, get_cache
from usersim.llm.prices import cost_usd
from usersim.llm.providers import endpoint_of
from usersim.llm.ratelimit import limiter_for
from usersim.llm.wire import StatusError, WireConnectionError, WireTimeout, client_for, tls_context

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Answer token limit per role when the caller gives none (a spec's ?max_tokens= overrides it;
# USERSIM_MAX_TOKENS_AGENT / _SIMULATOR / _JUDGE too). Without a limit a local server may generate
# for minutes after the client timed out, and a retry then queues behind it (single-slot servers
# such as llama.cpp's default serve one request at a time): bounded answers finish in time.
DEFAULT_MAX_TOKENS = {"agent": 4096, "simulator": 600, "judge": 2000}
_NO_RETRY = {400, 401, 403, 404, 422}
# the response's model and id, carried from `_chat_completion` to the chat span (taken off the
# message before any caller sees it)
_SERVED = "_usersim_served"


class LLMCallError(RuntimeError):
    """A chat call failed for good. `status` is the HTTP status (None for timeouts / connection errors)."""

    def __init__(self, endpoint: str, status: int | None, message: str) -> None:
        self.endpoint = endpoint
        self.status = status
        self.message = message
        super().__init__(
            f"{endpoint}: {message}" if status is None else f"{endpoint}: HTTP {status}: {message}"
        )


class FakeChatModel(Protocol):
    """What `use_fake_model` accepts: a scripted stand-in for the endpoint."""

    async def complete(
        self, *, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, **params: Any
    ) -> tuple[dict[str, Any], Usage]: ...


_fakes: list[FakeChatModel] = []


@contextlib.contextmanager
def use_fake_model(fake: FakeChatModel) -> Iterator[FakeChatModel]:
    """Route every chat_completion call to `fake` (no HTTP, no cache) inside the block."""
    _fakes.append(fake)
    try:
        yield fake
    finally:
        _fakes.remove(fake)


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def resolve_endpoint(base_url: str | None, api_key: str | None) -> tuple[str, str]:
    """(base_url, api_key) from the arguments or OPENAI_BASE_URL / OPENAI_API_KEY."""
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    # Local servers (vLLM, Ollama, the test stub) accept any key; the openai package insists on one.
    key = api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key-set"
    return url, key


# SDK clients of the Responses adapter, one per (event loop, endpoint, key): aiohttp sessions must
# not cross event loops.
_clients: dict[tuple[int, str, str], tuple[asyncio.AbstractEventLoop, AsyncOpenAI]] = {}


def _client(base_url: str, api_key: str, timeout: float) -> AsyncOpenAI:
    """The `openai` package's client (aiohttp backend) for the Responses API adapter."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    loop = asyncio.get_running_loop()
    for k, (lp, _) in list(_clients.items()):
        if lp.is_closed():
            del _clients[k]
    key = (id(loop), base_url, api_key)
    if key not in _clients:
        client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            max_retries=0,
            timeout=timeout,
            http_client=DefaultAioHttpClient(verify=tls_context()),
        )
        _clients[key] = (loop, client)
    return _clients[key][1]


async def aclose_clients() -> None:
    """Close the pooled HTTP clients of the running event loop (call at the end of a run)."""
    from usersim.llm import wire

    await wire.aclose()
    loop = asyncio.get_running_loop()
    for k, (lp, client) in list(_clients.items()):
        if lp is loop:
            del _clients[k]
            await client.close()


def _retry_after(exc: Exception) -> float | None:
    """Seconds the server asks to wait (Retry-After-Ms, Retry-After in seconds or as an HTTP date)."""
    headers = getattr(exc, "headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            return float(ms) / 1000.0
    value = headers.get("retry-after")
    if value:
        with contextlib.suppress(ValueError):
            return max(0.0, float(value))
        with contextlib.suppress(TypeError, ValueError):
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    return None


def _server_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", None) or exc)


def _hint(status: int | None, model: str) -> str:
    if status == 401:
        return " Check OPENAI_API_KEY (or the spec's api_key_env) for this endpoint."
    if status == 404:
        return f" Check the model name '{model}' and that the base URL ends in /v1."
    return ""


def _encode(request: dict[str, Any]) -> bytes:
    """The request body: orjson (several times faster than json.dumps of messages and tool schemas);
    json.dumps for what orjson cannot encode (an int beyond 64 bits, a str subclass ...)."""
    try:
        return orjson.dumps(request)
    except TypeError:
        return json.dumps(request, ensure_ascii=False).encode()


def _where(role: str, model: str, url: str, key: str) -> str:
    """How errors name the endpoint: role, model and base URL (secrets redacted)."""
    return f"{role} model '{model}' at {redact(url, [key])}"


def _as_dicts(messages: list[dict[str, Any]] | list[Message]) -> list[dict[str, Any]]:
    return [m.to_openai() if isinstance(m, Message) else dict(m) for m in messages]


class BadReply(ValueError):
    """A 200 reply that is not a usable chat completion (cut or non-JSON body, null message, ...)."""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _snippet(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text[:80] + ("…" if len(text) > 80 else "")


def parse_reply(resp: Any) -> tuple[dict[str, Any], int, int]:
    """(assistant message dict in OpenAI form, prompt_tokens, completion_tokens) from a completion;
    anything missing or of the wrong type raises BadReply saying what. A JSON body sent with another
    content type arrives as text and is read as JSON."""
    if isinstance(resp, str):
        try:
            resp = json.loads(resp)
        except ValueError:
            raise BadReply(f"the body is not JSON: {_snippet(resp)}") from None
    if not (isinstance(resp, dict) or hasattr(resp, "choices")):
        raise BadReply(f"the body is not a chat completion: {_snippet(resp)}")
    choices = _get(resp, "choices")
    if not isinstance(choices, list) or not choices:
        raise BadReply("the response has no choices")
    message = _get(choices[0], "message")
    if message is None:
        raise BadReply("choices[0].message is null")
    content = _get(message, "content")
    if isinstance(content, list):  # content parts ([{type: text, text: ...}]), as some servers send
        texts = [_get(part, "text") for part in content]
        if not all(isinstance(t, str) for t in texts):
            raise BadReply(f"message.content parts are not text: {_snippet(content)}")
        content = "".join(texts)
    if content is not None and not isinstance(content, str):
        raise BadReply(f"message.content is not text: {_snippet(content)}")
    out: dict[str, Any] = {"role": "assistant", "content": content or ""}
    calls = _get(message, "tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise BadReply(f"message.tool_calls is not a list: {_snippet(calls)}")
    if calls:
        out["tool_calls"] = []
        for i, tc in enumerate(calls):
            fn = _get(tc, "function")
            name, args = _get(fn, "name"), _get(fn, "arguments")
            if not isinstance(name, str) or not name:
                raise BadReply(f"message.tool_calls[{i}].function.name is missing")
            if args is None:
                args = "{}"
            elif not isinstance(args, str):
                raise BadReply(f"message.tool_calls[{i}].function.arguments is not a string")
            call_id = _get(tc, "id")
            out["tool_calls"].append(
                {
                    "id": call_id if isinstance(call_id, str) else "",
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
            )
    usage = _get(resp, "usage")
    p_tok, c_tok = _get(usage, "prompt_tokens"), _get(usage, "completion_tokens")
    p_tok = p_tok if isinstance(p_tok, int) and p_tok >= 0 else 0
    c_tok = c_tok if isinstance(c_tok, int) and c_tok >= 0 else 0
    return out, p_tok, c_tok


async def check_model(
    model: str, *, role: str, base_url: str | None = None, api_key: str | None = None
) -> None:
    """Before a run: ask the endpoint which models it serves (GET /models) and raise LLMCallError
    for a key it rejects or a model it does not list. An endpoint that cannot tell (down, no
    /models route, an odd answer) passes: the run itself reports that outage. Skipped under a fake
    model and when USERSIM_SKIP_MODEL_CHECK is set (proxies that serve unlisted aliases)."""
    if _fakes or os.environ.get("USERSIM_SKIP_MODEL_CHECK", "").strip().lower() in {"1", "true", "yes", "on"}:
        return
    from usersim.core.registry import did_you_mean

    url, key = resolve_endpoint(base_url, api_key)
    endpoint = _where(role, model, url, key)
    try:
        client = client_for(url, key).ready()  # the import and TLS setup outside the 5 s
        page = await asyncio.wait_for(client.get("/models", 5.0), timeout=5.0)
        data = page.get("data") if isinstance(page, dict) else None
        served = [m["id"] for m in data or () if isinstance(m, dict) and isinstance(m.get("id"), str)]
    except StatusError as exc:
        if exc.status_code != 401:
            return
        raise LLMCallError(endpoint, 401, redact(_server_message(exc), [key]) + _hint(401, model)) from None
    except (WireTimeout, WireConnectionError, TimeoutError, ValueError, TypeError, AttributeError):
        return
    if served and model not in served:
        listed = ", ".join(sorted(served)[:12]) + (" ..." if len(served) > 12 else "")
        raise LLMCallError(
            endpoint,
            404,
            f"the endpoint does not serve model '{model}'.{did_you_mean(model, set(served))} It serves: "
            f"{listed} (set USERSIM_SKIP_MODEL_CHECK=1 if it serves models it does not list)",
        )


async def _chat_completion(
    *,
    model: str,
    messages: list[dict[str, Any]] | list[Message],
    tools: list[dict[str, Any]] | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float | None = None,
    response_format: dict[str, Any] | None = None,
    seed: int | None = None,
    cache: bool = True,
    role: str = "agent",
    timeout: float | None = None,
    max_tokens: int | None = None,
    sample: int = 0,
) -> tuple[dict[str, Any], Usage]:
    """One chat-completions call -> (assistant message dict in OpenAI format, Usage).

    `sample` (never sent) is the index of a repeated sample of the same request: its own cache key.

    `role` names the caller (agent / simulator / judge) in error messages. Raises LLMCallError.
    """
    msgs = _as_dicts(messages)
    params = {
        "temperature": temperature,
        "response_format": response_format,
        "seed": seed,
        "max_tokens": max_tokens,
    }
    if _fakes:
        return await _fakes[-1].complete(model=model, messages=msgs, tools=tools or None, **params)

    if max_tokens is None and role in DEFAULT_MAX_TOKENS:
        params["max_tokens"] = int(_env_float(f"USERSIM_MAX_TOKENS_{role.upper()}", DEFAULT_MAX_TOKENS[role]))
    url, key = resolve_endpoint(base_url, api_key)
    store = get_cache() if cache else None
    if store is not None:
        ckey = cache_key(
            model=model, base_url=url, messages=msgs, tools=tools, params=params, salt=seed, sample=sample
        )
        hit = store.get(ckey)
        if hit is not None:
            message, p_tok, c_tok = hit
            return message, Usage(calls=1, cached_calls=1, prompt_tokens=p_tok, completion_tokens=c_tok)

    timeout = timeout or _env_float("USERSIM_LLM_TIMEOUT_S", 120.0)
    client = client_for(url, key)
    request: dict[str, Any] = {"model": model, "messages": msgs, "stream": False}
    if tools:
        request["tools"] = tools
    request.update({k: v for k, v in params.items() if v is not None})

    retry = _Retry.from_env()
    last: LLMCallError | None = None
    body = _encode(request)
    for attempt in range(retry.attempts):
        limiter = limiter_for(url)
        if limiter is not None:
            async with away():
                await limiter.acquire()
        try:
            async with away():  # other conversations take their turns while this one waits
                resp = await client.post("/chat/completions", body, timeout)
        except StatusError as exc:
            status = exc.status_code
            last = LLMCallError(
                _where(role, model, url, key),
                status,
                redact(_server_message(exc), [key]) + _hint(status, model),
            )
            if (
                status == 400
                and "response_format" in request
                and "response_format" in f"{exc.message} {exc.body}".lower()
            ):
                # some OpenAI-compatible servers reject JSON mode; callers parse and repair JSON anyway
                request.pop("response_format")
                body = _encode(request)
                continue
            if status in _NO_RETRY or (status < 500 and status != 429):
                raise last from None
            wait = _retry_after(exc)
        except WireTimeout:
            last = LLMCallError(_where(role, model, url, key), None, f"request timed out after {timeout:g}s")
            wait = None
        except WireConnectionError as exc:
            last = LLMCallError(
                _where(role, model, url, key), None, f"connection failed: {redact(str(exc), [key])}"
            )
            wait = None
        else:
            try:
                message, p_tok, c_tok = parse_reply(resp)
            except BadReply as exc:
                last = LLMCallError(
                    _where(role, model, url, key), 200, f"unusable reply: {redact(str(exc), [key])}"
                )
                wait = None
            else:
                served = {"response_model": _get(resp, "model"), "response_id": _get(resp, "id")}
                message = {**message, _SERVED: {k: v for k, v in served.items() if isinstance(v, str)}}
                if store is not None:  # kept with the answer: a cache hit names the response it reuses
                    store.put(ckey, model, message, p_tok, c_tok)
                cost = cost_usd(model, p_tok, c_tok)
                return message, Usage(calls=1, prompt_tokens=p_tok, completion_tokens=c_tok, cost_usd=cost)
        if attempt + 1 < retry.attempts:
            # Jitter avoids synchronized retry storms across concurrent conversations.
            delay = wait if wait is not None else retry.base_wait * (2**attempt) * (1 + random.random() / 4)
            async with away():
                await asyncio.sleep(min(delay, retry.max_wait))
    assert last is not None
    raise LLMCallError(
        last.endpoint, last.status, f"{last.message} (gave up after {retry.attempts} attempts)"
    )


@dataclass(frozen=True)
class _Retry:
    """How a failed call is retried: USERSIM_LLM_MAX_ATTEMPTS, _BACKOFF_S, _MAX_WAIT_S (read per
    call, so a changed environment applies to the next call)."""

    attempts: int
    base_wait: float
    max_wait: float

    @classmethod
    def from_env(cls) -> _Retry:
        return cls(
            attempts=max(1, int(_env_float("USERSIM_LLM_MAX_ATTEMPTS", 4))),
            base_wait=_env_float("USERSIM_LLM_BACKOFF_S", 0.5),
            max_wait=_env_float("USERSIM_LLM_MAX_WAIT_S", 60.0),
        )


async def chat_completion(*, model: str, role: str = "agent", **kwargs: Any) -> tuple[dict[str, Any], Usage]:
    """One chat-completions call -> (assistant message dict in OpenAI format, Usage); see
    `_chat_completion` for the parameters. Timed as a `chat` span of the conversation's timeline
    (model, role, tokens, whether the cache answered; the error's type when it failed)."""
    with timeline.span("chat", model, role=role) as extra:
        ahead_s = None
        if ahead.pending():  # a run's first request may have been sent ahead (llm.ahead)
            key = ahead.call_key(model, role, kwargs, _resolved(role, kwargs))
            (message, usage), ahead_s = await ahead.answer(
                key, lambda: _chat_completion(model=model, role=role, **kwargs)
            )
        else:
            message, usage = await _chat_completion(model=model, role=role, **kwargs)
        message = dict(message)
        served = message.pop(_SERVED, None) or {}
        provider, address, port = endpoint_of(resolve_endpoint(kwargs.get("base_url"), None)[0])
        extra.update(
            provider=provider,
            response_model=served.get("response_model"),
            response_id=served.get("response_id"),
            server_address=None if _fakes else address,
            server_port=None if _fakes else port,
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            cached=bool(usage.cached_calls) or None,
            tool_calls=len(message.get("tool_calls") or []) or None,
            # the span times this caller's wait; the request had left this many seconds earlier
            sent_ahead_s=round(ahead_s, 3) if ahead_s is not None else None,
        )
        return message, usage


def _resolved(role: str, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What the environment adds to a call's arguments (for llm.ahead's comparison): the endpoint
    and key, the default answer limit and timeout, and which fake model answers, if any."""
    url, key = resolve_endpoint(kwargs.get("base_url"), kwargs.get("api_key"))
    limit = os.environ.get(f"USERSIM_MAX_TOKENS_{role.upper()}")
    fake = id(_fakes[-1]) if _fakes else None
    return url, key, limit, os.environ.get("USERSIM_LLM_TIMEOUT_S"), fake
