"""Fault injection: the seeds' `tool_intercept` JSON (cases.schema.ToolIntercept), plus latency/timeout
and prompt injection (`inject_instruction`: text inserted into the real result, sandbox/injection.py).

An intercept fires on a call when its tool matches, its `intercept_on_call_number` (if any) equals
the call's 1-based number for that tool in the conversation, and its `intercept_condition` (if any)
matches the argument - compared raw (trimmed, case-insensitive) and after place normalisation, so a
condition on 上海 also catches PVG, while 故宫 never matches 北京.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from usersim.cases.schema import InterceptCondition, ToolIntercept
from usersim.core.events import InterceptHit
from usersim.core.turns import away
from usersim.sandbox.places import normalize_place

NOMINAL_TIMEOUT_S = 30.0  # reported for a timeout that configures no latency (no real wait)


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, (list, tuple)):
        return any(_same(a, expected) for a in actual)
    if actual is None:
        return False
    if str(actual).strip().casefold() == str(expected).strip().casefold():
        return True
    a, e = normalize_place(actual), normalize_place(expected)
    return a is not None and a == e


def condition_matches(condition: InterceptCondition | None, arguments: dict[str, Any]) -> bool:
    """Whether the argument named by the condition has the condition's value (no condition: always)."""
    if condition is None:
        return True
    return _same(arguments.get(condition.param), condition.value)


def find_intercept(
    intercepts: list[ToolIntercept], tool: str, arguments: dict[str, Any], call_number: int
) -> ToolIntercept | None:
    """The first intercept that fires on this call, or None."""
    for ic in intercepts:
        if ic.intercept_tool != tool:
            continue
        if ic.intercept_on_call_number is not None and ic.intercept_on_call_number != call_number:
            continue
        if condition_matches(ic.intercept_condition, arguments):
            return ic
    return None


def intercept_hit(intercepts: list[ToolIntercept], ic: ToolIntercept) -> InterceptHit:
    """What the record says about a fired intercept: its index in the case and its kind."""
    index = next(i for i, x in enumerate(intercepts) if x is ic)
    if ic.timeout:
        kind = "timeout"
    elif ic.inject_tool_result is not None:
        kind = "result"
    elif ic.inject_instruction is not None:
        kind = "instruction"
    else:
        kind = "latency"
    return InterceptHit(index=index, kind=kind)


@dataclass
class InterceptOutcome:
    """What an intercept did: a replacement result (or None: run the real tool), and the latency."""

    result: str | None
    is_error: bool
    latency_s: float


async def apply_intercept(ic: ToolIntercept, tool: str) -> InterceptOutcome:
    """Wait the configured latency (only when configured), then time out, inject, or pass through."""
    latency = ic.latency_s or 0.0
    if latency:
        async with away():  # a slow tool: other conversations take their turns meanwhile
            await asyncio.sleep(latency)
    if ic.timeout:
        waited = latency or NOMINAL_TIMEOUT_S
        return InterceptOutcome(f"Error: tool '{tool}' timed out after {waited:g}s", True, latency)
    if ic.inject_tool_result is not None:
        return InterceptOutcome(ic.inject_tool_result.content, ic.inject_tool_result.is_error, latency)
    return InterceptOutcome(None, False, latency)
