"""The bench's printed table: the same figures as bench.json, harness by harness, then the targets."""

from __future__ import annotations

from typing import Any

from bench.metrics import ROLES, dig

HARNESSES = ("bare_json", "bare_sdk", "openevals", "usersim", "cli")


def _cell(value: Any, width: int) -> str:
    if value is None:
        return f"{'n/a':>{width}}"
    if isinstance(value, float):
        return f"{value:>{width}.3g}" if abs(value) < 1000 else f"{value:>{width}.0f}"
    return f"{value!s:>{width}}"


def _sequential(parts: dict[str, Any]) -> list[str]:
    seq = parts.get("sequential") or {}
    if not any(isinstance(seq.get(h), dict) for h in HARNESSES):
        return [f"sequential: {seq.get('reason', 'not run')}"]
    cols = (
        "calls_per_conversation",
        "cpu_ms_per_call",
        "wall_ms_per_call",
        "cpu_ms_per_turn",
        "wall_ms_per_turn",
    )
    lines = [f"{'sequential, 0 latency':<24}" + "".join(f"{c.replace('_per_', '/'):>18}" for c in cols)]
    for h in HARNESSES:
        row = seq.get(h)
        lines.append(f"{h:<24}" + "".join(_cell(dig(row or {}, c), 18) for c in cols))
    return lines


def _concurrency(parts: dict[str, Any]) -> list[str]:
    lines = [f"{'efficiency':<24}{'C=128, 1 s':>18}{'C=32, 200 ms':>18}"]
    for h in HARNESSES[:4]:
        cells = [dig(parts, f"{p}.{h}.efficiency") for p in ("concurrency_1s", "concurrency_200ms")]
        lines.append(f"{h:<24}" + "".join(_cell(c, 18) for c in cells))
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
    lines += ["", f"{'target (issue 27, Done when)':<60}{'measured':>12}{'target':>10}  met"]
    for t in result["targets"]:
        met = {True: "yes", False: "NO", None: "—"}[t["met"]]
        extra = f"  ({t['reason'][:90]})" if t.get("reason") else ""
        lines.append(f"{t['item'][:60]:<60}{_cell(t['measured'], 12)}{t['target']:>10}  {met}{extra}")
    return "\n".join(lines)
