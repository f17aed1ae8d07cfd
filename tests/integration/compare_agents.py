"""Seeded python agents with a known chance of doing the right thing, for `usersim compare`'s
known-answer tests: `python:tests.integration.compare_agents:p90` confirms the booking (what the
case checks) with probability 0.9, else declines. COMPARE_AGENT_SEED seeds the draws; run with
--concurrency 1 so the draws meet the conversations in a fixed order."""

from __future__ import annotations

import os
import random

_RNGS: dict[tuple[str, str], random.Random] = {}


def _agent(p: float, name: str):
    def respond(messages: list[dict], tools: list[dict]) -> dict:
        seed = os.environ.get("COMPARE_AGENT_SEED", "0")
        rng = _RNGS.setdefault((seed, name), random.Random(f"{seed}:{name}"))
        if rng.random() < p:
            return {"role": "assistant", "content": "Done: your booking is confirmed."}
        return {"role": "assistant", "content": "Sorry, I cannot help with bookings."}

    respond.__name__ = name
    return respond


p90 = _agent(0.9, "p90")
p30 = _agent(0.3, "p30")
