"""A scripted Northwind Mobile agent for the case-error tests: the user's message names the tool
calls to make as `CALL tool {json args}` lines; after the results it repeats every tool result it
saw, so a test can tell exactly what reached the agent."""

from __future__ import annotations

import json
import re
from typing import Any

_CALL = re.compile(r"^CALL (\w+) (\{.*\})\s*$", re.MULTILINE)


def respond(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    user = next(m["content"] for m in messages if m["role"] == "user")
    results = [m.get("content") or "" for m in messages if m["role"] == "tool"]
    calls = _CALL.findall(user)
    if not results and calls:
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(calls)
            ],
        }
    return {"role": "assistant", "content": "Tool results: " + json.dumps(results)}
