"""Agents for the Ray tests (`python:tests.integration.ray_agents:NAME`), run inside Ray workers.

`slow_echo` answers like an I/O-bound agent: it awaits `USERSIM_TEST_AGENT_DELAY` seconds (an
agent waiting on its model) and counts the calls it has in flight in its process. With
`USERSIM_TEST_INFLIGHT_DIR` set, each process writes `<dir>/<pid>.json` with its calls so far and
the most it had in flight at once: the tests read them after the run (the workers are other
processes).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

_inflight = 0
_max = 0
_calls = 0


def _write() -> None:
    folder = os.environ.get("USERSIM_TEST_INFLIGHT_DIR")
    if folder:
        path = Path(folder) / f"{os.getpid()}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"calls": _calls, "max_inflight": _max, "inflight": _inflight}))
        tmp.replace(path)  # a reader never sees half a file


async def slow_echo(messages: list[dict], tools: list[dict]) -> dict:
    """Echoes the last user message after the delay; deterministic for the same conversation."""
    global _inflight, _max, _calls
    _inflight += 1
    _calls += 1
    _max = max(_max, _inflight)
    _write()
    try:
        await asyncio.sleep(float(os.environ.get("USERSIM_TEST_AGENT_DELAY", "0.2")))
    finally:
        _inflight -= 1
        _write()
    last = next((m for m in reversed(messages) if m["role"] == "user"), {"content": ""})
    return {"role": "assistant", "content": f"好的，收到：{last['content']}"}


def read_inflight(folder: Path) -> dict[int, dict]:
    """pid -> {calls, max_inflight, inflight} of every process that ran `slow_echo`."""
    return {int(p.stem): json.loads(p.read_text()) for p in folder.glob("*.json")}
