"""Beyond one machine: trials as Ray tasks (an existing distributed engine, not a home-made one).

The driver keeps the SQLite store: each finished record is committed as its task completes, so
`--resume` works the same as in a local run. Workers import usersim from their Python environment;
on a real cluster give Ray a runtime_env (working_dir / pip) that has usersim installed.
"""

from __future__ import annotations

import asyncio
from typing import Any

_remote: Any = None


def ensure_ray(address: str) -> None:
    """Connect to Ray (`local` starts a local instance, `auto` joins the running cluster, else an address)."""
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs the 'ray' package: pip install 'usersim[ray]'") from None
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address != "local":
            kwargs["address"] = address
        ray.init(**kwargs)


def _run_in_worker(trial: Any, cfg: Any, run_id: str) -> str:
    from usersim.graphs.trial_run import run_trial

    return asyncio.run(run_trial(trial, cfg, run_id)).model_dump_json()


async def run_trial_remote(trial: Any, cfg: Any, run_id: str) -> str:
    """Run one trial as a Ray task; returns the record as JSON (awaitable ObjectRef)."""
    global _remote
    import ray

    if _remote is None:
        _remote = ray.remote(_run_in_worker)
    return await _remote.remote(trial, cfg, run_id)
