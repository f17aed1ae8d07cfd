"""Scale parts, through the CLI: many conversations in one process (peak RSS growth, time per
1,000 in the first and the last third) and Ray (one vs two worker nodes of a real multi-node
cluster, CPU-bound: the offline defaults in the workers, and the stub over HTTP beside it;
`--ray local` vs one process at the same --concurrency, I/O-bound)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import CASE, REPO, ROUNDS, Stub, cli_run_args, n, stolen_s, usersim_exe
from bench.metrics import cpu_thirds, ratio, rss_in_run, slices, steady_ends, thirds


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
    """Run `cmd`, sampling its RSS and its CPU (/proc, every 200 ms once it runs; 20 ms before):
    the base RSS is its RSS when the stub has served the first model call (imports and start-up
    done), the peak the kernel's high-water mark; `cpu` the (time, CPU s so far) samples, `steal`
    the machine's (time, stolen s so far)."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    base = peak = None
    cpu: list[tuple[float, float]] = []
    rss: list[tuple[float, float]] = []
    steal: list[tuple[float, float]] = []
    while proc.poll() is None:
        if base is None and stub.calls() > 0:
            base = _status_kb(proc.pid, "VmRSS")
        hwm = _status_kb(proc.pid, "VmHWM")
        peak = hwm if hwm is not None else peak
        now = time.time()
        if (used := proc_cpu(proc.pid)) is not None:
            cpu.append((now, used))
        if (held := _status_kb(proc.pid, "VmRSS")) is not None:
            rss.append((now, held / 1024))
        if (stolen := stolen_s()) is not None:
            steal.append((now, stolen))
        time.sleep(0.02 if base is None else 0.2)
    reader.join(10)
    if proc.returncode not in (0, 1, 3):  # 3: nothing judged (no judge model in these runs)
        raise RuntimeError(f"usersim run exited {proc.returncode}: {''.join(stderr)[-2000:]}")
    return {
        "wall_s": time.time() - t0,
        "base_kb": base,
        "peak_kb": peak,
        "cpu": cpu,
        "rss": rss,
        "steal": steal,
    }


