"""Case-defined mock tools: the agent's own tools, answered from the case file."""

from __future__ import annotations

import json
from typing import Any

from usersim.cases.schema import MockTool
from usersim.lang import quantity


def mock_schema(tool: MockTool) -> dict[str, Any]:
    """The mock tool in OpenAI `tools` format."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _number(value: Any) -> float | None:
    """1628, "1628", "$1,628.00", "1,628 USD" -> 1628.0; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):  # a bare number or one amount of money (usersim.lang.quantity)
        q = quantity.parse(value)
        return q.value if q is not None and q.kind in ("number", "money") and q.scale == 1 else None
    return None


def _same(expected: Any, actual: Any) -> bool:
    """Strings trimmed and case-insensitive; numbers by value ($1,628.00 = 1628); lists and objects
    element by element."""
    e, a = _number(expected), _number(actual)
    if e is not None and a is not None:
        return e == a
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            _same(x, y) for x, y in zip(expected, actual, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        return set(expected) == set(actual) and all(_same(v, actual[k]) for k, v in expected.items())
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
