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
