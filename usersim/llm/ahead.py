"""One model call sent ahead of the code that will make it, its reply handed to that code.

A run's first model request waits on the network for as long as the model takes; importing the
conversation graph (langgraph and langchain-core, about a second of CPU) needs no network. So the
run builds its first conversation's first request with the adapter's own code and sends it ahead
(`send_ahead`) while the graph imports; when the graph's node then makes its request, `answer`
compares it with the one sent ahead and, when they are the same call, hands over that call's
outcome instead of sending it again:

* the same call: the same model, role, messages, tools, parameters, endpoint and key (resolved from
  the environment as the call would), timeout, cache switch and sample index — compared whole, so
  a prediction that was wrong in any byte is never answered with the wrong reply;
* the call sent ahead is an ordinary `chat_completion`: the cache (a hit answers at once, a reply
  is stored), rate limits, retries, errors and redaction are the client's own; its reply and usage,
  or its `LLMCallError`, reach the node as that call's would;
* one shot: the first call that reaches `answer` after sending ahead decides. A different call drops
  the one sent ahead (cancelled if still waiting; the model may still bill it: one wasted call) and
  is sent as usual. So does the end of the run (`discard`) when no call came.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from usersim.core.events import Usage
from usersim.core.turns import away

log = logging.getLogger(__name__)

Outcome = tuple[dict[str, Any], Usage]


class Sent(Exception):
    """Raised inside the adapter's code once its model call is on its way (sending ahead only needs
    the call, not the adapter's handling of the reply)."""


@dataclass
class Ahead:
    """The call sent ahead: its key and the task that makes it, on the run's event loop."""

    loop: asyncio.AbstractEventLoop
    key: bytes
    task: asyncio.Task[Outcome]
    sent: float = field(default_factory=time.perf_counter)


_sending: ContextVar[bool] = ContextVar("usersim_send_ahead", default=False)
_ahead: Ahead | None = None


def pending() -> bool:
    """Whether `answer` has anything to do (a call sent ahead waits, or one is being sent): one
    global and one context lookup on every model call."""
    return _ahead is not None or _sending.get()


async def send_ahead(adapter_call: Awaitable[Any]) -> bool:
    """Run `adapter_call` (e.g. the agent's `respond` for the first step) until its first model call,
    start that call and stop the adapter there. True when a call is now on its way."""
    global _ahead
    discard()
    token = _sending.set(True)
    try:
        await adapter_call
    except Sent:
        return _ahead is not None
    except Exception as exc:  # noqa: BLE001 - the conversation itself will meet (and record) the problem
        log.debug("nothing sent ahead: %s: %s", type(exc).__name__, exc)
    finally:
        _sending.reset(token)
    return False


async def answer(
    key: bytes, call: Callable[[], Coroutine[Any, Any, Outcome]]
) -> tuple[Outcome, float | None]:
    """The outcome of the model call `key` (see `call_key`): while sending ahead, `call` starts as a
    task and `Sent` stops the adapter; the first call after that is answered by the call sent ahead
    when it is the same, else sent itself. The second value: seconds the call had been on its way
    before it was asked for (None when it was not sent ahead)."""
    global _ahead
    loop = asyncio.get_running_loop()
    if _sending.get():
        quiet = contextvars.copy_context()  # the call itself is not sending ahead
        quiet.run(_sending.set, False)
        _ahead = Ahead(loop, key, loop.create_task(call(), context=quiet))
        raise Sent
    ahead, _ahead = _ahead, None
    if ahead is not None and ahead.loop is loop:
        if ahead.key == key:
            waited = time.perf_counter() - ahead.sent
            async with away():  # as the client does for any request: the others take their turns
                return await ahead.task, waited
        _drop(ahead, "the conversation's first model call differs from the one sent ahead")
    return await call(), None


def discard() -> None:
    """Drop a call sent ahead that nobody asked for (the end of a run, a new run)."""
    global _ahead
    ahead, _ahead = _ahead, None
    if ahead is not None:
        _drop(ahead, "no model call asked for it")


def _drop(ahead: Ahead, why: str) -> None:
    task = ahead.task
    if task.done():
        if not task.cancelled():
            task.exception()  # retrieved: a failed call nobody used is not an unhandled error
    elif not ahead.loop.is_closed():
        task.cancel()
    log.warning("usersim: the model request sent ahead was not used (%s): one extra model call", why)


def call_key(model: str, role: str, kwargs: dict[str, Any], resolved: tuple[Any, ...]) -> bytes:
    """What makes two `chat_completion` calls the same call: every argument as it would be sent
    (messages as their wire dicts, keys in their order) and `resolved` (the endpoint, key and
    default limits the environment gives), as one JSON text compared byte for byte."""
    import orjson

    from usersim.core.messages import Message

    args = {name: kwargs[name] for name in sorted(kwargs)}
    if "messages" in args:
        args["messages"] = [m.to_openai() if isinstance(m, Message) else dict(m) for m in args["messages"]]
    try:
        return orjson.dumps([model, role, list(resolved), args], default=repr)
    except TypeError:  # what orjson cannot encode (an int beyond 64 bits ...)
        import json

        return json.dumps([model, role, list(resolved), args], default=repr).encode()
