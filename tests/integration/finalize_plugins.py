"""Plugins for the finalize tests, registered in-process (the CLI runs in this process):

- simulator `leaky:first` says a secret in its opening on the trial's own seed only, `leaky:always`
  on every seed, `leaky:never` never; each then stops with goal_met;
- judge `leak_probe` grades that secret as a fidelity violation of HIGH precision (with the details
  contract of graphs.finalize), `leak_probe_advisory` the same one as advisory;
- judge `case_crash` is test-author code that raises CaseError;
- tool `crashing_lookup` is a user tool that raises CaseError (as the sandbox does for a crashing
  user tool); agent `calls_lookup` calls it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from usersim.core.errors import CaseError
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.graphs.trials import derive_seed
from usersim.simulator.base import SimulatorTurn, SimulatorView

SECRET = "my PIN is 0042"


class LeakySimulator:
    """Opens with the persona's opening, plus the secret on a leaking seed; stops after one answer."""

    cooperative = True

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.when = spec.split(":", 1)[1] if ":" in spec else "first"

    def leaks(self, view: SimulatorView) -> bool:
        if self.when == "always":
            return True
        if self.when == "never":
            return False
        return view.seed == derive_seed(0, f"{view.case_id}|r0")  # the trial's own seed (run seed 0)

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        if view.turn <= 1:
            opening = view.opening_message or "Hi, can you look something up?"
            return SimulatorTurn(message=f"{opening} Also, {SECRET}." if self.leaks(view) else opening)
        return SimulatorTurn(stop="goal_met", reason="got an answer")


class LeakProbe:
    """A fidelity check declaring its precision: fails on the secret, naming turn and message."""

    cooperative = True

    def __init__(self, precision: str) -> None:
        self.precision = precision
        self.name = "leak_probe" if precision == "high" else "leak_probe_advisory"

    async def __call__(self, *, transcript: list[Message], case: Any, state: Any) -> list[Verdict]:
        turn = 0
        for i, m in enumerate(transcript):
            if m.role != "user":
                continue
            turn += 1
            if SECRET in m.content:
                return [
                    Verdict(
                        judge="fidelity.pin_leak",
                        verdict="fail",
                        reason=f"user turn {turn} states the PIN, which the persona cannot know",
                        evidence_turn=i,
                        counts_toward_status=False,
                        details={
                            "precision": self.precision,
                            "turn": turn,
                            "message_index": i,
                            "kind": "leak",
                            "caused": "the agent answered a user who had stated the PIN",
                        },
                    )
                ]
        return [
            Verdict(
                judge="fidelity.pin_leak", verdict="pass", reason="no PIN stated", counts_toward_status=False
            )
        ]


class CaseCrash:
    name = "case_crash"

    async def __call__(self, **_: Any) -> list[Verdict]:
        try:
            {}["plan"]
        except KeyError as exc:
            raise CaseError.from_exception(exc, where="judges.py:case_crash") from exc
        return []


class LookupArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan: str = "basic"


def crashing_lookup(args: LookupArgs, ctx: Any) -> Any:
    try:
        return {"plans": {}}["plans"][args.plan]
    except KeyError as exc:
        raise CaseError.from_exception(exc, where="tools.py:crashing_lookup") from exc


def calls_lookup(messages: list[dict], tools: list[dict]) -> dict:
    """Calls crashing_lookup once, then answers."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": "Done."}
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "crashing_lookup", "arguments": json.dumps({})},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def register(monkeypatch: Any) -> None:
    """Register the plugins into copies of the registries (restored by monkeypatch)."""
    from usersim.core import registry as registries
    from usersim.sandbox.tools import register as register_tool

    for reg in (registries.simulators, registries.judges, registries.tools):
        reg.names()  # load the built-ins first
        monkeypatch.setattr(reg, "_items", dict(reg._items))
    registries.simulators.register("leaky")(LeakySimulator)
    registries.judges.register("leak_probe")(lambda config: LeakProbe("high"))
    registries.judges.register("leak_probe_advisory")(lambda config: LeakProbe("advisory"))
    registries.judges.register("case_crash")(lambda config: CaseCrash())
    register_tool("crashing_lookup", "Look up a plan (a user tool that crashes).", LookupArgs)(
        crashing_lookup
    )
