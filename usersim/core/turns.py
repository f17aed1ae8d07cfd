"""Turn-taking among the conversations of a run: one at a time on the CPU, all at once on the network.

A run's conversations share one event loop. When many model replies land together, asyncio shares
the loop among all of them, so every conversation finishes its step only when the whole batch has,
and their next requests leave together again: the batch stays in step for the rest of the run, and
each step of each conversation waits for all the others (at 128 conversations and 1 s latency, a
tenth of the run). Taking turns instead — first come, first served — lets each conversation finish
its step at once and send its next request while the others wait their turn, so a batch spreads
out by itself.

A conversation holds the run's `Turns` while it computes (`conversation()`) and steps aside while it
waits (`away()`): usersim's model client steps aside for every request, retry pause and rate-limit
wait. A component that may wait on anything else (a user's own agent, a plugin judge) is called
inside `away_unless(component)`: only components that declare `cooperative = True` — their only
waits are usersim's own model calls — keep the turn while they compute.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any


class _Hold:
    """One conversation's claim on the run's turn lock; `away` counts the waits under way (a
    conversation may wait on several model calls at once, e.g. judges)."""

    def __init__(self, lock: asyncio.Lock) -> None:
        self.lock = lock
        self.away = 0
        self.held = False
        self.ended = False  # the conversation is over: a wait of a task it left behind ends turnless

    async def take(self) -> None:
        if self.ended:
            return
        await self.lock.acquire()
        if self.ended:  # it ended while this waited in line
            self.lock.release()
            return
        self.held = True

    def give(self) -> None:
        if self.held:
            self.held = False
            self.lock.release()


_hold: ContextVar[_Hold | None] = ContextVar("usersim_turn", default=None)


class Turns:
    """The turn lock of one run (asyncio.Lock serves waiters first come, first served)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def conversation(self) -> AsyncIterator[None]:
        """Run one conversation inside: it computes only when it has the turn."""
        hold = _Hold(self._lock)
        await hold.take()
        token = _hold.set(hold)
        try:
            yield
        finally:
            _hold.reset(token)
            hold.ended = True
            hold.give()


@contextlib.asynccontextmanager
async def away() -> AsyncIterator[None]:
    """Wait inside without the turn (a no-op outside a conversation that takes turns)."""
    hold = _hold.get()
    if hold is None:
        yield
        return
    hold.away += 1
    if hold.away == 1:
        hold.give()
    try:
        yield
    finally:
        hold.away -= 1
        if hold.away == 0:
            await hold.take()


def away_unless(component: Any) -> contextlib.AbstractAsyncContextManager[None]:
    """`away()` for a component that may wait on more than usersim's model calls."""
    return contextlib.nullcontext() if getattr(component, "cooperative", False) else away()
