"""Helpers: build Case objects directly (the seeds' exact intercept JSON) and call the sandbox."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from usersim.cases.schema import Case
from usersim.core.events import ToolEvent
from usersim.sandbox.base import Sandbox, open_sandbox


def make_case(**fields: Any) -> Case:
    """A minimal valid static case; `fields` override/extend it."""
    data: dict[str, Any] = {
        "id": "T-SANDBOX",
        "dimension": "C2",
        "title": "sandbox test",
        "input": {"message": "测试"},
        "judging": {"scoring": {"methods": ["auto"]}},
    }
    data.update(fields)
    return Case.model_validate(data)


def intercept_case(*seed_json: str, **fields: Any) -> Case:
    """A case whose tool_intercepts are the seed's JSON text, parsed verbatim."""
    return make_case(tool_intercepts=[json.loads(s) for s in seed_json], **fields)


def call(sb: Sandbox, name: str, args: dict[str, Any], turn: int = 1) -> ToolEvent:
    return asyncio.run(sb.call(name, args, turn=turn))


def result_json(event: ToolEvent) -> Any:
    return json.loads(event.result)


@pytest.fixture
def sandbox() -> Sandbox:
    """A sandbox on the default tool set, today = 2026-04-07, no intercepts."""
    return open_sandbox(make_case())