def bench_scale() -> dict[str, Any]:
    """10,000 organic conversations (BENCH_SCALE scales it), rule simulator, the stub agent answering
    after 1 s, concurrency 512, one `usersim run` process, in BENCH_SCALE_ROUNDS runs (2): the median run's
    figures (by `slowdown`), every run's slowdown and memory growth beside them. The thirds of a
    run's steady part by wall (`slowdown`, the target) and by the process's CPU (`cpu_slowdown`:
    > 1 means a conversation costs more CPU at the end, something grows; `cores_*_third`: the CPU
    the machine gave the run in each window: fewer at the end with the same CPU per conversation is
    the machine's load; `stolen_*_third`: the share of the machine's CPU time its hypervisor gave
    other guests), and the steady part in tenths (`slices`): the run's pace from start to end."""
    # BENCH_SCALE_CONVERSATIONS sets the count alone (10,000 take long on a loaded machine)
    count = int(os.environ.get("BENCH_SCALE_CONVERSATIONS") or n(10_000, 300))
    # BENCH_SCALE_ROUNDS runs (2 by default: 80 s each here, and `make bench` has 20 minutes)
    rounds = int(os.environ.get("BENCH_SCALE_ROUNDS") or max(1, min(ROUNDS, 2)))
    runs = sorted((_scale_run(count) for _ in range(rounds)), key=lambda r: r["slowdown"] or 0)
    return {
        **runs[(len(runs) - 1) // 2],  # of an even number of runs, the lower middle one
        "rounds": len(runs),
        "slowdown_rounds": [r["slowdown"] for r in runs],
        "cpu_slowdown_rounds": [r["cpu_slowdown"] for r in runs],
        "mb_per_1k_rounds": [r["mb_per_1k_conversations"] for r in runs],
        "mb_per_1k_worst": max(r["mb_per_1k_conversations"] for r in runs),  # the memory target's
    }


def _scale_run(count: int) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    with Stub(1.0) as stub, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scale"
        seen = _watch(_rule_run(count, 512, out), stub)
        ends = end_times(out / "results.jsonl")
    if len(ends) != count:
        raise RuntimeError(f"the scale run stored {len(ends)} of {count} conversations")
    growth = ((seen["peak_kb"] or 0) - (seen["base_kb"] or 0)) / 1024
    cpu, steal, cpus = seen["cpu"], seen["steal"], os.cpu_count() or 1
    steady = steady_ends(ends, 512)
    return {
        "conversations": count,
        "concurrency": 512,
        "agent_latency_s": 1.0,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "wall_s": round(seen["wall_s"], 1),
        "cpu_s": round(cpu[-1][1], 1) if cpu else None,
        "cpu_s_per_1k_conversations": round(cpu[-1][1] / count * 1000, 2) if cpu else None,
        "base_rss_mb": round((seen["base_kb"] or 0) / 1024, 1),
        "peak_rss_mb": round((seen["peak_kb"] or 0) / 1024, 1),
        "mb_per_1k_conversations": round(growth / count * 1000, 1),
        # RSS while the conversations play (at the first end, at a third, two thirds and the last
        # end) and its growth per 1,000 from the first third's end to the last end: what a finished
        # conversation leaves behind. The peak above adds the in-flight conversations, the modules
        # loaded after the first request and writing the outputs at the end: the same for any N
        **rss_in_run(ends, seen["rss"]),
        # the thirds of the steady part (bench.metrics.steady_ends: without the first wave's burst,
        # the second wave's backlog filling and the drain); over every end beside them
        **thirds(steady),
        **cpu_thirds(steady, cpu, steal, cpus),
        "slowdown_all_ends": thirds(ends)["slowdown"],
        "cpu_slowdown_all_ends": cpu_thirds(ends, cpu)["cpu_slowdown"],
        "slices": slices(steady, cpu, steal, cpus),
    }


# --- Ray ------------------------------------------------------------------------------------------


def _ray_missing() -> str | None:
    try:
        import ray  # noqa: F401
        from ray.cluster_utils import Cluster  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - the reason recorded
        return f"ray not importable ({type(exc).__name__}: {exc}); install with pip install -e '.[ray]'"
    return None


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, all threads, not its children) process `pid` has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_between(samples: list[tuple[float, float]], start: float, end: float) -> float | None:
    """CPU used between two instants from (time, cpu so far) samples: the last sample at or before
    `start` to the first at or after `end` (so it never leaves out part of the window)."""
    before = [c for t, c in samples if t <= start]
    after = [c for t, c in samples if t >= end]
    if not samples:
        return None
    return round((after[0] if after else samples[-1][1]) - (before[-1] if before else samples[0][1]), 3)


def stub_span(times: list[float], latency: float) -> tuple[float, float]:
    """(first request, last reply) of a run from the stub's arrival times: the last reply leaves
    `latency` after the last request arrived (the stub's own clock: it saw every request)."""
    if not times:
        raise RuntimeError("the stub saw no model request")
    return min(times), max(times) + latency


def _ray_meta(out: Path) -> dict[str, Any]:
    import sqlite3

    db = sqlite3.connect(out / "results.sqlite")
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'ray'").fetchone()
    finally:
        db.close()
    return json.loads(row[0]) if row else {}


def _workers(ray: dict[str, Any]) -> list[dict[str, Any]]:
    """Per worker from the run meta: its conversations, its CPU, and when it was ready, in seconds
    after the first one was (the later ones' start-up falls inside the span)."""
    ran = ray.get("ran", [])
    first = min((w["ready_at"] for w in ran if w.get("ready_at")), default=None)
    return [
        {
            "conversations": w["conversations"],
            "cpu_s": w["cpu_s"],
            "ready_after_s": round(w["ready_at"] - first, 2) if first and w.get("ready_at") else None,
        }
        for w in ran
    ]


Samples = list[tuple[float, float]]


