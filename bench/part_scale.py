"""Scale parts, through the CLI: many conversations in one process (peak RSS growth, time per
1,000 in the first and the last third) and Ray (one vs two worker nodes of a real multi-node
cluster, CPU-bound; `--ray local` vs one process, I/O-bound)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import CASE, REPO, Stub, n, usersim_exe
from bench.metrics import ratio, thirds


def _rule_run(count: int, concurrency: int, out: Path, ray: str | None = None) -> list[str]:
    """`usersim run` on the bench case with the rule simulator, the stub as agent, no judge model."""
    args = [usersim_exe(), "run", str(CASE), "--agent", "openai:agent", "--simulator", "rule"]
    args += ["--repeats", str(count), "--concurrency", str(concurrency), "--out", str(out), "--no-progress"]
    return args + (["--ray", ray] if ray else [])


def _status_kb(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def end_times(results: Path) -> list[float]:
    """When each conversation of a run ended (epoch s), streamed from results.jsonl."""
    ends = []
    with results.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                ends.append(datetime.fromisoformat(r["started_at"]).timestamp() + r["duration_s"])
    return ends


def _watch(cmd: list[str], stub: Stub) -> dict[str, Any]:
    """Run `cmd`, sampling its RSS every 20 ms: the base is its RSS when the stub has served the
    first model call (imports and start-up done), the peak the kernel's high-water mark."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    base = peak = None
    while proc.poll() is None:
        if base is None and stub.calls() > 0:
            base = _status_kb(proc.pid, "VmRSS")
        hwm = _status_kb(proc.pid, "VmHWM")
        peak = hwm if hwm is not None else peak
        time.sleep(0.02 if base is None else 0.2)
    reader.join(10)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"usersim run exited {proc.returncode}: {''.join(stderr)[-2000:]}")
    return {"wall_s": time.time() - t0, "base_kb": base, "peak_kb": peak}


def bench_scale() -> dict[str, Any]:
    """10,000 organic conversations (BENCH_SCALE scales it), rule simulator, the stub agent answering
    after 1 s, concurrency 512, one `usersim run` process."""
    # BENCH_SCALE_CONVERSATIONS sets the count alone (10,000 take long on a loaded machine)
    count = int(os.environ.get("BENCH_SCALE_CONVERSATIONS") or n(10_000, 300))
    with Stub(1.0) as stub, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scale"
        seen = _watch(_rule_run(count, 512, out), stub)
        ends = end_times(out / "results.jsonl")
    if len(ends) != count:
        raise RuntimeError(f"the scale run stored {len(ends)} of {count} conversations")
    growth = ((seen["peak_kb"] or 0) - (seen["base_kb"] or 0)) / 1024
    return {
        "conversations": count,
        "concurrency": 512,
        "agent_latency_s": 1.0,
        "wall_s": round(seen["wall_s"], 1),
        "base_rss_mb": round((seen["base_kb"] or 0) / 1024, 1),
        "peak_rss_mb": round((seen["peak_kb"] or 0) / 1024, 1),
        "mb_per_1k_conversations": round(growth / count * 1000, 1),
        **thirds(ends),
    }


# --- Ray ------------------------------------------------------------------------------------------


def _ray_missing() -> str | None:
    try:
        import ray  # noqa: F401
        from ray.cluster_utils import Cluster  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - the reason recorded
        return f"ray not importable ({type(exc).__name__}: {exc}); install with pip install -e '.[ray]'"
    return None


def _span(cmd: list[str], stub: Stub, out: Path) -> dict[str, Any]:
    """Wall of a run, and its span from the stub's first model request to the last conversation's
    end (start-up and connecting to Ray left out)."""
    stub.log()
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "RAY_DEDUP_LOGS": "0"})
    wall = time.time() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"usersim run exited {proc.returncode}: {proc.stderr[-2000:]}")
    first = min(ex["t"] for ex in stub.log())
    ends = end_times(out / "results.jsonl")
    return {"wall_s": round(wall, 2), "span_s": round(max(ends) - first, 2), "conversations": len(ends)}


def _cluster_run(workers: int, count: int, stub: Stub, tmp: Path) -> dict[str, Any]:
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        for _ in range(workers):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        out = tmp / f"ray{workers}"
        row = _span(_rule_run(count, 64, out, ray=cluster.address), stub, out)
    finally:
        cluster.shutdown()
    row["conversations_per_s"] = round(row["conversations"] / row["span_s"], 2)
    return row


def bench_ray_cpu() -> dict[str, Any]:
    """CPU-bound (the agent answers at once): a head with no CPUs and one, then two worker nodes
    with one CPU each (ray.cluster_utils.Cluster: each node its own raylet)."""
    count = n(200, 24)
    with Stub(0.0, log=True) as stub, tempfile.TemporaryDirectory() as tmp:
        one = _cluster_run(1, count, stub, Path(tmp))
        two = _cluster_run(2, count, stub, Path(tmp))
    return {
        "conversations": count,
        "one_node": one,
        "two_nodes": two,
        "speedup": ratio(two["conversations_per_s"], one["conversations_per_s"]),
    }


def bench_ray_io() -> dict[str, Any]:
    """I/O-bound (the agent answers after 1 s): `--ray local` vs one process, same --concurrency;
    speed compared on the span from the first request to the last end (Ray's start-up left out,
    both walls reported)."""
    count, concurrency = n(64, 16), 16
    with Stub(1.0, log=True) as stub, tempfile.TemporaryDirectory() as tmp:
        local = _span(_rule_run(count, concurrency, Path(tmp) / "one"), stub, Path(tmp) / "one")
        ray = _span(_rule_run(count, concurrency, Path(tmp) / "ray", ray="local"), stub, Path(tmp) / "ray")
    return {
        "conversations": count,
        "concurrency": concurrency,
        "one_process": local,
        "ray_local": ray,
        "speed_vs_one_process": ratio(local["span_s"], ray["span_s"]),
    }


KILL = "kill or lose or lost or loss"


def bench_node_kill() -> dict[str, Any]:
    """The node-kill test, where the tree has one (tests/**/test_*ray*.py, a test whose name says
    kill, lose, lost or loss)."""
    files = sorted(str(p) for p in (REPO / "tests").rglob("test_*ray*.py"))
    if not files:
        return {"passed": None, "reason": "no Ray test file in tests/"}
    cmd = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "-k", KILL, *files]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    tail = proc.stdout.strip().splitlines()[-1:] or [""]
    if proc.returncode == 5:  # no test collected
        return {
            "passed": None,
            "reason": f"no node-kill test (no test matching '{KILL}' in {len(files)} Ray files)",
        }
    return {"passed": proc.returncode == 0, "pytest": tail[0]}


def bench_ray() -> dict[str, Any]:
    missing = _ray_missing()
    if missing:
        return {"cpu_bound": None, "io_bound": None, "node_kill": None, "reason": missing}
    out: dict[str, Any] = {}
    for key, part in (
        ("cpu_bound", bench_ray_cpu),
        ("io_bound", bench_ray_io),
        ("node_kill", bench_node_kill),
    ):
        try:
            out[key] = part()
        except Exception as exc:  # noqa: BLE001 - one failing Ray part leaves the others' figures
            out[key] = {"reason": f"{type(exc).__name__}: {str(exc)[-800:]}"}
    return out
