"""The parts that time what a user pays, each harness in a process of its own, start to exit:

* whole_process — `count` conversations one at a time: usersim through `python -c` running
  `usersim.arun` and through `usersim run`, openevals through `python -c` running its multiturn
  simulator, and the plain-JSON floor; CPU (getrusage RUSAGE_CHILDREN around each child), wall and
  peak RSS of the whole process (interpreter start, imports, the conversations, the store, summary
  and report), in paired interleaved rounds (the order rotates each round);
* concurrency — `count` conversations at `concurrency` with the stub answering after `latency`:
  efficiency (ideal / measured wall of the conversations) and the process's peak RSS, per round.

Every harness talks to the stub under a tag of its own (name and round), so the calls per
conversation are what the stub served.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import harnesses as h
from bench.common import CASE, REPO, ROUNDS, TURNS, Stub, cli_run_args, measure_process, n, usersim_exe
from bench.metrics import efficiency, paired, spread

# what a user writes to run the bench case with usersim from Python
USERSIM_ARUN = """\
import asyncio, sys
import usersim
count, out, case = int(sys.argv[1]), sys.argv[2], sys.argv[3]
result = asyncio.run(usersim.arun(case, agent="openai:agent", simulator="openai:sim",
                                  judge_model="openai:judge", out=out, repeats=count, concurrency=1))
if result.counts.get("error") or len(result.records) != count:
    sys.exit(result.explain(transcript=False))
"""
# openevals' simulator, user and judge as bench/harnesses.py builds them
OPENEVALS = """\
import asyncio, sys
sys.path.insert(0, sys.argv[4])
from bench.harnesses import load_prompts, openevals_conversations
asyncio.run(openevals_conversations(load_prompts(sys.argv[3]), int(sys.argv[1]), 1))
"""
FLOOR = """\
import asyncio, sys
sys.path.insert(0, sys.argv[4])
from bench.harnesses import load_prompts, bare_json_conversations
asyncio.run(bare_json_conversations(load_prompts(sys.argv[3]), int(sys.argv[1]), 1))
"""
WHOLE_ROUNDS = max(ROUNDS, 5)


def _commands(count: int, out: Path, prompts_file: Path) -> dict[str, list[str]]:
    py = sys.executable
    cmds = {
        "usersim": [py, "-c", USERSIM_ARUN, str(count), str(out / "arun"), str(CASE)],
        "usersim_cli": [usersim_exe(), *cli_run_args(count, out / "cli")],
        "bare_json": [py, "-c", FLOOR, str(count), str(out / "floor"), str(prompts_file), str(REPO)],
    }
    if h.openevals_missing() is None:
        cmds["openevals"] = [py, "-c", OPENEVALS, str(count), str(out / "oe"), str(prompts_file), str(REPO)]
    return cmds


def _rotated(names: list[str], r: int) -> list[str]:
    return names[r % len(names) :] + names[: r % len(names)]


def _row(samples: list[dict[str, float]], count: int) -> dict[str, Any]:
    """One harness's per-round samples as medians with min/max."""
    return {
        key: spread([s[key] for s in samples])
        for key in (
            "wall_s",
            "cpu_s",
            "cpu_ms_per_call",
            "wall_ms_per_call",
            "wall_ms_per_turn",
            "cpu_ms_per_turn",
            "peak_rss_mb",
            "calls_per_conversation",
        )
        if key in samples[0]
    } | {"rounds": len(samples)}


def _per_call(wall: float, cpu: float, calls: int, count: int) -> dict[str, float]:
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_ms_per_call": cpu / calls * 1000,
        "wall_ms_per_call": wall / calls * 1000,
        "cpu_ms_per_turn": cpu / (count * TURNS) * 1000,
        "wall_ms_per_turn": wall / (count * TURNS) * 1000,
        "calls_per_conversation": calls / count,
    }


def bench_whole_process(prompts: h.Prompts) -> dict[str, Any]:
    """Each harness plays `count` conversations one at a time at zero latency in a fresh process,
    WHOLE_ROUNDS paired rounds; figures per round, medians with min/max, and the usersim / peer
    ratios of the same round."""
    count = n(50, 3)
    samples: dict[str, list[dict[str, float]]] = {}
    by_model: dict[str, dict[str, float]] = {}
    with Stub(0.0) as stub, tempfile.TemporaryDirectory() as tmp:
        prompts_file = h.dump_prompts(prompts, Path(tmp) / "prompts.json")
        for r in range(WHOLE_ROUNDS):
            cmds = _commands(count, Path(tmp) / f"r{r}", prompts_file)
            for name in _rotated(list(cmds), r):
                tag = f"{name}-{r}"
                done = measure_process(cmds[name], env={"OPENAI_BASE_URL": stub.tagged(tag)})
                served = stub.counts().get(tag, {})
                calls = sum(served.values())
                if not calls:
                    raise RuntimeError(f"the stub served no call to {name}")
                by_model[name] = {model: c / count for model, c in sorted(served.items())}
                row = _per_call(done.wall_s, done.cpu_s, calls, count)
                samples.setdefault(name, []).append(row | {"peak_rss_mb": done.peak_rss_mb})
    out: dict[str, Any] = {
        "conversations": count,
        "rounds": WHOLE_ROUNDS,
        "turns_per_conversation": TURNS,
        "note": "each figure: the median of the rounds, with min and max; whole process = interpreter "
        "start to exit (imports, conversations, store, summary, report)",
    }
    out |= {name: _row(s, count) | {"calls_by_model": by_model[name]} for name, s in samples.items()}
    if "openevals" not in samples:
        out["openevals"] = None
        out["reason"] = h.openevals_missing()
    _ratios(out, samples, ("usersim", "usersim_cli"), ("openevals", "bare_json"))
    return out


