"""Pairing two runs' conversations for `usersim compare`, and what differs inside a pair.

A pair is the same case and variant on both sides, matched first by conversation seed (the same
simulated user where the simulator is deterministic), then — when the runs used different run
seeds — by repeat index. What cannot be paired is listed with the reason: a case only one run
has (different suites), a repeat only one side ran, a different simulator, or (with
`same_seed_only`) a different seed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from usersim.core.record import RunRecord, TranscriptMessage
from usersim.reports.compare_models import Change, Unpaired

DECIDED = {"passed", "failed", "error"}


@dataclass(frozen=True)
class Matched:
    """Two records that form a pair, with their positions in their run (for report links)."""

    a: RunRecord
    b: RunRecord
    a_index: int
    b_index: int


def group_key(r: RunRecord) -> tuple[str, str]:
    """(case id, variant key without the repeat)."""
    variant = ",".join(
        f"{k}={v}" for k, v in r.variant.model_dump(exclude={"repeat"}).items() if v is not None
    )
    return r.case_id, variant


def pair_records(
    a: list[RunRecord], b: list[RunRecord], *, same_seed_only: bool = False
) -> tuple[list[Matched], list[Unpaired]]:
    """Pairs and the unpaired conversations of both sides (see the module docstring)."""
    groups: dict[tuple[str, str], tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for i, r in enumerate(a):
        groups[group_key(r)][0].append(i)
    for i, r in enumerate(b):
        groups[group_key(r)][1].append(i)
    cases_a, cases_b = {r.case_id for r in a}, {r.case_id for r in b}
    pairs: list[Matched] = []
    unpaired: list[Unpaired] = []

    def lost(side: str, r: RunRecord, reason: str) -> None:
        unpaired.append(Unpaired(side=side, record_id=r.id, case_id=r.case_id, reason=reason))  # type: ignore[arg-type]

    for (case_id, variant), (ia, ib) in sorted(groups.items()):
        if not ib or not ia:
            side, other, recs, idx = ("A", "B", a, ia) if ia else ("B", "A", b, ib)
            present = cases_b if side == "A" else cases_a
            why = (
                f"case not in run {other} (different suites)"
                if case_id not in present
                else f"variant {variant or '(plain)'} not run in {other}"
            )
            for i in idx:
                lost(side, recs[i], why)
            continue
        left_a = sorted(ia, key=lambda i: a[i].variant.repeat)
        left_b = sorted(ib, key=lambda i: b[i].variant.repeat)
        by_seed = {b[i].seed: i for i in left_b}
        for i in list(left_a):  # the same simulated user on both sides first
            j = by_seed.pop(a[i].seed, None)
            if j is not None:
                left_a.remove(i)
                left_b.remove(j)
                pairs.append(Matched(a[i], b[j], i, j))
        if same_seed_only:
            for i in left_a:
                lost("A", a[i], "no conversation with the same seed in B (different run seeds)")
            for j in left_b:
                lost("B", b[j], "no conversation with the same seed in A (different run seeds)")
            continue
        for i, j in zip(left_a, left_b):  # different run seeds: repeat by repeat
            pairs.append(Matched(a[i], b[j], i, j))
        extra_a, extra_b = left_a[len(left_b) :], left_b[len(left_a) :]
        for i in extra_a:
            lost("A", a[i], f"A ran {len(ia)} repeat(s) of this variant, B {len(ib)}")
        for j in extra_b:
            lost("B", b[j], f"B ran {len(ib)} repeat(s) of this variant, A {len(ia)}")
    kept = []
    for m in pairs:
        if m.a.mode == "organic" and (m.a.simulator or "") != (m.b.simulator or ""):
            why = f"simulator differs (A {m.a.simulator}, B {m.b.simulator}): not the same users"
            lost("A", m.a, why)
            lost("B", m.b, why)
        else:
            kept.append(m)
    return kept, unpaired


def change(a_status: str, b_status: str) -> Change:
    """worse / better / same, or left_out when a side is unjudged or inconclusive."""
    if a_status not in DECIDED or b_status not in DECIDED:
        return "left_out"
    pa, pb = a_status == "passed", b_status == "passed"
    return "same" if pa == pb else ("worse" if pa else "better")


def _norm(m: TranscriptMessage) -> str:
    """A message as compared: role, text, tool calls by name and arguments (ids are random)."""
    calls = [{"name": c.get("name"), "arguments": c.get("arguments")} for c in m.tool_calls or []]
    return json.dumps([m.role, m.content, calls, m.name, m.is_error], ensure_ascii=False, sort_keys=True)


def divergence(a: list[TranscriptMessage], b: list[TranscriptMessage]) -> tuple[int | None, int | None]:
    """(user turn, message index) of the first message that differs; (None, None) when identical."""
    for i in range(max(len(a), len(b))):
        ma = a[i] if i < len(a) else None
        mb = b[i] if i < len(b) else None
        if ma is None or mb is None or _norm(ma) != _norm(mb):
            present = ma or mb
            return (present.turn if present and present.turn is not None else None), i
    return None, None


def verdict_moves(a: RunRecord, b: RunRecord) -> list[tuple[str, str, str]]:
    """(judge, criterion, 'pass_to_fail' | 'fail_to_pass') of the deciding checks that moved."""

    def keyed(r: RunRecord) -> dict[tuple[str, str, int], str]:
        seen: dict[tuple[str, str], int] = defaultdict(int)
        out: dict[tuple[str, str, int], str] = {}
        for v in r.verdicts:
            if not v.counts_toward_status:
                continue
            k = (v.judge, (v.criterion or "")[:160])
            out[(*k, seen[k])] = v.verdict
            seen[k] += 1
        return out

    va, vb = keyed(a), keyed(b)
    moves = []
    for key in va.keys() & vb.keys():
        x, y = va[key], vb[key]
        if {x, y} == {"pass", "fail"}:
            moves.append((key[0], key[1], "pass_to_fail" if x == "pass" else "fail_to_pass"))
    return sorted(moves)
