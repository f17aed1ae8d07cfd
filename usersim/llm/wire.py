"""A thin HTTP client for the OpenAI wire format on aiohttp: JSON bytes out, parsed JSON back.

The hot path of every agent, simulator and judge call. The `openai` package's request pipeline
(httpx request model, header and option merging, the aiohttp transport adapter, response wrappers)
cost about 1.6 ms of CPU per call on the bench machine beside 0.45 ms for the same bytes posted
over one aiohttp session, and the harness's whole budget is 3 ms per call. So usersim posts the
request itself; what the SDK gave us is kept here or in `llm.client`:

* one pooled session per (event loop, endpoint, key): aiohttp sessions must not cross loops;
  up to 1000 connections like the SDK, keep-alive, the system trust store (SSL_CERT_FILE /
  SSL_CERT_DIR honoured), HTTP(S)_PROXY / NO_PROXY from the environment (read once per
  session), redirects followed;
* the SDK's headers that servers read: `Authorization: Bearer`, `OpenAI-Organization` /
  `OpenAI-Project` from OPENAI_ORG_ID / OPENAI_PROJECT_ID, JSON content type;
* the timeout per phase as the SDK sets it (connect, pool wait, each read);
* failures as three exceptions the caller maps to `LLMCallError`: `StatusError` (HTTP status,
  headers for Retry-After, the server's message), `WireTimeout`, `WireConnectionError`.
  Their text never carries the key (the caller redacts too).

aiohttp is imported inside the functions: modules that import this one stay cheap to import.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import orjson

if TYPE_CHECKING:
    import aiohttp

MAX_CONNECTIONS = 1000  # the openai SDK's default pool size: a run at --concurrency 512 never queues
USER_AGENT = "usersim-harness"


class WireError(Exception):
    """A request that got no usable HTTP answer."""


class StatusError(WireError):
    """The server answered with an error status. `message` is its own words (the OpenAI error body's
    `error.message`, else the start of the body)."""

    def __init__(self, status: int, message: str, headers: dict[str, str], body: Any) -> None:
        super().__init__(message)
        self.status_code = status
        self.message = message
        self.headers = headers
        self.body = body


class WireTimeout(WireError):
    """No answer within the timeout (connect, pool wait or a read)."""


class WireConnectionError(WireError):
    """The connection failed: refused, reset, closed mid-answer, DNS, TLS."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every session (the system trust store; SSL_CERT_FILE / SSL_CERT_DIR are
    honoured): building a context loads the CA store, a few ms per session otherwise."""
    return ssl.create_default_context()


@functools.lru_cache(maxsize=256)
def endpoint_url(base_url: str, path: str) -> str:
    """`path` under `base_url`, keeping a query string of the base (`...?api-version=...`) last."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + path.lstrip("/")))


def _headers(api_key: str) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
    }
    if org := os.environ.get("OPENAI_ORG_ID"):
        headers["OpenAI-Organization"] = org
    if project := os.environ.get("OPENAI_PROJECT_ID"):
        headers["OpenAI-Project"] = project
    return headers


def _server_words(status: int, raw: bytes) -> tuple[str, Any]:
    """(message, parsed body) of an error answer: an OpenAI error body's message, else its text."""
    try:
        body: Any = orjson.loads(raw)
    except ValueError:
        body = raw.decode("utf-8", "replace")
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return str(err["message"]), body
    if isinstance(err, str) and err:
        return err, body
    text = body if isinstance(body, str) else raw.decode("utf-8", "replace")
    return f"Error code: {status}" + (f" - {text.strip()[:300]}" if text.strip() else ""), body


@functools.lru_cache(maxsize=64)
def _timeout(seconds: float) -> aiohttp.ClientTimeout:
    """The SDK's timeout per phase: connect, waiting for a pooled connection, each read."""
    import aiohttp

    return aiohttp.ClientTimeout(sock_connect=seconds, sock_read=seconds, connect=seconds)


