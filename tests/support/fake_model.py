"""A scripted fake chat model (no HTTP) for unit tests of code that calls `chat_completion`.

    fake = ScriptedChatModel(["Hello", {"tool_calls": [...]}, LLMCallError("x", 500, "boom")])
    with use_fake_model(fake):
        message, usage = await chat_completion(model="m", messages=[...])
    fake.calls  # [{"model", "messages", "tools", "params"}] in order

Script items are consumed in order: a string is a text reply, a dict is an assistant message
(OpenAI format; `tool_calls` arguments may be dicts), an exception instance is raised. When the
script runs out, `responder(call) -> item` answers if given, else the model fails loudly so a
test never passes on an unexpected extra call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.openai_stub import openai_tool_calls
from usersim.core.events import Usage
from usersim.llm.client import use_fake_model

Item = str | dict[str, Any] | BaseException


class ScriptedChatModel:
    """Implements adapters.openai_client.FakeChatModel."""

    def __init__(
        self, script: list[Item] | None = None, *, responder: Callable[[dict[str, Any]], Item] | None = None
    ):
        self.script: list[Item] = list(script or [])
        self.responder = responder
        self.calls: list[dict[str, Any]] = []

    def add(self, *items: Item) -> ScriptedChatModel:
        self.script.extend(items)
        return self

    async def complete(
        self, *, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, **params: Any
    ) -> tuple[dict[str, Any], Usage]:
        call = {"model": model, "messages": messages, "tools": tools, "params": params}
        self.calls.append(call)
        if self.script:
            item = self.script.pop(0)
        elif self.responder is not None:
            item = self.responder(call)
        else:
            raise AssertionError(f"ScriptedChatModel: unexpected call #{len(self.calls)} to model '{model}'")
        if isinstance(item, BaseException):
            raise item
        message = _as_message(item)
        prompt = len(json.dumps(messages, ensure_ascii=False)) // 4
        completion = len(message.get("content") or "") // 4 + 10 * len(message.get("tool_calls", []))
        return message, Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion)


def _as_message(item: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "assistant", "content": item}
    message = {"role": "assistant", "content": item.get("content") or ""}
    calls = openai_tool_calls(item.get("tool_calls") or [], "fake_call")
    if calls:
        message["tool_calls"] = calls
    return message


@pytest.fixture
def fake_model() -> Iterator[ScriptedChatModel]:
    """A ScriptedChatModel installed for the duration of the test (add replies with .add(...))."""
    fake = ScriptedChatModel()
    with use_fake_model(fake):
        yield fake