def _sampled(cmd: list[str], other: int | None = None) -> tuple[float, float, Samples, Samples]:
    """Run `cmd` to its end, sampling its CPU (and that of process `other`, e.g. the stub) from /proc
    every 50 ms: (start epoch s, wall s, [(t, its CPU s)], [(t, other's CPU s)])."""
    t0 = time.time()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAY_DEDUP_LOGS": "0"},
    )
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    mine: Samples = []
    theirs: Samples = []
    while proc.poll() is None:
        now, cpu = time.time(), proc_cpu(proc.pid)
        if cpu is not None:
            mine.append((now, cpu))
        if other is not None and (its := proc_cpu(other)) is not None:
            theirs.append((now, its))
        time.sleep(0.05)
    wall = time.time() - t0
    reader.join(10)
    if proc.returncode not in (0, 1, 3):  # 3: nothing judged (no judge model in these runs)
        raise RuntimeError(f"usersim run exited {proc.returncode}: {''.join(stderr)[-2000:]}")
    return t0, wall, mine, theirs


def _span(cmd: list[str], stub: Stub, out: Path, latency: float) -> dict[str, Any]:
    """One `usersim run`: its wall (process start to exit: imports, Ray's start-up, the outputs)
    and its span (the stub's first request to its last reply: the conversations themselves), with
    the CPU of the driver and of the stub in that span (sampled from /proc every 50 ms) and of each
    Ray worker (its own report, run meta `ray.ran`)."""
    stub.log()  # forget the exchanges before this run
    t0, wall, driver, served = _sampled(cmd, stub.proc.pid)
    times = [ex["t"] for ex in stub.log()]
    first, last = stub_span(times, latency)
    with (out / "results.jsonl").open(encoding="utf-8") as f:
        stored = sum(1 for line in f if line.strip())
    row: dict[str, Any] = {
        "conversations": stored,
        "wall_s": round(wall, 2),
        "start_s": round(first - t0, 2),  # process start to the first model request
        "span_s": round(last - first, 2),
        "model_calls": len(times),
        "driver_cpu_s_in_span": cpu_between(driver, first, last),
        "driver_cpu_s_total": round(driver[-1][1], 2) if driver else None,
        "stub_cpu_s_in_span": cpu_between(served, first, last),
    }
    ray = _ray_meta(out) if "--ray" in cmd else {}
    if ray:
        row["workers"] = _workers(ray)
        row["workers_cpu_s"] = round(sum(w["cpu_s"] or 0 for w in ray.get("ran", [])), 2)
        row["lost"] = ray.get("lost", [])
    row["conversations_per_s"] = round(stored / row["span_s"], 2) if row["span_s"] else None
    return row


def _offline_run(count: int, concurrency: int, out: Path, ray: str) -> list[str]:
    """`usersim run` on the bench case with the offline defaults in the workers: the reference agent
    (`reference`), the rule simulator and the rule judges (the case's LLM rubric stays unjudged): a
    conversation is all CPU in the process that runs it, nothing waits on a model."""
    args = [usersim_exe(), "run", str(CASE), "--agent", "reference", "--simulator", "rule"]
    args += ["--repeats", str(count), "--concurrency", str(concurrency), "--out", str(out), "--no-progress"]
    return args + ["--ray", ray]


def _pool_span(cmd: list[str], out: Path) -> dict[str, Any]:
    """One `usersim run --ray` with no model server: its wall (process start to exit) and its span
    on the driver's clock (the pool's first conversation handed out to its last record received, run
    meta `ray.span_*`: the workers' start-up is before it), with the driver's CPU in that span
    (sampled from /proc every 50 ms) and each worker's own CPU (run meta `ray.ran`)."""
    t0, wall, driver, _ = _sampled(cmd)
    ray = _ray_meta(out)
    first, last = ray.get("span_start"), ray.get("span_end")
    if first is None or last is None:
        raise RuntimeError(f"the run meta has no Ray span: {ray}")
    with (out / "results.jsonl").open(encoding="utf-8") as f:
        stored = sum(1 for line in f if line.strip())
    span = last - first
    return {
        "conversations": stored,
        "wall_s": round(wall, 2),
        "start_s": round(first - t0, 2),  # process start to the first conversation handed out
        "span_s": round(span, 2),
        "driver_cpu_s_in_span": cpu_between(driver, first, last),
        "driver_cpu_s_total": round(driver[-1][1], 2) if driver else None,
        "stub_cpu_s_in_span": None,  # no model server: the agent and the simulator run in the workers
        "workers": _workers(ray),
        "workers_cpu_s": round(sum(w["cpu_s"] or 0 for w in ray.get("ran", [])), 2),
        "calls": ray.get("calls"),
        "reply_kb_per_call": ratio((ray.get("reply_bytes") or 0) / 1024, ray.get("calls") or 0, 1),
        "lost": ray.get("lost", []),
        "conversations_per_s": round(stored / span, 2) if span else None,
    }


