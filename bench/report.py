"""The bench's printed table: the same figures as bench.json, harness by harness, then the targets."""

from __future__ import annotations

from typing import Any

from bench.metrics import ROLES, dig

HARNESSES = ("bare_json", "bare_sdk", "openevals", "usersim", "usersim_cli")


def _cell(value: Any, width: int) -> str:
    if isinstance(value, dict) and "median" in value:  # a median with its spread
        if value["median"] is None:
            return f"{'n/a':>{width}}"
        text = f"{value['median']:.3g} [{value['min']:.3g}-{value['max']:.3g}]"
        return f"{text:>{width}}"
    if value is None:
        return f"{'n/a':>{width}}"
    if isinstance(value, float):
        return f"{value:>{width}.3g}" if abs(value) < 1000 else f"{value:>{width}.0f}"
    return f"{value!s:>{width}}"


def _sequential(parts: dict[str, Any]) -> list[str]:
    cols = (
        "calls_per_conversation",
        "cpu_ms_per_call",
        "wall_ms_per_call",
        "wall_ms_per_turn",
        "peak_rss_mb",
    )
    lines = []
    for part in ("whole_process", "warm"):
        seq = parts.get(part) or {}
        if not any(isinstance(seq.get(h), dict) for h in HARNESSES):
            lines.append(f"{part}: {seq.get('reason', 'not run')}")
            continue
        lines.append(f"{part + ', 0 latency':<24}" + "".join(f"{c.replace('_per_', '/'):>24}" for c in cols))
        for h in HARNESSES:
            if h in seq:
                lines.append(f"{h:<24}" + "".join(_cell(dig(seq[h] or {}, c), 24) for c in cols))
        lines.append("")
    return lines


def _concurrency(parts: dict[str, Any]) -> list[str]:
    lines = [f"{'concurrency':<24}{'eff C=128, 1 s':>24}{'RSS MB C=128':>24}{'eff C=32, 200 ms':>24}"]
    for h in ("bare_json", "openevals", "usersim"):
        cells = [
            dig(parts, f"concurrency_1s.{h}.efficiency"),
            dig(parts, f"concurrency_1s.{h}.peak_rss_mb"),
            dig(parts, f"concurrency_200ms.{h}.efficiency"),
        ]
        lines.append(f"{h:<24}" + "".join(_cell(c, 24) for c in cells))
    return lines


def _tokens(parts: dict[str, Any]) -> list[str]:
    tok = parts.get("tokens") or {}
    lines = [
        f"{'tokens / conversation':<24}{'role':>10}{'calls':>8}{'prompt':>10}{'completion':>12}{'prefix share':>14}"
    ]
    for h in ("bare", "openevals", "usersim"):
        if not isinstance(tok.get(h), dict):
            lines.append(f"{h:<24}{'n/a':>10}  {tok.get(h + '_reason') or tok.get('reason') or ''}")
            continue
        for role in ROLES:
            r = tok[h]["by_role"].get(role)
            if r:
                cells = (r["calls"], r["prompt_tokens"], r["completion_tokens"], r["reusable_prefix_share"])
                lines.append(
                    f"{h:<24}{role:>10}"
                    + "".join(_cell(c, w) for c, w in zip(cells, (8, 10, 12, 14), strict=True))
                )
        lines.append(f"{h:<24}{'total':>10}{_cell(tok[h]['total']['tokens'], 8)}")
    return lines


def table(result: dict[str, Any]) -> str:
    """The printed summary of a bench result (bench.json's content)."""
    parts = {**result["parts"], "headline": result["headline"]}
    lines = [*_sequential(parts), "", *_concurrency(parts), "", *_tokens(parts), ""]
    for key, value in result["headline"].items():
        lines.append(f"{key:<44}{value}")
    lines += ["", f"{'target (issue)':<76}{'measured':>12}{'target':>10}  met"]
    for t in result["targets"]:
        met = {True: "yes", False: "NO", None: "—"}[t["met"]]
        extra = f"  ({t['reason'][:90]})" if t.get("reason") else ""
        item = f"#{t['issue']} {t['item']}"[:76]
        lines.append(f"{item:<76}{_cell(t['measured'], 12)}{t['target']:>10}  {met}{extra}")
    lines.append(f"bench wall {result['seconds']} s")
    return "\n".join(lines)


def _md(value: Any) -> str:
    """A figure for README's tables: a median with [min–max], or the value."""
    if isinstance(value, dict) and "median" in value:
        if value["median"] is None:
            return "n/a"
        return f"{value['median']:.3g} [{value['min']:.3g}–{value['max']:.3g}]"
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


_ROWS = {
    "bare_json": "plain JSON over aiohttp (the floor)",
    "bare_sdk": "openai SDK typed loop",
    "openevals": "openevals (its simulated user, LLM-as-judge, `run_multiturn_simulation_async`)",
    "usersim": "usersim (`usersim.arun`: graph, judges, SQLite store, report)",
    "usersim_cli": "usersim CLI (`usersim run`)",
}


def markdown(result: dict[str, Any]) -> str:
    """README's Performance tables from a bench.json: the sequential harnesses whole-process beside
    warm, the C=128 / 1 s concurrency part, and the targets."""
    parts = result["parts"]
    wp, warm = parts.get("whole_process") or {}, parts.get("warm") or {}
    lines = [
        "| 50 conversations, zero latency | calls/conv. | CPU ms/call whole process | CPU ms/call warm "
        "| wall ms/turn whole process | wall ms/turn warm | peak RSS MB whole process |",
        "|---|---|---|---|---|---|---|",
    ]
    for h, label in _ROWS.items():
        if not isinstance(wp.get(h), dict) and not isinstance(warm.get(h), dict):
            continue
        w, m = wp.get(h) or {}, warm.get(h) or {}
        calls = dig(w, "calls_per_conversation.median") or dig(m, "calls_per_conversation.median")
        cells = [
            _md(calls),
            _md(w.get("cpu_ms_per_call")),
            _md(m.get("cpu_ms_per_call")),
            _md(w.get("wall_ms_per_turn")),
            _md(m.get("wall_ms_per_turn")),
            _md(w.get("peak_rss_mb")),
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    c1 = parts.get("concurrency_1s") or {}
    lines += [
        "",
        "| 256 conversations at C=128, stub latency 1 s | one conversation s | wall s | efficiency "
        "| peak RSS MB | process CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for h in ("bare_json", "openevals", "usersim"):
        row = c1.get(h)
        if isinstance(row, dict) and "efficiency" in row:
            cells = [row["one_conversation_s"], row["wall_s"], row["efficiency"], row["peak_rss_mb"]]
            cells.append(row["process_cpu_s"])
            lines.append(f"| {_ROWS[h].split(' (')[0]} | " + " | ".join(_md(c) for c in cells) + " |")
    lines += ["", "| target (issue) | measured | target | met |", "|---|---|---|---|"]
    for t in result["targets"]:
        met = {True: "met", False: "**not met**", None: "not measured"}[t["met"]]
        lines.append(f"| #{t['issue']} {t['item']} | {_md(t['measured'])} | {t['target']} | {met} |")
    return "\n".join(lines)


if __name__ == "__main__":  # python bench/report.py runs/bench/bench.json: README's tables
    import json
    import sys

    print(markdown(json.loads(open(sys.argv[1], encoding="utf-8").read())))
