"""Shared test fixtures: an isolated LLM cache per test and pooled HTTP clients closed afterwards."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_llm_cache(tmp_path, monkeypatch):
    """Every test gets its own LLM cache directory, so cached answers never leak between tests."""
    monkeypatch.setenv("USERSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("USERSIM_NO_CACHE", raising=False)


@pytest.fixture(autouse=True)
async def _close_pooled_clients():
    """Close the pooled aiohttp sessions of the test's event loop (no 'Unclosed session' noise)."""
    yield
    from usersim.llm.client import aclose_clients

    await aclose_clients()
