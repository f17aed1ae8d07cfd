"""Fixtures for adapter tests: the OpenAI stub server, the scripted fake model, an isolated cache."""

from __future__ import annotations

import pytest

from tests.support.fake_model import fake_model  # noqa: F401  (fixture)
from tests.support.openai_stub import openai_stub  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _isolated_llm_cache(tmp_path, monkeypatch):
    """Every test gets its own LLM cache directory, so cached answers never leak between tests."""
    monkeypatch.setenv("USERSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("USERSIM_NO_CACHE", raising=False)


@pytest.fixture(autouse=True)
async def _close_pooled_clients():
    """Close the pooled aiohttp sessions of the test's event loop (no 'Unclosed session' noise)."""
    yield
    from adapters.openai_client import aclose_clients

    await aclose_clients()
