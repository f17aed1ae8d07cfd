"""A small SQLite-backed cache of chat-completion calls, so reruns are free and reproducible.

The key is the sha256 of the canonical JSON of (model, base_url, messages, tools, params, seed-salt);
the value is the assistant message dict plus the token usage of the original call.

Location: `$USERSIM_CACHE_DIR/llm_cache.sqlite` (default `.usersim_cache/` in the working
directory). Set `USERSIM_NO_CACHE=1` to disable it for a run.

A cache is only an optimisation, so it never stops a run: a corrupt file is moved aside
(`llm_cache.sqlite.corrupt-<time>`) with a warning and a fresh one started; a cache that cannot be
opened or written (read-only, disk full, locked) is skipped with a warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

DEFAULT_DIR = ".usersim_cache"
log = logging.getLogger("usersim.llm.cache")
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
    sample: int = 0,
) -> str:
    """sha256 over the canonical JSON of everything that determines the model's answer.

    `sample` is the index of a repeated sample of the same request (judge samples): each index has
    its own key, so K samples are K cached answers; index 0 keeps the key of a single call."""
    payload: dict[str, Any] = {
        "model": model,
        "base_url": base_url.rstrip("/"),
        "messages": messages,
        "tools": tools or [],
        "params": {k: v for k, v in sorted(params.items()) if v is not None},
        "salt": salt,
    }
    if sample:
        payload["sample"] = sample
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _is_corrupt(exc: BaseException) -> bool:
    """A damaged or foreign file (as opposed to a locked, read-only or full one)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and (
        not isinstance(exc, sqlite3.OperationalError)
        or "malformed" in text
        or "not a database" in text
        or "no such table" in text
    )


class LLMCache:
    """Thread-safe get/put over one SQLite file (WAL, so several processes may share it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._warned = False
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise
            self._move_aside(exc)
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.execute(
                "SELECT key, message, prompt_tokens, completion_tokens FROM llm_calls LIMIT 1"
            ).fetchall()
            conn.commit()
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def _move_aside(self, exc: BaseException) -> None:
        """Rename the damaged file (and its WAL/SHM companions) out of the way, with a warning."""
        aside = self.path.with_name(
            f"{self.path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        )
        try:
            os.replace(self.path, aside)
        except OSError:
            aside = None
        for suffix in ("-wal", "-shm"):
            companion = self.path.with_name(self.path.name + suffix)
            if companion.exists():
                try:
                    os.replace(companion, (aside or self.path).with_name((aside or self.path).name + suffix))
                except OSError:
                    companion.unlink(missing_ok=True)
        log.warning(
            "LLM cache %s is corrupt (%s); %s and starting an empty cache",
            self.path,
            str(exc)[:120],
            f"moved it to {aside}" if aside else "could not move it",
        )

    def _recover(self, exc: sqlite3.Error) -> None:
        """Called with the lock held after a failed statement: corrupt -> fresh file; else warn once."""
        if _is_corrupt(exc):
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._move_aside(exc)
            try:
                self._conn = self._open()
                return
            except sqlite3.Error as again:
                exc = again
        if not self._warned:
            self._warned = True
            log.warning("LLM cache %s is not usable (%s); calls go uncached", self.path, str(exc)[:120])

    def get(self, key: str) -> tuple[dict[str, Any], int, int] | None:
        """(message, prompt_tokens, completion_tokens) or None (also for an unreadable entry)."""
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT message, prompt_tokens, completion_tokens FROM llm_calls WHERE key = ?", (key,)
                ).fetchone()
            except sqlite3.Error as exc:
                self._recover(exc)
                return None
        if row is None:
            return None
        try:
            message = json.loads(row[0])
            hit = message, int(row[1]), int(row[2])
        except (TypeError, ValueError):
            return None
        return hit if isinstance(message, dict) else None

    def put(
        self, key: str, model: str, message: dict[str, Any], prompt_tokens: int, completion_tokens: int
    ) -> None:
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO llm_calls (key, model, message, prompt_tokens, completion_tokens) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (key, model, json.dumps(message, ensure_ascii=False), prompt_tokens, completion_tokens),
                )
                self._conn.commit()
            except sqlite3.Error as exc:
                self._recover(exc)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


_caches: dict[Path, LLMCache | None] = {}
_caches_lock = threading.Lock()


def get_cache() -> LLMCache | None:
    """The cache for the current USERSIM_CACHE_DIR, or None when caching is disabled."""
    if not cache_enabled():
        return None
    path = (cache_dir() / "llm_cache.sqlite").resolve()
    with _caches_lock:
        if path not in _caches:
            try:
                _caches[path] = LLMCache(path)
            except (OSError, sqlite3.Error) as exc:
                log.warning("LLM cache %s cannot be opened (%s); calls go uncached", path, str(exc)[:120])
                _caches[path] = None
        return _caches[path]
