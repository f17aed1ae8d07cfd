"""Fixtures for adapter tests: the OpenAI stub server and the scripted fake model."""

from __future__ import annotations

from tests.support.fake_model import fake_model  # noqa: F401  (fixture)
from tests.support.openai_stub import openai_stub  # noqa: F401  (fixture)
