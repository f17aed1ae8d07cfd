"""Judge tests never touch the user's LLM cache and close pooled HTTP clients after each test."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_llm_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("USERSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("USERSIM_NO_CACHE", raising=False)


@pytest.fixture(autouse=True)
async def _close_pooled_clients():
    yield
    from adapters.openai_client import aclose_clients

    await aclose_clients()
