"""The driver side of a distributed run: a pool of async Ray actors, fed by pulling.

`--concurrency` is the run's total of conversations in flight; it is split across the workers
(`TrialWorker` actors, ray_worker): a worker with `lanes` lanes in the driver has that many
conversations in flight, and a lane takes the next trials from the run's queue when its previous
call has returned. While the queue is long a lane takes a small batch (`_batch_size`), which the
worker runs one after another and answers in one reply: one call for several conversations, as
many as keep the reply small enough for Ray to hand back inline. Near the end of the run a batch
is one trial. A case and the persona the driver resolved for it go to a
worker until it holds them, then trials go by the case's key (ray_worker.pack). A worker replies
with each record's JSON, stored as it came, and, while the report keeps transcripts, the record's
transcript section, compressed (ray_worker.seal: small enough for Ray to hand it back inline): the
driver, which stores every record of every worker, parses each record once and renders none, so it
stays cheap next to the workers. When a worker is lost (its node removed or
dead, its process killed: Ray raises RayActorError for its calls), every trial it held goes back
to the queue and runs on the workers left; the pool starts a replacement with the lost worker's
lanes on a node with room, if any. A record whose trial id has already arrived is dropped, so the
store holds each conversation once.

Placement (ray_placement): by default one worker per CPU of the alive nodes, at most one per
conversation in flight (a head started with num_cpus=0 runs none); `workers=N` starts N, round-robin
over the nodes. A worker reserves one CPU: its event loop is one Python thread.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from usersim.core.record import RunRecord
from usersim.graphs.outputs import Finished
from usersim.graphs.plan import RunPlan
from usersim.graphs.ray_placement import RayRunStats, WorkerRun, node_cpus, place, room
from usersim.graphs.ray_worker import inline_batch, pack, unseal

if TYPE_CHECKING:
    from usersim.cases.schema import Case
    from usersim.graphs.ray_worker import Packed
    from usersim.graphs.runner import RunConfig
    from usersim.graphs.trials import Trial

READY_TIMEOUT_S = 300.0  # a worker that has not started by then (no room, a runtime_env that fails) is lost
MAX_REPLACEMENTS = (
    8  # workers started after losses, at most: a worker that dies at start is not retried forever
)


MAX_BATCH = 8  # trials per call to a worker, at most (they run one after another in that lane)
BATCH_SLACK = 4  # batches while the queue holds this many trials per lane: none near the end


class WorkersLost(ValueError):
    """No Ray worker is left to run the rest (a ValueError: the CLI prints it as one line, exit 1)."""


@dataclass(eq=False)
class _Worker:
    handle: Any
    node_id: str
    lanes: int  # its conversations in flight
    where: str = "starting"
    ready: bool = False
    ready_at: float | None = None  # epoch s: when it was ready to take conversations
    dead: bool = False
    held: dict[str, tuple[int, Trial]] = field(default_factory=dict)  # trial id -> (ordinal, trial)
    sent: set[int] = field(default_factory=set)  # the keys of the cases it has been sent
    delivered: int = 0  # records of this worker that reached the store
    cpu_s: float | None = None  # its busy CPU, as it reported at the end


class RayPool:
    """Runs `todo` on Ray actors; `records()` yields each conversation as it ends (Finished: with
    the record's JSON as the worker wrote it and, when `sections()` says the report keeps
    transcripts, its transcript section)."""

    def __init__(
        self,
        todo: list[tuple[int, Trial]],
        cfg: RunConfig,
        run_id: str,
        *,
        concurrency: int,
        workers: int | None = None,
        runtime_env: dict[str, Any] | None = None,
        sections: Callable[[], bool] = lambda: False,
    ) -> None:
        self.todo, self.cfg, self.run_id, self.sections = todo, cfg, run_id, sections
        self.concurrency, self.wanted, self.runtime_env = max(1, concurrency), workers, runtime_env
        self.stats = RayRunStats(concurrency=self.concurrency)
        self._workers: list[_Worker] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lost_nodes: set[str] = set()
        self._replacements = 0
        self._sealed_per_record: float | None = None  # what a record weighed in a reply, lately
        # id(case) -> (its key, the case, its persona resolved here or None): what workers are sent
        self._cases: dict[int, tuple[int, Case, Any]] = {}

    async def records(self) -> AsyncIterator[Finished]:
        """Every trial's record once, in finishing order; raises when no worker is left."""
        self._queue: asyncio.Queue[tuple[int, Trial]] = asyncio.Queue()
        self._out: asyncio.Queue[Finished | BaseException] = asyncio.Queue()
        self._plan = RunPlan.of(self.cfg)  # resolves each case's persona once, for the lanes
        for pending in self.todo:
            self._queue.put_nowait(pending)
        self._done: set[str] = set()
        remaining = len({t.id for _, t in self.todo})
        try:
            if remaining:
                self._start(self._placements())
            while remaining:
                item = await self._out.get()
                if isinstance(item, BaseException):
                    raise item
                remaining -= 1
                yield item
        finally:
            await self._stop()

    # -- workers ---------------------------------------------------------------------------

    def _placements(self) -> list[tuple[str, int]]:
        """(node, lanes) of the workers to start."""
        import ray

        return place(node_cpus(ray.nodes()), self.concurrency, self.wanted)

    def _start(self, nodes: list[tuple[str, int]]) -> None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from usersim.graphs.ray_worker import TrialWorker

        remote = ray.remote(TrialWorker)
        for node, lanes in nodes:
            options: dict[str, Any] = {
                "num_cpus": 1,
                "max_concurrency": lanes + 2,  # its lanes, and close() beside them
                "max_restarts": 0,  # a lost worker's trials are re-queued here, not replayed by Ray
                "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node, soft=False),
            }
            if self.runtime_env:
                options["runtime_env"] = self.runtime_env
            worker = _Worker(remote.options(**options).remote(self.cfg, self.run_id), node, lanes)
            self._workers.append(worker)
            self._spawn(self._boot(worker))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _boot(self, worker: _Worker) -> None:
        try:
            # the run's first case: the worker loads what its conversations use before it takes one
            first = self.todo[0][1].case if self.todo else None
            where = await asyncio.wait_for(_result(worker.handle.where.remote(first)), READY_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a worker that cannot start is lost, whatever the cause
            self._lose(worker, exc)
            return
        worker.where, worker.ready, worker.ready_at = f"{where['host']} pid {where['pid']}", True, time.time()
        self.stats.workers += 1
        for _ in range(worker.lanes):
            self._spawn(self._lane(worker))

    async def _lane(self, worker: _Worker) -> None:
        import ray

        while not worker.dead:
            batch = [await self._queue.get()]
            while len(batch) < self._batch_size() and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            if worker.dead:  # lost while this lane waited: the trials go to a live worker
                for item in batch:
                    self._queue.put_nowait(item)
                return
            for ordinal, trial in batch:
                worker.held[trial.id] = (ordinal, trial)
            packed, cases = self._pack(worker, [trial for _, trial in batch])
            if self.stats.span_start is None:
                self.stats.span_start = time.time()
            try:
                sealed = await _result(worker.handle.run.remote(packed, cases, self.sections()))
            except ray.exceptions.RayActorError as exc:
                self._lose(worker, exc)  # re-queues what it held, this batch with it
                return
            except Exception as exc:  # noqa: BLE001 - a harness bug in the worker ends the run, as locally
                self._out.put_nowait(exc)
                return
            self.stats.calls += 1
            self.stats.reply_bytes += len(sealed)
            self._weigh(len(sealed) / len(batch))
            # the worker holds these cases now; until a call that carried one has returned, the
            # other lanes send it too (an async actor may start its calls in any order)
            worker.sent.update(cases)
            for (ordinal, trial), (text, section) in zip(batch, unseal(sealed), strict=True):
                worker.held.pop(trial.id, None)
                self._deliver(worker, Finished(ordinal, RunRecord.model_validate_json(text), text, section))

    def _batch_size(self) -> int:
        """Trials per call: several while the queue is long (one call and one reply for all of
        them: less driver CPU per conversation), one as the run nears its end (no lane holds a
        queue of trials while another has nothing left to do), and no more than keep the reply
        inline by what records weighed in the replies so far (ray_worker.inline_batch)."""
        lanes = max(1, sum(w.lanes for w in self._workers if not w.dead))
        most = (
            MAX_BATCH if self._sealed_per_record is None else inline_batch(self._sealed_per_record, MAX_BATCH)
        )
        return max(1, min(most, self._queue.qsize() // (BATCH_SLACK * lanes)))

    def _weigh(self, per_record: float) -> None:
        """Follow what a record weighs sealed (a moving average: sections stop being sent when
        the report stops keeping transcripts, records grow with a case's turns)."""
        last = self._sealed_per_record
        self._sealed_per_record = per_record if last is None else 0.7 * last + 0.3 * per_record

    def _pack(self, worker: _Worker, trials: list[Trial]) -> tuple[list[Packed], dict[int, tuple[Case, Any]]]:
        """The trials as sent to `worker`, and the cases among them it does not hold yet, each
        with its persona resolved here, where the case file is (a persona given by a path beside
        the case need not exist on the workers; one that does not resolve is left to the worker,
        which records the error as a local run does)."""
        packed, new = [], {}
        for trial in trials:
            key, case, persona = self._case(trial.case)
            if key not in worker.sent:
                new[key] = (case, persona)
            packed.append(pack(trial, key))
        self.stats.cases_sent += len(new)
        return packed, new

    def _case(self, case: Case) -> tuple[int, Case, Any]:
        hit = self._cases.get(id(case))
        if hit is None:
            persona = None
            if case.persona:
                try:
                    persona = self._plan.persona(case)
                except Exception:  # noqa: BLE001, S110 - the conversation's error record says why
                    pass
            # the case is kept with its key: its id stays unique for the run
            hit = self._cases[id(case)] = (len(self._cases), case, persona)
        return hit

    def _deliver(self, worker: _Worker, done: Finished) -> None:
        if done.record.id in self._done:
            self.stats.duplicates += 1
            return
        self._done.add(done.record.id)
        worker.delivered += 1
        self.stats.span_end = time.time()
        self._out.put_nowait(done)

    def _lose(self, worker: _Worker, exc: BaseException) -> None:
        """Drop a worker: what it held goes back to the queue; a replacement starts if there is room."""
        if worker.dead:
            return
        import ray

        worker.dead = True
        why = f"{worker.where}: {type(exc).__name__}: {_why(exc)}"
        self.stats.lost.append(why)
        held, worker.held = list(worker.held.values()), {}
        held = [h for h in held if h[1].id not in self._done]
        self.stats.retried += len(held)
        for item in held:
            self._queue.put_nowait(item)
        print(f"ray: worker lost ({why}); {len(held)} conversation(s) go to the others", file=sys.stderr)
        if worker.node_id:
            self._lost_nodes.add(worker.node_id)
        try:
            ray.kill(worker.handle, no_restart=True)
        except Exception:  # noqa: BLE001, S110 - already gone
            pass
        if not getattr(exc, "actor_init_failed", False):  # a worker that cannot start: the others would not
            self._replace(worker.lanes)
        if not any(not w.dead for w in self._workers):
            self._out.put_nowait(
                WorkersLost(
                    f"every Ray worker is lost (last: {why}); the finished conversations are stored, "
                    "continue with --resume"
                )
            )

    def _replace(self, lanes: int) -> None:
        """One worker with the lost one's lanes, on a node with a CPU free, if any."""
        if self._replacements >= MAX_REPLACEMENTS or self._queue.empty() and not self._held():
            return
        import ray

        try:
            nodes = node_cpus(ray.nodes())
        except Exception:  # noqa: BLE001 - the cluster cannot tell: go on with the workers left
            return
        free = room(nodes, [w.node_id for w in self._workers if not w.dead], self._lost_nodes)
        if free:
            self._replacements += 1
            self._start([(free[0], lanes)])

    def _held(self) -> int:
        return sum(len(w.held) for w in self._workers if not w.dead)

    async def _stop(self) -> None:
        import ray

        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        live = [w for w in self._workers if w.ready and not w.dead]
        closes = [_result(w.handle.close.remote()) for w in live]
        ends = await asyncio.gather(*(asyncio.wait_for(c, 30) for c in closes), return_exceptions=True)
        for w, end in zip(live, ends, strict=True):
            if isinstance(end, dict):
                w.cpu_s = end.get("cpu_s")
        self.stats.ran = [
            WorkerRun(
                where=w.where, lanes=w.lanes, conversations=w.delivered, cpu_s=w.cpu_s, ready_at=w.ready_at
            )
            for w in self._workers
            if w.ready
        ]
        for w in self._workers:
            try:
                ray.kill(w.handle, no_restart=True)
            except Exception:  # noqa: BLE001, S110 - already gone
                pass


async def _result(ref: Any) -> Any:
    """Await an ObjectRef of the Ray core or of Ray Client (`ray://`): both offer `future()`."""
    return await asyncio.wrap_future(ref.future())


def _why(exc: BaseException) -> str:
    """A Ray error in one line: its own lines without Ray's indented fields (class_name, actor_id,
    pid, ip); a worker that failed to start has the cause, e.g. `ModuleNotFoundError: No module
    named 'usersim'`, in its last line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith("\t")]
    if len(lines) > 3:
        lines = [lines[0], "...", lines[-1]]
    return " ".join(line[:300] for line in lines)
