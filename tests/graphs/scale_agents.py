"""Agents for the scale tests, importable as `python:tests.graphs.scale_agents:NAME`."""

from __future__ import annotations

import asyncio
import os


def quick(messages, tools):
    """Answers at once without the tool the case asks for (a failed conversation)."""
    return {"role": "assistant", "content": "好的，我来看看。"}


async def slow(messages, tools):
    """Answers after SCALE_AGENT_DELAY seconds (default 0.3): slow enough to be killed mid-run."""
    await asyncio.sleep(float(os.environ.get("SCALE_AGENT_DELAY", "0.3")))
    return {"role": "assistant", "content": "好的，我来看看。"}