class WireClient:
    """Requests to one endpoint with one key, on a pooled aiohttp session of the running loop."""

    def __init__(self, base_url: str, api_key: str) -> None:
        self.base_url = base_url
        self._headers = _headers(api_key)
        self._session: aiohttp.ClientSession | None = None
        self._proxy: tuple[str, aiohttp.BasicAuth | None] | None = None

    def _env_proxy(self) -> tuple[str, aiohttp.BasicAuth | None] | None:
        """HTTP(S)_PROXY / NO_PROXY for this endpoint, read once: aiohttp's trust_env looks them up
        (and .netrc) in a worker thread on every request, two thread hops per call."""
        import urllib.request

        import aiohttp

        parts = urlsplit(self.base_url)
        if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
            return None
        proxy = urllib.request.getproxies().get(parts.scheme)
        if not proxy:
            return None
        from yarl import URL

        url = URL(proxy if "://" in proxy else f"http://{proxy}")
        auth = aiohttp.BasicAuth(url.user, url.password or "") if url.user else None
        return str(url.with_user(None)), auth

    def _open(self) -> aiohttp.ClientSession:
        """The session (made on first use: importing aiohttp and loading the CA store take a while,
        which a caller timing the request itself should not count)."""
        if self._session is None or self._session.closed:
            import aiohttp

            # ssl left to aiohttp: its verified default context (the system trust store, SSL_CERT_FILE /
            # SSL_CERT_DIR honoured) is built when aiohttp is imported; a second one here loaded the CA
            # store again (~0.1 s of CPU before a run's first request)
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS)
            self._session = aiohttp.ClientSession(connector=connector, headers=self._headers)
            self._proxy = self._env_proxy()
        return self._session

    async def request(self, method: str, path: str, *, body: bytes | None, timeout: float) -> Any:
        """Send one request; the answer's JSON (or its text, when it is not JSON) for a 2xx status.
        Raises StatusError, WireTimeout or WireConnectionError."""
        import aiohttp

        session = self._open()
        limits = _timeout(timeout)
        proxy, proxy_auth = self._proxy or (None, None)
        try:
            async with session.request(
                method,
                endpoint_url(self.base_url, path),
                data=body,
                timeout=limits,
                proxy=proxy,
                proxy_auth=proxy_auth,
            ) as resp:
                raw = await resp.read()
                status = resp.status
                if status >= 400:
                    message, parsed = _server_words(status, raw)
                    headers = {k.lower(): v for k, v in resp.headers.items()}
                    raise StatusError(status, message, headers, parsed)
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise WireTimeout(str(exc) or "timed out") from None
        except aiohttp.ClientError as exc:
            raise WireConnectionError(str(exc) or type(exc).__name__) from None
        try:
            return orjson.loads(raw)
        except ValueError:  # not JSON: the caller says what came instead
            return raw.decode("utf-8", "replace")

    async def post(self, path: str, body: bytes, timeout: float) -> Any:
        """POST a JSON body (bytes, already serialized)."""
        return await self.request("POST", path, body=body, timeout=timeout)

    async def get(self, path: str, timeout: float) -> Any:
        return await self.request("GET", path, body=None, timeout=timeout)

    def ready(self) -> WireClient:
        """This client with its session made (see _open)."""
        self._open()
        return self

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


# One client per (event loop, endpoint, key): aiohttp sessions must not cross event loops.
_clients: dict[tuple[int, str, str], tuple[asyncio.AbstractEventLoop, WireClient]] = {}


def client_for(base_url: str, api_key: str) -> WireClient:
    """The pooled client of this endpoint and key in the running event loop."""
    loop = asyncio.get_running_loop()
    key = (id(loop), base_url, api_key)
    hit = _clients.get(key)
    if hit is not None and hit[0] is loop:
        return hit[1]
    for k, (lp, _) in list(_clients.items()):  # loops that ended: their sessions are gone with them
        if lp.is_closed():
            del _clients[k]
    client = WireClient(base_url, api_key)
    _clients[key] = (loop, client)
    return client


async def aclose() -> None:
    """Close the pooled sessions of the running event loop."""
    loop = asyncio.get_running_loop()
    for k, (lp, client) in list(_clients.items()):
        if lp is loop:
            del _clients[k]
            await client.close()