def _on_cluster(nodes: int, run: Any) -> dict[str, Any]:
    """`run(address)` on a cluster of a head with no CPU (it runs no worker) and `nodes` worker
    nodes of one CPU each (ray.cluster_utils.Cluster: each node its own raylet): one worker each."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        for _ in range(nodes):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        return dict(run(cluster.address))
    finally:
        cluster.shutdown()


def _cores(row: dict[str, Any]) -> None:
    """Cores busy on average over the span: the workers, and workers + driver + stub."""
    cpu = row.get("workers_cpu_s") or 0
    row["workers_cores"] = ratio(cpu, row["span_s"], 2)
    row["all_cores"] = ratio(
        cpu + (row["driver_cpu_s_in_span"] or 0) + (row["stub_cpu_s_in_span"] or 0), row["span_s"], 2
    )
    row["driver_share"] = ratio(row["driver_cpu_s_in_span"] or 0, cpu + (row["driver_cpu_s_in_span"] or 0), 3)


def _one_vs_two(one: dict[str, Any], two: dict[str, Any], **head: Any) -> dict[str, Any]:
    for row in (one, two):
        _cores(row)
    return {
        **head,
        "load_before": os.getloadavg()[0],
        "one_node": one,
        "two_nodes": two,
        "speedup": ratio(two["conversations_per_s"], one["conversations_per_s"]),
        "wall_speedup": ratio(one["wall_s"], two["wall_s"]),
        # from CPU alone (load from other processes left out): the speedup an idle machine with this
        # many cores would show for the CPU each run spent (a worker is one thread; the driver and
        # a stub server take cores too)
        "cores": os.cpu_count(),
        "speedup_idle_bound": ratio(idle_span(one), idle_span(two)),
        "two_busy_slowdown": ratio(_cpu_per_conversation(two), _cpu_per_conversation(one)),
    }


def _cpu_per_conversation(row: dict[str, Any]) -> float | None:
    return ratio(row.get("workers_cpu_s") or 0, row.get("conversations") or 0, 5)


def bench_ray_cpu() -> dict[str, Any]:
    """CPU-bound: the bench's organic conversation with the offline defaults in the workers (the
    reference agent, the rule simulator, the rule judges: no model server competing for the cores,
    every conversation's work in the worker that runs it), on one and then two worker nodes of a
    real multi-node cluster, --concurrency 8 in all, in BENCH_ROUNDS paired rounds (one node then two,
    two then one, ...): `speedup` is the median round's (the lower middle one of an even number),
    each round's beside it. Throughput on the pool's span (first conversation handed out to last
    record received, the driver's clock; the workers' start-up is before it, the wall beside it);
    each worker's CPU and the driver's beside it (workers_cores near 1.0 on one node says the run is
    CPU-bound on its worker; driver_share is the driver's part of the CPU: storing records).
    `two_busy_slowdown`: a conversation's worker CPU on two nodes over one, the cost of both cores
    being busy at once on this machine (shared caches, the host's scheduling: a run on one node has
    the other core to itself)."""
    # one node: some 20 s of worker CPU (the rule path costs ~80 ms a conversation there), at any
    # BENCH_SCALE below 1 too: a span of a few seconds is dominated by the second worker starting
    # later and the last records
    count, concurrency = n(240, 240), 8

    def run(nodes: int, tmp: Path) -> dict[str, Any]:
        out = tmp / f"offline{nodes}"
        shutil.rmtree(out, ignore_errors=True)
        return _on_cluster(
            nodes, lambda address: _pool_span(_offline_run(count, concurrency, out, address), out)
        )

    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(max(1, ROUNDS)):
            if i % 2:  # every other round two nodes first: a drifting machine favours neither
                two, one = run(2, Path(tmp)), run(1, Path(tmp))
            else:
                one, two = run(1, Path(tmp)), run(2, Path(tmp))
            rounds.append(
                _one_vs_two(one, two, conversations=count, concurrency=concurrency, agent="reference")
            )
    rounds.sort(key=lambda r: r["speedup"] or 0)
    median = rounds[(len(rounds) - 1) // 2]  # of an even number of rounds, the lower middle one
    return {
        **median,
        "rounds": len(rounds),
        "speedup_rounds": [r["speedup"] for r in rounds],
        "two_busy_slowdown_rounds": [r["two_busy_slowdown"] for r in rounds],
    }


def bench_ray_cpu_stub() -> dict[str, Any]:
    """The same one-vs-two-node comparison with the stub server as agent AND simulator answering at
    once (11 model calls per conversation over HTTP): the stub, a Python process on the same cores,
    and the driver take ~0.4 cores, so on a 2-core machine two workers cannot each have a core
    (`speedup_idle_bound`). Kept beside the offline figure: it is the harness's per-call path."""
    count, concurrency = n(400, 200), 16

    def run(nodes: int, stub: Stub, tmp: Path) -> dict[str, Any]:
        out = tmp / f"stub{nodes}"
        cmd = [usersim_exe(), *cli_run_args(count, out, concurrency, judge=False)]
        return _on_cluster(nodes, lambda address: _span([*cmd, "--ray", address], stub, out, 0.0))

    with Stub(0.0, log=True) as stub, tempfile.TemporaryDirectory() as tmp:
        one, two = run(1, stub, Path(tmp)), run(2, stub, Path(tmp))
    return _one_vs_two(one, two, conversations=count, concurrency=concurrency, agent="stub (HTTP)")


def idle_span(row: dict[str, Any], cores: int | None = None) -> float | None:
    """The shortest span a run's CPU allows on `cores` idle cores: its busiest worker on one core,
    and everything (workers, driver, stub) spread over all of them."""
    workers = [w["cpu_s"] or 0 for w in row.get("workers", [])]
    if not workers:
        return None
    total = sum(workers) + (row.get("driver_cpu_s_in_span") or 0) + (row.get("stub_cpu_s_in_span") or 0)
    return max(max(workers), total / (cores or os.cpu_count() or 1))


def bench_ray_io() -> dict[str, Any]:
    """I/O-bound (the agent answers after 1 s; rule simulator, no judge model): `--ray local` vs one
    process at the same --concurrency, the run's total in flight in both (Ray splits it across one
    worker per CPU: 16 each on 2 CPUs, so the conversations' CPU work, done one after another on one
    loop in the one process, runs on all cores). Speed is compared on the span from the stub's first
    request to its last reply, which leaves out what only the Ray run has (starting Ray and its
    worker processes); both walls are reported beside it."""
    latency, concurrency = 1.0, 32
    count = n(640, 320)  # at least 10 waves of 1 s
    with Stub(latency, log=True) as stub, tempfile.TemporaryDirectory() as tmp:
        one, ray = Path(tmp) / "one", Path(tmp) / "ray"
        local = _span(_rule_run(count, concurrency, one), stub, one, latency)
        remote = _span(_rule_run(count, concurrency, ray, ray="local"), stub, ray, latency)
    return {
        "conversations": count,
        "concurrency": concurrency,
        "agent_latency_s": latency,
        "load_before": os.getloadavg()[0],
        "one_process": local,
        "ray_local": remote,
        "speed_vs_one_process": ratio(local["span_s"], remote["span_s"]),
        "wall_vs_one_process": ratio(local["wall_s"], remote["wall_s"]),
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
        return {
            "cpu_bound": None,
            "cpu_bound_stub": None,
            "io_bound": None,
            "node_kill": None,
            "reason": missing,
        }
    out: dict[str, Any] = {}
    for key, part in (
        ("cpu_bound", bench_ray_cpu),
        ("cpu_bound_stub", bench_ray_cpu_stub),
        ("io_bound", bench_ray_io),
        ("node_kill", bench_node_kill),
    ):
        try:
            out[key] = part()
        except Exception as exc:  # noqa: BLE001 - one failing Ray part leaves the others' figures
            out[key] = {"reason": f"{type(exc).__name__}: {str(exc)[-800:]}"}
    return out
