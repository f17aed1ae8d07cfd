"""The Ray side of a distributed run: one async actor runs many conversations of the run.

An actor is one worker process with one event loop. Every conversation the driver hands it runs
on that loop, as in a local run: one run plan (agent, judges, personas), one turn lock
(core.turns: conversations take turns on the CPU and wait on the network all at once), and the
pooled HTTP clients of usersim's model client, which live as long as the loop (llm.client). The
driver decides how many conversations an actor has in flight (ray_dispatch).

The driver sends a case to a worker until the worker holds it (`cases`: key -> the case and the
persona the driver resolved for it), then trials by the case's key (`pack`); a worker replies with
each record's JSON and, when the driver's report keeps transcripts (graphs.outputs.HeldRecords),
its transcript section: the driver, which stores every record of every worker, parses each record
once and renders nothing. A reply goes compressed (`seal`): Ray hands a reply of up to 100 KiB
back inside the call's own answer, and puts a bigger one in the worker node's object store for the
driver's node to pull (both raylets' CPU, one more round trip). Sealed, a record and its section
shrink some 7x (zlib level 1, about 0.4 ms of worker CPU a conversation), and the driver sizes its
batches by what the replies weighed so far (`inline_batch`) to keep them under that limit.

This module imports neither ray nor langgraph at its top: `ray.remote` wraps `TrialWorker` in
the driver (ray_dispatch), and the conversation graph is imported while the actor starts (`where`),
before the driver hands it a conversation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import socket
import time
import zlib
from typing import TYPE_CHECKING, Any

from usersim.graphs.trials import Trial

if TYPE_CHECKING:
    from usersim.cases.schema import Case
    from usersim.graphs.runner import RunConfig

# a trial as sent: its case's key and its other fields (the worker holds the case by that key)
Packed = tuple[int, dict[str, Any]]
# a worker's reply to one batch: each record's JSON and its transcript section (or None), sealed
Replies = list[tuple[str, str | None]]
INLINE_BYTES = 100 * 1024  # Ray's max_direct_call_object_size: a reply up to this size is inlined
_SENT_FIELDS = tuple(f.name for f in dataclasses.fields(Trial) if f.name != "case")


def pack(trial: Trial, case_key: int) -> Packed:
    """`trial` without its case, which the worker holds under `case_key`."""
    return case_key, {name: getattr(trial, name) for name in _SENT_FIELDS}


def unpack(packed: Packed, cases: dict[int, Case]) -> Trial:
    key, fields = packed
    return Trial(case=cases[key], **fields)


def seal(replies: Replies) -> bytes:
    """A batch's replies as the worker sends them: pickled, then zlib level 1 (record JSON and its
    HTML section shrink some 7x)."""
    return zlib.compress(pickle.dumps(replies, protocol=pickle.HIGHEST_PROTOCOL), 1)


def inline_batch(sealed_per_record: float, most: int) -> int:
    """Trials per batch (1 to `most`) whose sealed reply stays under Ray's inline limit, with a
    fifth to spare, for records that sealed to `sealed_per_record` bytes each."""
    fits = int(INLINE_BYTES * 0.8 // max(1.0, sealed_per_record))
    return max(1, min(most, fits))


def unseal(blob: bytes) -> Replies:
    """What `seal` made, on the driver (a reply of its own run's worker, as Ray's are)."""
    return pickle.loads(zlib.decompress(blob))  # noqa: S301 - the run's own worker, like every Ray reply


class TrialWorker:
    """Runs the trials of one run on its event loop; returns each record as JSON (the driver
    stores it). Built once per actor with the run's config."""

    def __init__(self, cfg: RunConfig, run_id: str) -> None:
        self.cfg = cfg
        self.run_id = run_id
        self._plan: Any = None
        self._turns: Any = None
        self._cases: dict[int, Case] = {}  # the run's cases this worker was sent, by the driver's key
        self._ran = 0
        self._cpu_first: float | None = None  # process CPU when the first conversation started
        self._cpu_last = 0.0  # ... and when the latest one ended
        self._heap = contextlib.ExitStack()

    def where(self, case: Any = None) -> dict[str, Any]:
        """Where this actor runs (host, pid), once it is ready to run conversations. The start-up of
        a worker is done here, not inside its first conversation: the graph's modules, and with
        `case` (the run's first) what its conversations load on first use: the agent's adapter, the
        simulator, the case's judges, the tokenizer (~1 s of CPU on the bench's organic case)."""
        import usersim.graphs.trial_run  # noqa: F401 - langgraph and the model client, imported now
        from usersim.graphs.heap import quiet_heap

        if case is not None:
            try:
                _prepare(self.cfg, case)
            except Exception:  # noqa: BLE001, S110 - the conversation that needs it records why
                pass
        # the process is this run's: what it holds now (Ray, the graph, the run's modules) is frozen
        # for the collector until close(), as a local run does around its conversations (graphs.heap)
        self._heap.enter_context(quiet_heap())
        return {"host": socket.gethostname(), "pid": os.getpid()}

    async def run(
        self, trials: list[Packed], cases: dict[int, tuple[Case, Any]], sections: bool = False
    ) -> bytes:
        """The driver's batch of trials, one after another (the driver sends one batch per lane,
        so the actor has as many conversations in flight as the driver has lanes for it), each
        start to finish (graphs.trial_run: harness failures are an `error` record, never an
        exception). `cases`: cases this worker does not hold yet (by the driver's key), each with
        the persona the driver resolved for it (None: resolved here, or its error recorded here).
        Returns each record's JSON and, with `sections`, its report transcript section, in the
        batch's order, in one sealed reply (`unseal`)."""
        from usersim.core.turns import Turns
        from usersim.graphs.plan import RunPlan
        from usersim.graphs.trial_run import run_trial

        if self._cpu_first is None:
            self._cpu_first = time.process_time()
        if self._plan is None:  # on the actor's loop: the turn lock belongs to it
            self._plan, self._turns = RunPlan.of(self.cfg), Turns()
        for key, (case, persona) in cases.items():
            self._cases[key] = case
            if persona is not None:  # each conversation gets its own copy (RunPlan.persona)
                self._plan.adopt_persona(case, persona)
        out: Replies = []
        for packed in trials:
            async with self._turns.conversation():
                record = await run_trial(unpack(packed, self._cases), self.cfg, self.run_id, self._plan)
            out.append((record.model_dump_json(), _section(record) if sections else None))
            self._ran += 1
            self._cpu_last = time.process_time()
        return seal(out)

    def stats(self) -> dict[str, Any]:
        """Conversations this actor ran and the CPU its process spent from the start of the first
        to the end of the last (all its threads: Ray's own included), for the run's meta."""
        busy = self._cpu_last - self._cpu_first if self._cpu_first is not None else 0.0
        return {"conversations": self._ran, "cpu_s": round(max(0.0, busy), 3)}

    async def close(self) -> dict[str, Any]:
        """Close the pooled HTTP clients of this actor's loop (the driver calls it at the end);
        returns `stats()`."""
        from usersim.llm.client import aclose_clients

        await aclose_clients()
        self._heap.close()
        return self.stats()


def _prepare(cfg: RunConfig, case: Any) -> None:
    """Load what a conversation of `case` loads on first use (nothing runs, nothing is called)."""
    from usersim.cases.tokens import encoding_for
    from usersim.graphs.plan import RunPlan
    from usersim.judges.select import select_judges

    plan = RunPlan.of(cfg)
    plan.load_agent()
    if case.mode == "organic":
        from usersim.simulator.base import load_simulator

        load_simulator(cfg.simulator)
    select_judges(case, plan.judge_config)
    encoding_for()


def _section(record: Any) -> str | None:
    """The record's transcript section for report.html, or None when it does not render (the
    driver then renders it itself, and its report says what broke)."""
    from usersim.reports.html_transcript import section

    try:
        return section(record)
    except Exception:  # noqa: BLE001 - see above
        return None
