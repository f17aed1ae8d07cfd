"""`make bench`: usersim side by side with a bare client loop and openevals, on one stub endpoint.

Every harness plays the same 5-turn organic conversation (bench/case.yaml: a simulated user, the
agent, the judges at the end: 5 agent + 5 simulator calls (the 5th says stop) + as many judge calls
as usersim's judges make, JUDGE_CALLS = 2) against bench/stub_server.py,
an OpenAI-compatible server in its own process with a configurable latency, so the server's CPU
never counts against the harness:

* usersim in process (`usersim.arun`, `openai:` agent, `openai:` simulator, `openai:` judge), and
  the CLI (`usersim run`, one subprocess);
* a bare loop of AsyncOpenAI calls doing the same turns (the floor);
* openevals' `run_multiturn_simulation_async` (the `bench` extra installs it; if it cannot be
  imported its figures are null with the reason).

Measures: CPU and wall ms per turn sequentially at zero latency (medians of ROUNDS interleaved
rounds); concurrency efficiency at 1 s latency and C=128 (ideal = waves x one warm conversation's
wall); calls/s through usersim vs the bare client at zero latency (medians of ROUNDS interleaved
rounds); calls a cached rerun makes; peak memory per 1k conversations (a fresh process); 32k
long-context expansion time (per case the least of 3 timings, each with cold token counts) and
token error.

The bare loop is the SDK's typed `chat.completions.create` on the same aiohttp backend usersim uses;
usersim posts plain JSON and reads plain JSON, which costs less per call than the typed request
transform and response models, so its overhead per turn can come out near zero.

Writes runs/bench/bench.json and prints a table. BENCH_SCALE=0.25 scales the counts down for a
quick run; `python bench/run.py sequential expand` runs only some parts.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CASE = REPO / "bench" / "case.yaml"
TURNS = 5
SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
# judge calls per conversation: the other harnesses make as many as usersim's judges did (set by
# every usersim run; its rubric judge and LLM fidelity checks)
JUDGE_CALLS = 2
os.environ.update(OPENAI_API_KEY="bench", USERSIM_NO_CACHE="1", USERSIM_SKIP_MODEL_CHECK="1")


def n(count: int, least: int = 1) -> int:
    return max(least, round(count * SCALE))


def cpu_s(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


class Stub:
    """bench/stub_server.py in its own process."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "bench" / "stub_server.py"), str(latency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        os.environ["OPENAI_BASE_URL"] = self.url

    def calls(self) -> int:
        from openai import OpenAI

        reply = OpenAI(base_url=self.url, api_key="bench").chat.completions.create(
            model="__count__", messages=[]
        )
        return int(reply.choices[0].message.content or 0)

    def __enter__(self) -> Stub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


# --- the harnesses: each plays `count` conversations, `concurrency` at once ----------------------


async def usersim_conversations(count: int, concurrency: int, out: Path) -> int:
    """usersim in process; returns the model calls its records account for."""
    import usersim

    result = await usersim.arun(
        str(CASE),
        agent="openai:agent",
        simulator="openai:sim",
        judge_model="openai:judge",
        out=out,
        repeats=count,
        concurrency=concurrency,
    )
    bad = [r for r in result.records if r.status == "error"]
    if bad or len(result.records) != count:
        raise RuntimeError(f"usersim bench run went wrong: {result.explain(transcript=False)}")
    global JUDGE_CALLS
    JUDGE_CALLS = max(r.usage["judge"].calls for r in result.records if "judge" in r.usage)
    return sum(u.calls for r in result.records for u in r.usage.values())