def _ratios(
    out: dict[str, Any],
    samples: dict[str, list[dict[str, float]]],
    ours: tuple[str, ...],
    peers: tuple[str, ...],
) -> None:
    """Paired (same-round) ratios of wall per turn, wall per call and CPU per call."""
    for us in ours:
        for peer in peers:
            if us not in samples or peer not in samples:
                continue
            for key in ("wall_ms_per_turn", "wall_ms_per_call", "cpu_ms_per_call"):
                a = [s[key] for s in samples[us]]
                b = [s[key] for s in samples[peer]]
                out[f"{us}_vs_{peer}_{key}"] = paired(a, b)


async def _one_conversation(prompts: h.Prompts, name: str, latency: float, tmp: Path) -> float:
    """One conversation's wall at `latency`, in this process after a warm-up at zero latency."""
    with Stub(0.0) as stub:
        stub.use("warmup")
        await _play(name, prompts, 1, 1, tmp / f"warm-{name}")
    with Stub(latency) as stub:
        stub.use("one")
        t0 = time.perf_counter()
        await _play(name, prompts, 1, 1, tmp / f"one-{name}")
        return time.perf_counter() - t0


def _play(name: str, prompts: h.Prompts, count: int, concurrency: int, out: Path) -> Any:
    if name == "usersim":
        return h.usersim_conversations(count, concurrency, out)
    if name == "openevals":
        return h.openevals_conversations(prompts, count, concurrency)
    return h.bare_json_conversations(prompts, count, concurrency)


def bench_concurrency(
    prompts: h.Prompts, latency: float, concurrency: int, *, openevals: bool = True
) -> dict[str, Any]:
    """`count` conversations at `concurrency`, the stub answering after `latency`: each harness in a
    process of its own (bench/child.py), ROUNDS interleaved rounds. Efficiency = ideal wall
    (waves x one conversation's wall at this latency, per harness, in this process after a warm-up)
    / the child's wall of the conversations (imports excluded); peak RSS = the child's ru_maxrss
    (imports included: what the process holds at its fullest). `openevals=False` leaves openevals
    out (no target reads it there; it keeps `make bench` within its time)."""
    count = n(256, concurrency)
    names = ["usersim", "bare_json"] + (["openevals"] if openevals and h.openevals_missing() is None else [])
    out: dict[str, Any] = {"latency_s": latency, "concurrency": concurrency, "conversations": count}
    samples: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        one = {name: asyncio.run(_one_conversation(prompts, name, latency, Path(tmp))) for name in names}
        prompts_file = h.dump_prompts(prompts, Path(tmp) / "prompts.json")
        with Stub(latency) as stub:
            for r in range(ROUNDS):
                for name in _rotated(names, r):
                    tag = f"{name}-{r}"
                    cmd = [sys.executable, str(REPO / "bench" / "child.py"), name, str(count)]
                    cmd += [str(concurrency), str(Path(tmp) / tag), str(prompts_file)]
                    done = measure_process(cmd, env={"OPENAI_BASE_URL": stub.tagged(tag)})
                    wall = float(json.loads(done.stdout.strip().splitlines()[-1])["wall_s"])
                    samples.setdefault(name, []).append(
                        {
                            "wall_s": wall,
                            "efficiency": efficiency(one[name], count, concurrency, wall),
                            "peak_rss_mb": done.peak_rss_mb,
                            "process_wall_s": done.wall_s,
                            "process_cpu_s": done.cpu_s,
                            "calls_per_conversation": stub.served(tag) / count,
                        }
                    )
    for name, rows in samples.items():
        out[name] = {"one_conversation_s": round(one[name], 3), "rounds": len(rows)} | {
            key: spread([row[key] for row in rows]) for key in rows[0]
        }
    if "openevals" in samples:
        rss = [row["peak_rss_mb"] for row in samples["usersim"]]
        out["usersim_vs_openevals_peak_rss"] = paired(
            rss, [row["peak_rss_mb"] for row in samples["openevals"]]
        )
    elif openevals:
        out["openevals"] = None
        out["reason"] = h.openevals_missing()
    return out
