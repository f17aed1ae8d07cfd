"""A small SQLite-backed cache of chat-completion calls, so reruns are free and reproducible.

The key is the sha256 of the canonical JSON of (model, base_url, messages, tools, params, seed-salt);
the value is the assistant message dict plus the token usage of the original call.

Location: `$USERSIM_CACHE_DIR/llm_cache.sqlite` (default `.usersim_cache/` in the working
directory). Set `USERSIM_NO_CACHE=1` to disable it for a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

DEFAULT_DIR = ".usersim_cache"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    message TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
)
"""


def cache_enabled() -> bool:
    """False when USERSIM_NO_CACHE is set to a truthy value."""
    return os.environ.get("USERSIM_NO_CACHE", "").strip().lower() not in {"1", "true", "yes", "on"}


def cache_dir() -> Path:
    return Path(os.environ.get("USERSIM_CACHE_DIR") or DEFAULT_DIR)


def cache_key(
    *,
    model: str,
    base_url: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
    salt: Any = None,
) -> str:
    """sha256 over the canonical JSON of everything that determines the model's answer."""
    payload = {
        "model": model,
        "base_url": base_url.rstrip("/"),
        "messages": messages,
        "tools": tools or [],
        "params": {k: v for k, v in sorted(params.items()) if v is not None},
        "salt": salt,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLMCache:
    """Thread-safe get/put over one SQLite file (WAL, so several processes may share it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    def get(self, key: str) -> tuple[dict[str, Any], int, int] | None:
        """(message, prompt_tokens, completion_tokens) or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT message, prompt_tokens, completion_tokens FROM llm_calls WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return json.loads(row[0]), int(row[1]), int(row[2])

    def put(
        self, key: str, model: str, message: dict[str, Any], prompt_tokens: int, completion_tokens: int
    ) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO llm_calls (key, model, message, prompt_tokens, completion_tokens) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, model, json.dumps(message, ensure_ascii=False), prompt_tokens, completion_tokens),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


_caches: dict[Path, LLMCache] = {}
_caches_lock = threading.Lock()


def get_cache() -> LLMCache | None:
    """The cache for the current USERSIM_CACHE_DIR, or None when caching is disabled."""
    if not cache_enabled():
        return None
    path = (cache_dir() / "llm_cache.sqlite").resolve()
    with _caches_lock:
        if path not in _caches:
            _caches[path] = LLMCache(path)
        return _caches[path]
