"""Keep API keys out of results, transcripts, reports and logs."""

from __future__ import annotations

import os
import re

_KEY_PARAM = re.compile(r"(?i)(api[_-]?key|token|secret|authorization)=([^&\s\"']+)")
_BEARER = re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-]{8,}")
_SK = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")


def _secret_values() -> list[str]:
    vals = []
    for name, value in os.environ.items():
        if value and len(value) >= 8 and re.search(r"(?i)(api_?key|token|secret)", name):
            vals.append(value)
    return sorted(vals, key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with secret env values, `api_key=...` parameters and bearer/sk- tokens masked."""
    if not text:
        return text
    for value in _secret_values():
        text = text.replace(value, "***")
    text = _KEY_PARAM.sub(lambda m: f"{m.group(1)}=***", text)
    text = _BEARER.sub("Bearer ***", text)
    return _SK.sub("sk-***", text)
