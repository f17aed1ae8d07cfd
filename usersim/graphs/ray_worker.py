"""The Ray side of a distributed run: one async actor runs many conversations of the run.

An actor is one worker process with one event loop. Every conversation the driver hands it runs
on that loop, as in a local run: one run plan (agent, judges, personas), one turn lock
(core.turns: conversations take turns on the CPU and wait on the network all at once), and the
pooled HTTP clients of usersim's model client, which live as long as the loop (llm.client). The
driver decides how many conversations an actor has in flight (ray_dispatch).

This module imports neither ray nor langgraph at its top: `ray.remote` wraps `TrialWorker` in
the driver (ray_dispatch.worker_class), and the conversation graph is imported by the first trial.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usersim.graphs.runner import RunConfig
    from usersim.graphs.trials import Trial


class TrialWorker:
    """Runs the trials of one run on its event loop; returns each record as JSON (the driver
    stores it). Built once per actor with the run's config."""

    def __init__(self, cfg: RunConfig, run_id: str) -> None:
        self.cfg = cfg
        self.run_id = run_id
        self._plan: Any = None
        self._turns: Any = None

    def where(self) -> dict[str, Any]:
        """Where this actor runs (host, pid): for the driver's error lines and the run's meta."""
        return {"host": socket.gethostname(), "pid": os.getpid()}

    async def run(self, trial: Trial) -> str:
        """One conversation start to finish (graphs.trial_run: harness failures are an `error`
        record, never an exception); its record as JSON."""
        from usersim.core.turns import Turns
        from usersim.graphs.plan import RunPlan
        from usersim.graphs.trial_run import run_trial

        if self._plan is None:  # on the actor's loop: the turn lock belongs to it
            self._plan, self._turns = RunPlan.of(self.cfg), Turns()
        async with self._turns.conversation():
            record = await run_trial(trial, self.cfg, self.run_id, self._plan)
        return record.model_dump_json()

    async def close(self) -> None:
        """Close the pooled HTTP clients of this actor's loop (the driver calls it at the end)."""
        from usersim.llm.client import aclose_clients

        await aclose_clients()
