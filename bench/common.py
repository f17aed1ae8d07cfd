"""What every bench part shares: the scale knobs, CPU clocks, the stub server process, the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CASE = REPO / "bench" / "case.yaml"
TURNS = 5  # simulated (user) turns per conversation
SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
# set by bench/run.py's main (not on import: the bench's tests import these modules in pytest's
# process, where the variables would leak into every later test)
BENCH_ENV = {"OPENAI_API_KEY": "bench", "USERSIM_NO_CACHE": "1", "USERSIM_SKIP_MODEL_CHECK": "1"}


def n(count: int, least: int = 1) -> int:
    """`count` scaled by BENCH_SCALE, at least `least`."""
    return max(least, round(count * SCALE))


def cpu_s(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def stolen_s() -> float | None:
    """The machine's CPU seconds the hypervisor gave other guests since boot, over all its CPUs
    (/proc/stat's `steal`, in USER_HZ ticks of 1/100 s); None where there is no such file."""
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8]) / 100
    except (OSError, IndexError, ValueError):
        return None


def usersim_exe() -> str:
    return str(Path(sys.executable).with_name("usersim"))


def median(values: Sequence[float], digits: int = 3) -> float | None:
    return round(statistics.median(values), digits) if values else None


class Stub:
    """bench/stub_server.py in its own process (its CPU never counts against a harness)."""

    def __init__(self, latency: float, *, log: bool = False) -> None:
        cmd = [sys.executable, str(REPO / "bench" / "stub_server.py"), str(latency)]
        self.proc = subprocess.Popen(cmd + (["--log"] if log else []), stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not self.url:
            raise RuntimeError("bench/stub_server.py did not start")
        os.environ["OPENAI_BASE_URL"] = self.url
        self._client: Any = None

    def _ask(self, model: str) -> str:
        import httpx

        reply = httpx.post(
            f"{self.url}/chat/completions",
            json={"model": model, "messages": []},
            headers={"Authorization": "Bearer bench"},
            timeout=60,
        )
        reply.raise_for_status()
        return str(reply.json()["choices"][0]["message"]["content"] or "")

    def calls(self) -> int:
        """Model calls served so far."""
        return int(self._ask("__count__") or 0)

    def tagged(self, tag: str) -> str:
        """The base URL whose calls the stub counts under `tag` (bench/stub_server.py)."""
        return self.url.removesuffix("/v1") + f"/t/{tag}/v1"

    def use(self, tag: str) -> str:
        """Point OPENAI_BASE_URL (what every in-process harness reads) at `tag`'s URL; returns it."""
        os.environ["OPENAI_BASE_URL"] = url = self.tagged(tag)
        return url

    def counts(self) -> dict[str, dict[str, int]]:
        """{tag: {model: calls}} the stub served so far, per harness tag (untagged under "")."""
        return dict(json.loads(self._ask("__counts__") or "{}"))

    def served(self, tag: str) -> int:
        """Model calls the stub served under `tag` (every model)."""
        return sum(self.counts().get(tag, {}).values())

    def log(self) -> list[dict[str, Any]]:
        """The exchanges since the last log() (the stub must run with log=True)."""
        return list(json.loads(self._ask("__log__") or "[]"))

    def __enter__(self) -> Stub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


async def timed(work: Any, child: bool = False) -> tuple[float, float, Any]:
    """(CPU s, wall s, value) of awaiting `work` (or calling it, if it is a plain function); CPU of
    this process (all its threads) or, with `child`, of the subprocesses that ended meanwhile."""
    who = resource.RUSAGE_CHILDREN if child else resource.RUSAGE_SELF
    c0, t0 = cpu_s(who), time.perf_counter()
    value = (await work) if asyncio.iscoroutine(work) else work()
    return cpu_s(who) - c0, time.perf_counter() - t0, value


@dataclass
class Process:
    """What one child process cost, start to exit: wall (fork to reaping), CPU (user + system,
    resource.getrusage(RUSAGE_CHILDREN) of the launcher whose only child it was), its peak RSS (its
    own ru_maxrss from wait4), and its stdout."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    stdout: str


# A small launcher forks and execs the command, so the child's ru_maxrss starts from a bare
# interpreter's pages, not from this process's (a child forked from a process holding usersim's
# modules reports that process's RSS as its peak until exec: 170 MB for a 40 MB loop).
_LAUNCHER = """import json, os, resource, sys, time
cmd, report = json.loads(sys.argv[1]), sys.argv[2]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(cmd[0], cmd)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(report, "w") as f:
    json.dump({"wall_s": wall, "cpu_s": r.ru_utime + r.ru_stime, "maxrss_kb": usage.ru_maxrss}, f)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measure_process(cmd: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> Process:
    """Run `cmd` (its first item a path) to its exit through the launcher and measure it (Process).
    Raises with the stderr tail on an exit code not in `ok`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage.json"
        launch = [sys.executable, "-c", _LAUNCHER, json.dumps(cmd), str(report)]
        proc = subprocess.run(launch, capture_output=True, text=True, env={**os.environ, **(env or {})})
        if proc.returncode not in ok:
            name = Path(cmd[1]).name if len(cmd) > 1 and not cmd[1].startswith("-") else cmd[0]
            raise RuntimeError(f"{name} exited {proc.returncode}: {proc.stderr[-2000:]}")
        usage = json.loads(report.read_text())
    return Process(usage["wall_s"], usage["cpu_s"], usage["maxrss_kb"] / 1024, proc.stdout)


def run_cli(args: list[str], *, ok: tuple[int, ...] = (0, 1), env: dict[str, str] | None = None) -> str:
    """`usersim ARGS` in a subprocess; its stdout. Raises with the stderr tail on another exit code."""
    proc = subprocess.run(
        [usersim_exe(), *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if proc.returncode not in ok:
        raise RuntimeError(f"usersim {' '.join(args[:2])} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def cli_run_args(count: int, out: Path, concurrency: int = 1, *, judge: bool = True) -> list[str]:
    """`usersim run` on the bench case against the stub's `agent` / `sim` / `judge` models."""
    args = ["run", str(CASE), "--agent", "openai:agent", "--simulator", "openai:sim"]
    args += ["--judge-model", "openai:judge"] if judge else []
    return args + [
        "--repeats",
        str(count),
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
        "--no-progress",
    ]


def reason(exc: BaseException) -> str:
    """A part's failure as the `reason` its null figures carry."""
    return f"{type(exc).__name__}: {str(exc)[-600:]}"
