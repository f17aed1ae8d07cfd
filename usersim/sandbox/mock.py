"""Case-defined mock tools: the agent's own tools, answered from the case file."""

from __future__ import annotations

import json
from typing import Any

from usersim.cases.schema import MockTool


def mock_schema(tool: MockTool) -> dict[str, Any]:
    """The mock tool in OpenAI `tools` format."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float, str)):
        try:
            return float(actual) == float(expected)
        except ValueError:
            return False
    return expected == actual


def answer_mock(tool: MockTool, arguments: dict[str, Any]) -> tuple[str, bool]:
    """(result text, is_error): missing required arguments are an error naming them; otherwise the
    first response whose `when` matches (the default one when nothing else does)."""
    required = [r for r in tool.parameters.get("required", []) if r not in arguments]
    if required:
        return (
            f"Error: invalid arguments for {tool.name}: missing required argument(s) {', '.join(required)}",
            True,
        )
    known = set(tool.parameters.get("properties", {}))
    unknown = sorted(set(arguments) - known) if known else []
    if unknown:
        return f"Error: invalid arguments for {tool.name}: unknown argument(s) {', '.join(unknown)}", True
    for resp in tool.responses:
        if all(k in arguments and _same(v, arguments[k]) for k, v in resp.when.items()):
            content = (
                resp.content
                if isinstance(resp.content, str)
                else json.dumps(resp.content, ensure_ascii=False)
            )
            return content, resp.is_error
    return f"Error: {tool.name} has no answer for {json.dumps(arguments, ensure_ascii=False)}", True
