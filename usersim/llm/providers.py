"""Who serves an OpenAI-compatible endpoint, as the GenAI semantic conventions name it
(`gen_ai.provider.name`), and where it is (`server.address`, `server.port`): the table is data
(providers.yaml)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from usersim.core.yamlfile import read_yaml

_TABLE = Path(__file__).with_name("providers.yaml")
DEFAULT_PROVIDER = "openai"  # the protocol every usersim model call speaks


@lru_cache(maxsize=1)
def _hosts() -> dict[str, str]:
    data = read_yaml(_TABLE)[0] or {}
    if not isinstance(data, dict):
        raise ValueError(f"{_TABLE}: expected host: provider lines")
    return {str(k).lower(): str(v) for k, v in data.items()}


@lru_cache(maxsize=64)
def endpoint_of(base_url: str) -> tuple[str, str | None, int | None]:
    """(provider name, server address, server port) of a base URL; the port is the scheme's
    default when the URL names none."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    provider = next(
        (p for h, p in _hosts().items() if host == h or (h.startswith(".") and host.endswith(h))),
        DEFAULT_PROVIDER,
    )
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:  # a malformed port: the call itself reports it
        port = None
    return provider, host or None, port
