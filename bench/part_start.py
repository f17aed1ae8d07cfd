"""Start-up parts, each measured in fresh subprocesses: the CLI's own start (time to the first model
request of `usersim run`, wall of `validate` and `cases list`) and the 32k expansion cold (a new
process per case: token counts, filler files and index, similarity caches all empty) beside warm."""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import REPO, Stub, cli_run_args, cpu_s, median, n, run_cli

BANK = REPO / "examples" / "bank" / "cases"
C5 = REPO / "usersim" / "cases" / "c5"


def _measured(run: Callable[[], object]) -> tuple[float, float]:
    """(wall s, CPU s of the child processes) of one call of `run`."""
    c0, t0 = cpu_s(resource.RUSAGE_CHILDREN), time.perf_counter()
    run()
    return time.perf_counter() - t0, cpu_s(resource.RUSAGE_CHILDREN) - c0


def _timed(
    args: list[str], times: int, env: dict[str, str] | None = None
) -> tuple[float | None, float | None]:
    """(median wall s, median CPU s) of `usersim ARGS` over `times` fresh processes. The CPU (user +
    system of the process) is the steadier figure on a machine other work shares."""
    walls, cpus = zip(*(_measured(lambda: run_cli(args, ok=(0,), env=env)) for _ in range(times)))
    return median(walls), median(cpus)


# What any pydantic-based validator with this CLI stack pays before reading a file: the imports of
# click, PyYAML and pydantic and pydantic's first model (its schema machinery loads on first use).
_FLOOR = (
    "import click, yaml, pydantic\nclass M(pydantic.BaseModel):\n    a: int\nM.model_validate({'a': 1})\n"
)


def _validate_beside_floor(times: int) -> dict[str, Any]:
    """`validate` on the bank cases and the dependency floor (_FLOOR in a fresh interpreter of the
    same environment), alternated so that both see the machine in the same state."""
    runs: dict[str, Callable[[], object]] = {
        "validate": lambda: run_cli(["validate", str(BANK)], ok=(0,)),
        "floor": lambda: subprocess.run([sys.executable, "-c", _FLOOR], check=True),
    }
    walls: dict[str, list[float]] = {what: [] for what in runs}
    cpus: dict[str, list[float]] = {what: [] for what in runs}
    for _ in range(times):
        for what, run in runs.items():
            wall, cpu = _measured(run)
            walls[what].append(wall)
            cpus[what].append(cpu)
    return {
        "validate_s": median(walls["validate"]),
        "validate_cpu_s": median(cpus["validate"]),
        "validate_floor_s": median(walls["floor"]),
        "validate_floor_cpu_s": median(cpus["floor"]),
    }


def _wall(args: list[str], times: int, env: dict[str, str] | None = None) -> float | None:
    """Median wall s of `usersim ARGS` over `times` fresh processes."""
    return _timed(args, times, env)[0]


def _cases_list(times: int) -> dict[str, Any]:
    """`cases list --json` on the bundled library: warm (the per-file listing cache filled by one
    run before, in a cache folder of its own) beside cold (the cache off: every case validated,
    every check and tool plugin imported) and the first run that fills an empty cache."""
    args = ["cases", "list", "--json"]
    with tempfile.TemporaryDirectory() as cache:
        env = {"USERSIM_CACHE_DIR": cache, "USERSIM_NO_CASE_CACHE": "0"}
        first = _wall(args, 1, env)
        warm = _wall(args, times, env)
    cold, cold_cpu = _timed(args, times, {"USERSIM_NO_CASE_CACHE": "1"})
    return {
        "cases_list_s": warm,
        "cases_list_cold_s": cold,
        "cases_list_cold_cpu_s": cold_cpu,
        "cases_list_first_s": first,
    }


def bench_cli() -> dict[str, Any]:
    """`usersim run`: seconds from the process start to the stub's arrival time of its first model
    request (one conversation, no judge); `validate` and `cases list --json`: whole wall
    (`cases_list_s` warm, `cases_list_cold_s` with the listing cache off), with the CPU of the
    process beside validate's and the cold listing's (`*_cpu_s`); `validate_floor_s` is what the
    dependencies alone cost a process (_FLOOR), measured alternately with validate."""
    times = n(5, 3)
    firsts = []
    with Stub(0.0, log=True) as stub, tempfile.TemporaryDirectory() as tmp:
        for i in range(times):
            stub.log()  # forget what came before
            t0 = time.time()
            run_cli(cli_run_args(1, Path(tmp) / f"r{i}", judge=False), ok=(0, 1, 3))  # 3: nothing judged
            arrivals = [ex["t"] for ex in stub.log()]
            firsts.append(min(arrivals) - t0)
    return (
        {
            "runs": times,
            "first_request_s": median(firsts),
            "first_request_all_s": [round(x, 3) for x in firsts],
        }
        | _validate_beside_floor(times)
        | _cases_list(times)
    )


def expand_worker(case_id: str) -> None:
    """In a fresh process: encoder load, the first (cold) 32k expansion of one case, then the least
    of 3 warm ones; prints one JSON line."""
    t0 = time.perf_counter()
    from usersim.cases.expand import expand_case
    from usersim.cases.loader import load_cases
    from usersim.cases.tokens import count_tokens, encoding_for

    imports = time.perf_counter() - t0
    (case,) = [c for c in load_cases([C5]) if c.id == case_id]
    t0 = time.perf_counter()
    encoding_for(None)
    encoder = time.perf_counter() - t0
    t0 = time.perf_counter()
    exp = expand_case(case, "32k", None, seed=1)
    cold = time.perf_counter() - t0
    warm = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        expand_case(case, "32k", None, seed=1)
        warm = min(warm, time.perf_counter() - t0)
    error = abs(count_tokens(exp.messages) - exp.target_tokens) / exp.target_tokens
    row = {"case": case_id, "import_s": imports, "encoder_s": encoder, "cold_s": cold, "warm_s": warm}
    print(json.dumps(row | {"token_error": error}))


def bench_expand() -> dict[str, Any]:
    """Per long-context case one fresh process (BENCH_SCALE scales how many cases)."""
    from usersim.cases.loader import load_cases

    ids = sorted(c.id for c in load_cases([C5]) if c.long_context)
    ids = ids[: n(len(ids), 2)]
    rows = []
    for case_id in ids:
        cmd = [sys.executable, str(REPO / "bench" / "run.py"), "_expand", case_id]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"expanding {case_id}: {proc.stderr[-1500:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    ms = lambda key: [r[key] * 1000 for r in rows]  # noqa: E731
    return {
        "cases": len(rows),
        "cold_median_ms": median(ms("cold_s"), 1),
        "cold_max_ms": round(max(ms("cold_s")), 1),
        "warm_median_ms": median(ms("warm_s"), 1),
        "warm_max_ms": round(max(ms("warm_s")), 1),
        "encoder_load_ms": median(ms("encoder_s"), 1),
        "token_error_max": round(max(r["token_error"] for r in rows), 4),
        "note": "cold = the first expansion in a fresh process (encoder already loaded, every cache empty); "
        "warm = the least of 3 more in the same process",
    }
