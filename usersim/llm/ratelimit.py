"""Per-endpoint request rate limits, so many concurrent conversations stay under a provider's RPM.

Configured with USERSIM_RATE_LIMITS, a comma-separated list of `HOST=REQUESTS_PER_MINUTE`
(e.g. `api.openai.com=500,127.0.0.1:8000=60`; `*=N` applies to every other endpoint). No entry means
no limit: local servers are usually faster unthrottled.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from urllib.parse import urlparse


class RateLimiter:
    """A token bucket: at most `per_minute` acquisitions a minute, bursts up to a tenth of that."""

    def __init__(self, per_minute: float):
        if per_minute <= 0:
            raise ValueError("a rate limit must be a positive number of requests per minute")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute / 10.0)
        self.tokens = self.capacity
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) / self.rate)


@functools.lru_cache(maxsize=16)
def _limits(text: str) -> dict[str, float]:
    return parse_limits(text)


@functools.lru_cache(maxsize=256)
def _host(base_url: str) -> str:
    return urlparse(base_url).netloc


def parse_limits(text: str) -> dict[str, float]:
    """`host=rpm,...` -> {host: rpm}; a malformed entry raises naming it."""
    limits: dict[str, float] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        host, sep, value = item.partition("=")
        try:
            limits[host.strip()] = float(value)
            if not sep or limits[host.strip()] <= 0:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"USERSIM_RATE_LIMITS: bad entry '{item}' (expected HOST=REQUESTS_PER_MINUTE)"
            ) from None
    return limits


_limiters: dict[tuple[int, str], RateLimiter] = {}


def limiter_for(base_url: str) -> RateLimiter | None:
    """The limiter of this endpoint in the running event loop, or None when it is unlimited."""
    text = os.environ.get("USERSIM_RATE_LIMITS", "")
    if not text:  # the common case: no limits, nothing to parse on every call
        return None
    limits = _limits(text)  # parsed once per setting (callers never change the dict)
    host = _host(base_url)
    rpm = limits.get(host, limits.get("*"))
    if rpm is None:
        return None
    key = (id(asyncio.get_running_loop()), host)
    if key not in _limiters or _limiters[key].rate != rpm / 60.0:
        _limiters[key] = RateLimiter(rpm)
    return _limiters[key]