async def bare_conversations(count: int, concurrency: int) -> int:
    """The floor: the same calls with AsyncOpenAI and nothing else (judges concurrently, like usersim),
    on the same HTTP stack as usersim (the SDK's aiohttp backend)."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    sem = asyncio.Semaphore(concurrency)
    calls = 0
    async with AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="bench",
        max_retries=0,
        http_client=DefaultAioHttpClient(),
    ) as client:

        async def chat(model: str, messages: list[dict[str, str]]) -> str:
            nonlocal calls
            calls += 1
            reply = await client.chat.completions.create(model=model, messages=messages)
            return reply.choices[0].message.content or ""

        async def one() -> None:
            async with sem:
                transcript = [{"role": "user", "content": "我想暑假去日本玩"}]
                system = {"role": "system", "content": "You are role-playing a USER planning a trip."}
                for _ in range(TURNS):
                    transcript.append({"role": "assistant", "content": await chat("agent", transcript)})
                    flipped = [
                        {"role": "user" if m["role"] == "assistant" else "assistant", "content": m["content"]}
                        for m in transcript
                    ]
                    move = json.loads(await chat("sim", [system, *flipped]))
                    if move.get("action") == "stop":
                        break
                    transcript.append({"role": "user", "content": move.get("message", "")})
                text = json.dumps(transcript, ensure_ascii=False)
                prompts = ["Criteria to judge", *["You audit a SIMULATED USER"] * (JUDGE_CALLS - 1)]
                await asyncio.gather(
                    *(chat("judge", [{"role": "user", "content": f"{p}\n{text}"}]) for p in prompts)
                )

        await asyncio.gather(*(one() for _ in range(count)))
    return calls


def openevals_missing() -> str | None:
    try:
        import langchain_openai  # noqa: F401
        import openevals.simulators  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure is the reason recorded
        return (
            f"openevals not importable ({type(exc).__name__}: {exc}); install with pip install -e '.[bench]'"
        )
    return None


async def openevals_conversations(count: int, concurrency: int) -> int:
    """openevals' multiturn simulator: LLM simulated user, the agent as a ChatOpenAI app, two
    JUDGE_CALLS LLM-as-judge trajectory evaluators. Its simulation ends at max_turns, so it makes one
    simulator call fewer (4: the opening line is fixed, as in the case)."""
    from langchain_openai import ChatOpenAI
    from openevals.llm import create_async_llm_as_judge
    from openevals.simulators import create_async_llm_simulated_user, run_multiturn_simulation_async

    base = os.environ["OPENAI_BASE_URL"]
    agent = ChatOpenAI(model="agent", base_url=base, api_key="bench", max_retries=0)
    sim = ChatOpenAI(model="sim", base_url=base, api_key="bench", max_retries=0)
    judge = ChatOpenAI(model="judge", base_url=base, api_key="bench", max_retries=0)
    sem = asyncio.Semaphore(concurrency)

    async def app(inputs: dict[str, Any], **_: Any) -> dict[str, Any]:
        reply = await agent.ainvoke([inputs])
        return {"role": "assistant", "content": reply.content}

    prompts = ["Criteria to judge", *["You audit a SIMULATED USER"] * (JUDGE_CALLS - 1)]
    evaluators = [
        create_async_llm_as_judge(prompt=p + "\n{outputs}", judge=judge, feedback_key=f"judge{i}")
        for i, p in enumerate(prompts)
    ]

    async def one(i: int) -> None:
        async with sem:
            user = create_async_llm_simulated_user(
                system="You are role-playing a USER planning a trip.",
                client=sim,
                fixed_responses=["我想暑假去日本玩"],
            )
            await run_multiturn_simulation_async(
                app=app, user=user, max_turns=TURNS, trajectory_evaluators=evaluators, thread_id=str(i)
            )

    await asyncio.gather(*(one(i) for i in range(count)))
    return count * (2 * TURNS - 1 + JUDGE_CALLS)  # 5 agent, 4 simulator, the judges


# --- measurements ---------------------------------------------------------------------------------


async def _timed(work: Any, child: bool = False) -> tuple[float, float, Any]:
    """(CPU s, wall s, value) of awaiting `work` (or calling it, if it is a plain function)."""
    who = resource.RUSAGE_CHILDREN if child else resource.RUSAGE_SELF
    c0, t0 = cpu_s(who), time.perf_counter()
    value = (await work) if asyncio.iscoroutine(work) else work()
    return cpu_s(who) - c0, time.perf_counter() - t0, value


def _cli(count: int, out: Path) -> None:
    exe = Path(sys.executable).with_name("usersim")
    cmd = [str(exe), "run", str(CASE), "--agent", "openai:agent", "--simulator", "openai:sim"]
    cmd += ["--judge-model", "openai:judge", "--repeats", str(count), "--concurrency", "1"]
    cmd += ["--out", str(out), "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not (out / "results.jsonl").is_file():
        raise RuntimeError(f"usersim CLI failed ({proc.returncode}): {proc.stderr[-2000:]}")


async def bench_sequential() -> dict[str, Any]:
    """CPU and wall ms per turn, one conversation at a time, zero latency; medians of interleaved rounds."""
    count = n(20, 3)
    skip = openevals_missing()
    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "usersim": [], "cli": [], "openevals": []}
    with Stub(0.0), tempfile.TemporaryDirectory() as tmp:
        # warm-up: imports and first connections are not per-turn cost
        await usersim_conversations(1, 1, Path(tmp) / "warm")
        await bare_conversations(1, 1)
        if skip is None:
            await openevals_conversations(1, 1)
        for r in range(ROUNDS):
            c, w, _ = await _timed(bare_conversations(count, 1))
            samples["bare"].append((c, w))
            c, w, _ = await _timed(usersim_conversations(count, 1, Path(tmp) / f"u{r}"))
            samples["usersim"].append((c, w))
            if skip is None:
                c, w, _ = await _timed(openevals_conversations(count, 1))
                samples["openevals"].append((c, w))
            c, w, _ = await _timed(lambda r=r: _cli(count, Path(tmp) / f"c{r}"), child=True)
            samples["cli"].append((c, w))
    turns = count * TURNS
    out: dict[str, Any] = {"conversations_per_round": count, "rounds": ROUNDS}
    for name, vals in samples.items():
        if not vals:
            out[name] = None
            continue
        out[name] = {
            "cpu_ms_per_turn": round(statistics.median(c for c, _ in vals) / turns * 1000, 2),
            "wall_ms_per_turn": round(statistics.median(w for _, w in vals) / turns * 1000, 2),
        }
    out["openevals_skipped"] = skip
    return out


async def bench_concurrency(latency: float = 1.0, concurrency: int = 128) -> dict[str, Any]:
    """Efficiency = ideal wall (waves x one conversation's wall at this latency) / measured wall."""
    count = n(256, concurrency)
    with Stub(0.0), tempfile.TemporaryDirectory() as tmp:  # warm-up: imports and first loads are not
        await usersim_conversations(1, 1, Path(tmp) / "warm")  # part of one conversation's wall
        await bare_conversations(1, 1)
    with Stub(latency), tempfile.TemporaryDirectory() as tmp:
        _, one, _ = await _timed(usersim_conversations(1, 1, Path(tmp) / "one"))
        _, wall, _ = await _timed(usersim_conversations(count, concurrency, Path(tmp) / "many"))
        _, bare_one, _ = await _timed(bare_conversations(1, 1))
        _, bare_wall, _ = await _timed(bare_conversations(count, concurrency))
    waves = math.ceil(count / concurrency)
    return {
        "latency_s": latency,
        "concurrency": concurrency,
        "conversations": count,
        "one_conversation_s": round(one, 2),
        "wall_s": round(wall, 2),
        "efficiency": round(waves * one / wall, 3),
        "bare_efficiency": round(waves * bare_one / bare_wall, 3),
    }


async def bench_throughput(concurrency: int = 64) -> dict[str, Any]:
    """Model calls per second through usersim vs the bare client, zero latency, same stub; medians of
    ROUNDS interleaved rounds (both are CPU-bound here, and this machine's speed comes and goes)."""
    count = n(200, 10)
    ours, bare, calls = [], [], 0
    with Stub(0.0) as stub, tempfile.TemporaryDirectory() as tmp:
        await usersim_conversations(2, 2, Path(tmp) / "warm")
        await bare_conversations(2, 2)
        for r in range(ROUNDS):
            before = stub.calls()
            _, wall, calls = await _timed(usersim_conversations(count, concurrency, Path(tmp) / f"t{r}"))
            served = stub.calls() - before
            if served != calls:
                raise RuntimeError(f"usersim's records count {calls} model calls, the stub served {served}")
            ours.append(served / wall)
            _, bare_wall, bare_calls = await _timed(bare_conversations(count, concurrency))
            bare.append(bare_calls / bare_wall)
    return {
        "concurrency": concurrency,
        "conversations": count,
        "rounds": ROUNDS,
        "usersim_calls_per_round": calls,
        "max_calls_per_s": round(statistics.median(ours), 1),
        "client_calls_per_s": round(statistics.median(bare), 1),
    }


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


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def memory_worker(count: int) -> None:
    """In a fresh process: peak RSS growth over `count` conversations at C=32 (after a warm-up)."""
    import threading

    with Stub(0.0), tempfile.TemporaryDirectory() as tmp:
        await usersim_conversations(2, 2, Path(tmp) / "warm")
        base = _rss_mb()
        samples = [base]
        done = threading.Event()

        def sample() -> None:  # RSS every 10 ms while the conversations run
            while not done.wait(0.01):
                samples.append(_rss_mb())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        await usersim_conversations(count, 32, Path(tmp) / "m")
        done.set()
        sampler.join()
        peak = max(samples)
    print(
        json.dumps(
            {
                "conversations": count,
                "base_rss_mb": round(base, 1),
                "peak_rss_mb": round(peak, 1),
                "growth_mb": round(peak - base, 1),
            }
        )
    )


def bench_memory() -> dict[str, Any]:
    count = n(400, 50)
    proc = subprocess.run([sys.executable, __file__, "_memory", str(count)], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["mb_per_1k_conversations"] = round(row["growth_mb"] / count * 1000, 1)
    return row


def bench_expand() -> dict[str, Any]:
    from usersim.cases.expand import expand_case
    from usersim.cases.loader import load_cases
    from usersim.cases.tokens import _text_tokens, count_tokens

    cases = [c for c in load_cases([REPO / "usersim" / "cases" / "c5"]) if c.long_context]
    expand_case(cases[0], "32k", None, seed=1)  # warm-up: the encoder and filler load once
    times, errors = [], []
    for c in cases:
        # the least of 3 timings (this machine's load comes and goes), each from cold token counts:
        # no message's count is remembered from the runs before
        best = math.inf
        for _ in range(3):
            _text_tokens.cache_clear()
            t0 = time.perf_counter()
            exp = expand_case(c, "32k", None, seed=1)
            best = min(best, time.perf_counter() - t0)
        times.append(best)
        recount = count_tokens(exp.messages)  # a fresh full count, not the expansion's own figure
        errors.append(abs(recount - exp.target_tokens) / exp.target_tokens)
    return {
        "cases": len(cases),
        "median_ms": round(statistics.median(times) * 1000, 1),
        "max_ms": round(max(times) * 1000, 1),
        "token_error_max": round(max(errors), 4),
    }


PARTS: dict[str, Callable[[], Any]] = {
    "sequential": bench_sequential,
    "concurrency": bench_concurrency,
    "throughput": bench_throughput,
    "cache": bench_cache,
    "memory": bench_memory,
    "expand": bench_expand,
}


def summary(parts: dict[str, Any]) -> dict[str, Any]:
    seq = parts.get("sequential") or {}
    us, bare, oe = seq.get("usersim"), seq.get("bare"), seq.get("openevals")
    get = lambda part, key: (parts.get(part) or {}).get(key)  # noqa: E731
    return {
        "overhead_per_turn_ms": round(us["cpu_ms_per_turn"] - bare["cpu_ms_per_turn"], 2)
        if us and bare
        else None,
        "vs_openevals_ratio": round(us["wall_ms_per_turn"] / oe["wall_ms_per_turn"], 3)
        if us and oe
        else None,
        "vs_openevals_reason": seq.get("openevals_skipped"),
        "concurrency_efficiency": get("concurrency", "efficiency"),
        "max_calls_per_s": get("throughput", "max_calls_per_s"),
        "client_calls_per_s": get("throughput", "client_calls_per_s"),
        "cached_rerun_calls": get("cache", "rerun_calls"),
        "memory_mb_per_1k_conversations": get("memory", "mb_per_1k_conversations"),
        "expand_32k_ms": get("expand", "median_ms"),
        "expand_token_error_max": get("expand", "token_error_max"),
    }


def table(parts: dict[str, Any], top: dict[str, Any]) -> str:
    lines = []
    seq = parts.get("sequential")
    if seq:
        lines.append(f"{'harness':<12}{'CPU ms/turn':>14}{'wall ms/turn':>14}")
        for name in ("bare", "openevals", "usersim", "cli"):
            row = seq.get(name)
            cells = (f"{row['cpu_ms_per_turn']:>14}{row['wall_ms_per_turn']:>14}") if row else "  n/a"
            lines.append(f"{name:<12}{cells}")
        lines.append("")
    for key, value in top.items():
        if value is not None:
            lines.append(f"{key:<34}{value}")
    return "\n".join(lines)


def main() -> None:
    if sys.argv[1:2] == ["_memory"]:
        asyncio.run(memory_worker(int(sys.argv[2])))
        return
    which = sys.argv[1:] or list(PARTS)
    parts: dict[str, Any] = {}
    t0 = time.perf_counter()
    for name in which:
        t = time.perf_counter()
        value = PARTS[name]()
        parts[name] = asyncio.run(value) if asyncio.iscoroutine(value) else value
        print(
            f"[{name} {time.perf_counter() - t:.0f}s] {json.dumps(parts[name], ensure_ascii=False)}",
            flush=True,
        )
    top = summary(parts)
    result = {
        **top,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "scale": SCALE,
        "seconds": round(time.perf_counter() - t0, 1),
        "parts": parts,
    }
    out = REPO / "runs" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(table(parts, top))
    print(f"-> {out / 'bench.json'}")


if __name__ == "__main__":
    main()
