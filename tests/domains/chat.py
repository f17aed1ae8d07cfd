"""What the test-domain agents share: reading an OpenAI-format conversation, answering in it."""

from __future__ import annotations

import json
from typing import Any


def read(messages: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """(the (role, text) turns of user and assistant, each tool's last successful result by name)."""
    turns, results, names = [], {}, {}
    for m in messages:
        if m["role"] in ("user", "assistant") and m.get("content"):
            turns.append((m["role"], m["content"]))
        for tc in m.get("tool_calls") or []:
            names[tc["id"]] = tc["function"]["name"]
        if m["role"] == "tool" and not (m.get("content") or "").startswith("Error"):
            results[names.get(m.get("tool_call_id"), "")] = json.loads(m["content"])
    return turns, results


def answer(turns: list[tuple[str, str]], question: str) -> str | None:
    """What the user said right after the agent last said exactly `question`."""
    for i in range(len(turns) - 1, -1, -1):
        if turns[i][0] == "assistant" and turns[i][1] == question:
            return next((t for r, t in turns[i + 1 :] if r == "user"), None)
    return None


def call(messages: list[dict[str, Any]], name: str, **args: Any) -> dict[str, Any]:
    n = sum(len(m.get("tool_calls") or []) for m in messages) + 1
    tc = {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return {"role": "assistant", "content": "", "tool_calls": [tc]}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}
