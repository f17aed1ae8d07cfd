"""Beyond one machine: a run's conversations on Ray (an existing distributed engine, not a home-made
one), many conversations per worker.

`--ray ADDRESS` (`local` starts Ray in this process, `auto` joins the cluster this machine belongs
to, `ray://HOST:10001` connects through Ray Client) starts async actors — one per CPU of the alive
nodes, at most `--concurrency`, or `--ray-actors N` — that share `--concurrency` (the run's total
of conversations in flight, as in one process), each running its share at once on its own event
loop with one pooled HTTP client per endpoint (ray_worker, ray_placement). The driver hands a worker the next trial when it
has room (ray_dispatch), so the trials of a lost worker go to the others. The driver keeps the
SQLite store: each finished record is committed as it arrives, once, so `--resume` works the same
as in a local run.

Workers import usersim from their own Python environment: on a real cluster install the same
usersim-harness version there (with the extras the agent needs), or give a runtime_env
(`--ray-runtime-env FILE`: `pip`, `working_dir` for the case files' own modules).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usersim.graphs.outputs import Finished
    from usersim.graphs.runner import RunConfig
    from usersim.graphs.trials import Trial

MISSING = "--ray needs the 'ray' package: pip install 'usersim-harness[ray]'"


def check_ray() -> None:
    """Fail before any work when Ray is not installed (RuntimeError with the install line)."""
    if importlib.util.find_spec("ray") is None:
        raise RuntimeError(MISSING)


def ensure_ray(address: str, runtime_env: dict[str, Any] | None = None) -> bool:
    """Connect to Ray (`local` starts a local instance, `auto` joins the running cluster, else an
    address); True when this call connected (the caller then disconnects at the end)."""
    check_ray()
    import ray

    if ray.is_initialized():
        return False
    # "local" is Ray's own word for a new instance: without it ray.init joins a cluster already
    # running on this machine (one `ray start` or another run made), which `--ray local` must not
    kwargs: dict[str, Any] = {"log_to_driver": False, "address": address}
    if address == "local":
        kwargs["include_dashboard"] = False
    if runtime_env:
        kwargs["runtime_env"] = runtime_env
    ray.init(**kwargs)
    return True


async def remote_records(
    todo: list[tuple[int, Trial]],
    cfg: RunConfig,
    meta: dict[str, Any],
    *,
    sections: Callable[[], bool] = lambda: False,
) -> AsyncIterator[Finished]:
    """Run `todo` on Ray workers; yields each conversation as it finishes, each trial once (with
    its record's JSON, and its transcript section while `sections()` is true). At the end
    `meta["ray"]` holds what the pool did (workers, lost, retried)."""
    from usersim.graphs.ray_dispatch import RayPool

    runtime_env = cfg.ray_runtime_env
    connected = ensure_ray(str(cfg.ray), runtime_env)
    pool = RayPool(
        todo,
        cfg,
        meta["run_id"],
        concurrency=cfg.concurrency,
        workers=cfg.ray_actors,
        runtime_env=None if connected else runtime_env,  # a Ray the caller connected: per actor
        sections=sections,
    )
    try:
        async for item in pool.records():
            yield item
    finally:
        meta["ray"] = pool.stats.model_dump()
        print(pool.stats.line(), file=sys.stderr)
        if connected:
            import ray

            ray.shutdown()
