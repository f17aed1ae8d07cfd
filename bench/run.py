"""Benchmarks (`make bench`): throughput and memory of the harness, measured, never asserted in tests.

1. graph: static seed cases through the conversation graph with the reference agent (conversations/s,
   peak RSS) at several concurrency levels.
2. graph-llm: the same through an `openai:` agent answered by a local stub server over HTTP.
3. llm: chat-completions calls/s against a local OpenAI-compatible stub server running in its own
   process — the openai package's aiohttp backend (what usersim uses) vs its default httpx backend.
4. expand: long-context expansion of every C5 case to 32k tokens (seconds per expansion).
Results print as a table and are written to runs/bench/bench.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("USERSIM_NO_CACHE", "1")

STUB = """
import sys, time
sys.path.insert(0, %r)
from tests.support.openai_stub import OpenAIStub
stub = OpenAIStub(responder=lambda body: {"content": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 2}})
stub.start()
print(stub.base_url, flush=True)
time.sleep(3600)
"""


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _time_runs(name: str, agent: str, concurrencies: tuple[int, ...], repeats: int) -> list[dict]:
    """Static B1 cases x repeats through the runner with `agent`, once per concurrency level."""
    from usersim.cases.loader import load_cases
    from usersim.graphs.runner import RunConfig, run_meta, run_trials
    from usersim.graphs.trials import plan_trials

    cases = [c for c in load_cases([REPO / "cases" / "b1"]) if c.mode == "static"]
    rows = []
    for concurrency in concurrencies:
        trials = plan_trials(cases, repeats=repeats)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run"
            cfg = RunConfig(agent=agent, concurrency=concurrency, progress=False)
            t0 = time.perf_counter()
            asyncio.run(run_trials(trials, cfg, out, run_meta(cfg, out, [c.id for c in cases])))
            dt = time.perf_counter() - t0
        rows.append(
            {
                "bench": name,
                "concurrency": concurrency,
                "conversations": len(trials),
                "seconds": round(dt, 2),
                "per_s": round(len(trials) / dt, 1),
                "peak_rss_mb": round(peak_rss_mb()),
            }
        )
    return rows


def bench_graph() -> list[dict]:
    return _time_runs("graph", "reference", (1, 8, 32), repeats=3)


async def _fire(client, n: int, concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await client.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": f"hi {i}"}]
            )

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - t0


def bench_llm(n: int = 2000) -> list[dict]:
    from openai import AsyncOpenAI, DefaultAioHttpClient

    proc = subprocess.Popen([sys.executable, "-c", STUB % str(REPO)], stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().strip()
        rows = []
        for backend in ("aiohttp", "httpx"):
            for concurrency in (16, 64, 256):

                async def go() -> float:
                    kw = {"http_client": DefaultAioHttpClient()} if backend == "aiohttp" else {}
                    async with AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0, **kw) as client:
                        return await _fire(client, n, concurrency)

                dt = asyncio.run(go())
                rows.append(
                    {
                        "bench": "llm",
                        "backend": backend,
                        "concurrency": concurrency,
                        "calls": n,
                        "seconds": round(dt, 2),
                        "per_s": round(n / dt, 1),
                    }
                )
        return rows
    finally:
        proc.kill()


def bench_graph_llm() -> list[dict]:
    """Static conversations whose agent is `openai:` over HTTP (stub in its own process): harness overhead
    per conversation when every agent step is a real chat-completions call."""
    proc = subprocess.Popen([sys.executable, "-c", STUB % str(REPO)], stdout=subprocess.PIPE, text=True)
    try:
        os.environ["OPENAI_BASE_URL"] = proc.stdout.readline().strip()
        return _time_runs("graph-llm", "openai:bench", (8, 64), repeats=4)
    finally:
        proc.kill()


def bench_expand() -> list[dict]:
    from usersim.cases.expand import expand_case
    from usersim.cases.loader import load_cases

    cases = [c for c in load_cases([REPO / "cases" / "c5"]) if c.long_context]
    t0 = time.perf_counter()
    for c in cases:
        expand_case(c, "32k", None, seed=1)
    dt = time.perf_counter() - t0
    return [
        {
            "bench": "expand",
            "length": "32k",
            "cases": len(cases),
            "seconds": round(dt, 2),
            "per_case_s": round(dt / max(1, len(cases)), 3),
            "peak_rss_mb": round(peak_rss_mb()),
        }
    ]


def main() -> None:
    which = sys.argv[1:] or ["graph", "graph-llm", "llm", "expand"]
    rows: list[dict] = []
    for name in which:
        rows += {
            "graph": bench_graph,
            "graph-llm": bench_graph_llm,
            "llm": bench_llm,
            "expand": bench_expand,
        }[name]()
        for r in rows:
            if r["bench"] == name:
                print("  ".join(f"{k}={v}" for k, v in r.items()), flush=True)
    out = REPO / "runs" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    print(f"-> {out / 'bench.json'}")


if __name__ == "__main__":
    main()
