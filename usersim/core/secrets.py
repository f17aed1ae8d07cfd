"""Keep API keys out of results, transcripts, reports and logs (one place for every caller)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

_SECRET_NAME = re.compile(
    r"api[_-]?key|token(?!s|izer)|secret|password|passwd|authorization|bearer", re.IGNORECASE
)
_KEY_PARAM = re.compile(r"(?i)(api[_-]?key|token|secret|authorization)=([^&\s\"']+)")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{6,}")
_BEARER_WORD = re.compile(r"(?i)bearer")  # what _BEARER needs: one scan for the word, most texts lack it
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")
_URL_CREDENTIALS = re.compile(r"(//)[^/@\s]+:[^/@\s]+@")
_SECRET_VALUE = re.compile(r"^(sk-|Bearer\s)", re.IGNORECASE)


_env_seen: dict[Any, Any] | None = None
_env_values: tuple[str, ...] = ()


def env_secrets() -> list[str]:
    """Values of secret-named environment variables (OPENAI_API_KEY ...), longest first.

    Computed again only when the environment changed: redact() runs on every recorded string, and
    scanning every variable name each time was a tenth of a conversation's CPU. The environment is
    compared with a copy of it taken at the last scan (a C-level dict comparison that allocates
    nothing; setting, changing or deleting any variable makes it differ)."""
    global _env_seen, _env_values
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict) or raw != _env_seen:
        vals = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and v and len(v) >= 8]
        _env_values = tuple(sorted(vals, key=len, reverse=True))
        _env_seen = dict(raw) if isinstance(raw, dict) else None
    return list(_env_values)


def _has_key_param(text: str) -> bool:
    """Whether _KEY_PARAM matches somewhere in `text`, looking only around each "=" that follows a
    name's last letter (y, n, t): a match is a name of at most 13 letters, "=", one more character.
    A report page holds thousands of "=" (its attributes); scanning the whole page with the pattern
    took about a millisecond per conversation shown."""
    i = text.find("=")
    while i >= 0:
        if i and text[i - 1] in "yYnNtT" and _KEY_PARAM.search(text, max(0, i - 13), i + 2):
            return True
        i = text.find("=", i + 1)
    return False


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """`text` with secret env values, the `extra` secrets, `api_key=...` parameters, bearer/sk- tokens
    and URL credentials masked."""
    if not text:
        return text
    env_secrets()  # refreshes _env_values when the environment changed
    for value in (*(s for s in extra if s and len(s) >= 4), *_env_values):
        text = text.replace(value, "***")
    # each pattern below needs its own text: the scans that cannot match are skipped
    if "=" in text and _has_key_param(text):
        text = _KEY_PARAM.sub(lambda m: f"{m.group(1)}=***", text)
    if _BEARER_WORD.search(text):
        text = _BEARER.sub(r"\1***", text)
    if "sk-" in text:
        text = _SK.sub("sk-***", text)
    return _URL_CREDENTIALS.sub(r"\1***@", text) if "@" in text else text


def redact_value(value: Any) -> Any:
    """A deep copy of `value` with secret-named keys' values and secret-looking strings masked."""
    if isinstance(value, dict):
        return {k: "***" if _SECRET_NAME.search(str(k)) and v else redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    if isinstance(value, str):
        return "***" if _SECRET_VALUE.match(value) else redact(value)
    return value
