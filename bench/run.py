"""`make bench`: usersim side by side with bare loops and openevals on one stub endpoint, and the
figures the targets of issues 44 and 27 are judged by. Calls per conversation are what the stub
served each harness (every harness talks to it under a tag of its own).

Every harness plays the same 5-turn organic conversation (bench/case.yaml: the opening line, then
5 agent and 5 simulator calls, the 5th simulator call says stop, then the judges) against
bench/stub_server.py, an OpenAI-compatible server in its own process, so the server's CPU never
counts against a harness (bench/harnesses.py says what each harness is). Parts:

* tokens      — prompt and completion tokens by role per conversation, per harness, and the
                reusable-prefix share (bench/metrics.py: what a provider's prompt cache reuses);
* whole_process — what a user pays: 50 conversations one at a time at zero latency, each harness
                a fresh process timed start to exit (CPU from getrusage(RUSAGE_CHILDREN), wall, peak
                RSS): usersim through `python -c` running usersim.arun and through `usersim run`,
                openevals, the plain-JSON floor; 5 paired interleaved rounds, medians with min/max;
* warm        — the warm steady state: the same 50 conversations in this process after a warm-up
                (usersim.arun, the plain-JSON floor, the SDK-typed loop, openevals), ROUNDS rounds;
* concurrency_1s / concurrency_200ms — efficiency (ideal / measured wall) and peak RSS, each
                harness in a process of its own: 256 conversations at C=128 and 1 s latency, and
                at C=32 and 200 ms, ROUNDS rounds;
* cache       — the model calls a cached rerun makes;
* expand      — 32k long-context expansion, cold (a fresh process per case) beside warm;
* cli         — `usersim run`'s time to its first model request, `validate` and `cases list` walls
                (`cases list` warm from its listing cache, cold with the cache off, first filling it);
* scale       — 10,000 conversations (rule simulator, agent latency 1 s, C=512), ROUNDS runs: peak
                RSS growth per 1,000 (the worst run) and time per 1,000 in the first vs the last
                third of the steady part (the median run), with the run in tenths and the
                machine's stolen time;
* ray         — one vs two worker nodes (CPU-bound, BENCH_ROUNDS paired rounds, the median), `--ray
                local` vs one process (I/O-bound), the node-kill test.

Writes runs/bench/bench.json (every figure, `headline`, `seconds` the whole bench took, and
`targets`: each target of issues 44 and 27 with its measured value, target and met) and prints a
table. BENCH_SCALE=0.1 scales the counts down,
BENCH_ROUNDS the paired rounds; `python bench/run.py sequential tokens` runs only some parts. A
part that fails records its reason and the others still run.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import part_calls, part_process, part_scale, part_start  # noqa: E402
from bench.common import BENCH_ENV, ROUNDS, SCALE, Stub, n, reason  # noqa: E402
from bench.harnesses import Prompts, usersim_conversations  # noqa: E402
from bench.metrics import headline, targets  # noqa: E402
from bench.report import table  # noqa: E402


async def bench_cache() -> dict[str, Any]:
    """A rerun of the same conversations with the LLM cache on makes how many model calls."""
    count = n(4, 2)
    with Stub(0.0) as stub, tempfile.TemporaryDirectory() as tmp:
        os.environ.update(USERSIM_NO_CACHE="0", USERSIM_CACHE_DIR=str(Path(tmp) / "cache"))
        try:
            c0 = stub.calls()
            await usersim_conversations(count, 2, Path(tmp) / "first")
            c1 = stub.calls()
            await usersim_conversations(count, 2, Path(tmp) / "again")
            c2 = stub.calls()
        finally:
            os.environ["USERSIM_NO_CACHE"] = "1"
            os.environ.pop("USERSIM_CACHE_DIR", None)
    return {"conversations": count, "first_run_calls": c1 - c0, "rerun_calls": c2 - c1}


def captured() -> tuple[Prompts, list[dict[str, Any]]]:
    """usersim's own requests for the bench conversation (once per bench run), replayed by the bare
    loops; on failure a one-line persona prompt, and the reason on stderr."""
    if not _CAPTURED:
        try:
            _CAPTURED.append(asyncio.run(part_calls.capture()))
        except Exception as exc:  # noqa: BLE001 - the parts that need it still run and say so
            print(f"capturing usersim's requests failed: {reason(exc)}", file=sys.stderr)
            _CAPTURED.append((Prompts(), []))
    return _CAPTURED[0]


_CAPTURED: list[tuple[Prompts, list[dict[str, Any]]]] = []

PARTS: dict[str, Callable[[], Any]] = {
    "tokens": lambda: part_calls.bench_tokens(*captured()),
    "whole_process": lambda: part_process.bench_whole_process(captured()[0]),
    "warm": lambda: part_calls.bench_warm(captured()[0]),
    "concurrency_1s": lambda: part_process.bench_concurrency(captured()[0], 1.0, 128),
    "concurrency_200ms": lambda: part_process.bench_concurrency(captured()[0], 0.2, 32, openevals=False),
    "cache": bench_cache,
    "expand": part_start.bench_expand,
    "cli": part_start.bench_cli,
    "scale": part_scale.bench_scale,
    "ray": part_scale.bench_ray,
}


def main() -> None:
    if sys.argv[1:2] == ["_expand"]:
        part_start.expand_worker(sys.argv[2])
        return
    t0 = time.perf_counter()
    os.environ.update(BENCH_ENV)
    # an installed package runs from its bytecode: without it every fresh process of the
    # whole-process parts would compile usersim's source again (0.28 s of CPU a process here)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import compileall

    for tree in ("usersim", "bench", "tests/support"):
        compileall.compile_dir(REPO / tree, quiet=1)
    which = sys.argv[1:] or list(PARTS)
    unknown = [w for w in which if w not in PARTS]
    if unknown:
        sys.exit(f"unknown bench part(s) {', '.join(unknown)}; parts: {', '.join(PARTS)}")
    parts: dict[str, Any] = {}
    for name in which:
        t = time.perf_counter()
        try:
            value = PARTS[name]()
            parts[name] = asyncio.run(value) if asyncio.iscoroutine(value) else value
        except Exception as exc:  # noqa: BLE001 - a failing part records why; the others still run
            parts[name] = {"reason": reason(exc)}
        print(
            f"[{name} {time.perf_counter() - t:.0f}s] {json.dumps(parts[name], ensure_ascii=False)}",
            flush=True,
        )
    parts["headline"] = headline(parts)
    seconds = round(time.perf_counter() - t0, 1)
    # the 20-minute target is for the whole bench at its defaults, not for some of its parts
    everything = set(which) == set(PARTS) and SCALE == 1 and ROUNDS == 3
    parts["bench"] = (
        {"seconds": seconds} if everything else {"reason": "not a full `make bench` at its defaults"}
    )
    result = {
        "headline": parts["headline"],
        "targets": targets(parts),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "scale": SCALE,
        "rounds": ROUNDS,
        "seconds": seconds,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds)),
        "parts": {k: v for k, v in parts.items() if k not in ("headline", "bench")},
    }
    out = REPO / "runs" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(table(result))
    print(f"-> {out / 'bench.json'}")


if __name__ == "__main__":
    main()
