"""How a distributed run is laid out on Ray: how many workers, on which nodes, how many
conversations each keeps in flight; and what the pool reports at the end.

`--concurrency` is the run's TOTAL of conversations in flight, as in one process: it is split
across the workers (one worker per CPU of the alive nodes by default, at most one per
conversation in flight), so `--ray local` is a drop-in flag that uses the machine's cores for the
same concurrency. A worker is one Python thread (one event loop): a node uses as many cores as it
runs workers.
"""

from __future__ import annotations

from pydantic import BaseModel, computed_field

NodeCpus = tuple[str, int]  # (Ray node id, whole CPUs it offers)


def node_cpus(nodes: list[dict]) -> list[NodeCpus]:
    """(node id, whole CPUs) of the alive nodes of `ray.nodes()` that can run a worker (a head
    started with num_cpus=0 runs none)."""
    out = []
    for n in nodes:
        cpus = int(n.get("Resources", {}).get("CPU", 0))
        if n.get("Alive") and cpus >= 1:
            out.append((str(n["NodeID"]), cpus))
    return out


def spread(nodes: list[NodeCpus], count: int) -> list[str]:
    """`count` worker slots over the nodes, round-robin (one per node, then a second on the nodes
    with two CPUs or more, ...), never more on a node than its CPUs."""
    slots: list[str] = []
    depth = 0
    while len(slots) < count and any(cpus > depth for _, cpus in nodes):
        slots += [node for node, cpus in nodes if cpus > depth][: count - len(slots)]
        depth += 1
    return slots


def split(total: int, workers: int) -> list[int]:
    """`total` conversations in flight over `workers`: as even as it goes, the first ones one more."""
    base, extra = divmod(total, workers)
    return [base + (1 if i < extra else 0) for i in range(workers)]


def place(nodes: list[NodeCpus], concurrency: int, wanted: int | None = None) -> list[tuple[str, int]]:
    """(node id, conversations in flight) per worker to start. By default one worker per CPU of
    the nodes, at most `concurrency` of them; `wanted` workers when given. Raises ValueError (the CLI
    prints it as one line) for what cannot run."""
    cpus = sum(c for _, c in nodes)
    if not nodes:
        raise ValueError("the Ray cluster has no alive node with a CPU to run usersim's workers on")
    if wanted is not None:
        if wanted > cpus:
            raise ValueError(
                f"--ray-actors {wanted}: the Ray cluster has {cpus} CPU(s) on its alive nodes; "
                "each worker reserves one"
            )
        if wanted > concurrency:
            raise ValueError(
                f"--ray-actors {wanted} with --concurrency {concurrency}: --concurrency is the total of "
                f"conversations in flight, split across the workers; give --concurrency {wanted} or more"
            )
    count = wanted if wanted is not None else min(cpus, concurrency)
    return list(zip(spread(nodes, count), split(concurrency, count), strict=True))


def room(nodes: list[NodeCpus], busy: list[str], lost: set[str]) -> list[str]:
    """Nodes with a CPU no live worker holds (`busy`: the node of each live worker), leaving out
    those that lost a worker during the run (a node that lost one may be going down): where
    replacements start, round-robin."""
    left = [(node, cpus - busy.count(node)) for node, cpus in nodes if node not in lost]
    return spread([(node, free) for node, free in left if free > 0], sum(max(0, f) for _, f in left))


class WorkerRun(BaseModel):
    """What one worker did: where it ran, its conversations in flight, the conversations it
    delivered, its process CPU from its first conversation's start to its last one's end (None:
    lost before the end, it cannot tell)."""

    where: str
    lanes: int = 0
    conversations: int = 0
    cpu_s: float | None = None
    ready_at: float | None = None  # epoch s: when it had started (imports, the run's modules loaded)


class RayRunStats(BaseModel):
    """What the distributed part of a run did (run meta `ray`, and one line on stderr)."""

    workers: int = 0  # workers that started and ran conversations
    concurrency: int = 0  # conversations in flight in all (--concurrency), split across the workers
    lost: list[str] = []  # the workers lost during the run, with why
    retried: int = 0  # conversations handed out again after their worker was lost
    duplicates: int = 0  # records that arrived for a trial already stored, dropped
    calls: int = 0  # calls to the workers that returned records (a call carries a batch of trials)
    cases_sent: int = 0  # cases sent to workers: a case goes to a worker until it holds it
    reply_bytes: int = 0  # what the workers' replies weighed, sealed (ray_worker.seal)
    ran: list[WorkerRun] = []  # per worker that started, in start order: how the run was shared
    # the driver's clock (epoch s): the first conversation handed out, the last record received;
    # workers' start-up is before it, the outputs after it
    span_start: float | None = None
    span_end: float | None = None

    @computed_field  # type: ignore[prop-decorator]  # in the run meta beside its ends
    @property
    def span_s(self) -> float | None:
        """Seconds from the first conversation handed out to the last record received."""
        if self.span_start is None or self.span_end is None:
            return None
        return round(self.span_end - self.span_start, 3)

    def line(self) -> str:
        lanes = [w.lanes for w in self.ran]
        text = f"ray: {self.workers} worker(s), {self.concurrency} conversation(s) in flight"
        if len(lanes) > 1:
            text += f" ({lanes[0]} each)" if len(set(lanes)) == 1 else " (" + "/".join(map(str, lanes)) + ")"
        if self.lost:
            text += f"; {len(self.lost)} lost, {self.retried} conversation(s) retried on the others"
        if self.duplicates:
            text += f"; {self.duplicates} duplicate record(s) dropped"
        if len(self.ran) > 1:  # how the run was shared out
            text += "; conversations per worker " + "/".join(str(w.conversations) for w in self.ran)
        return text
