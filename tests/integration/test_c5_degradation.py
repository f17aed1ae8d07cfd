"""Issue #7 acceptance through the CLI: the C5 gradient tells a full-history agent from one that
keeps only its last 10 user turns, with rule verdicts only (no judge model).

Expanded histories have seed 000's round counts (4k 8, 16k 20, 32k 28 user turns), so
`reference:window-10` sees the whole 4k history (8 + the current message) and loses the early
rounds at 32k, while the full-history `reference` keeps everything at every length.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import usersim

pytestmark = pytest.mark.slow  # `make test-fast` leaves these out; `make test` and CI run them

ROUNDS = {"4k": 8, "16k": 20, "32k": 28}


def _run(out: Path, *args: str) -> tuple[dict, list[dict]]:
    usersim("run", "usersim/cases/c5", *args, "--out", str(out), check=False)  # failures exit 1
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    records = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return summary["long_context"], records


def _scores(records: list[dict]) -> dict[tuple[str, str], float]:
    """(case, length) -> rule score, for the conversations a rule check scored."""
    return {(r["case_id"], r["variant"]["length"]): r["score"] for r in records if r["score"] is not None}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("c5")
    return {
        "full": _run(tmp / "A", "--agent", "reference"),
        "window": _run(tmp / "B", "--agent", "reference:window-10"),
        "window_end": _run(tmp / "C", "--agent", "reference:window-10", "--position", "end"),
    }


def test_histories_have_the_seed_round_counts(runs):
    _, records = runs["full"]
    for r in records:
        users = sum(1 for m in r["transcript"] if m["role"] == "user")
        assert users == ROUNDS[r["variant"]["length"]] + 1, (r["id"], users)  # + the current message


def test_full_history_agent_does_not_degrade(runs):
    lc, records = runs["full"]
    assert lc["degradation_rate"] is not None and abs(lc["degradation_rate"]) <= 0.05
    scores = _scores(records)
    assert scores, "no C5 conversation was scored by a rule check"
    for (cid, length), score in scores.items():
        assert score == scores.get((cid, "4k"), score), (cid, length)  # the same at every length


def test_window_10_sees_the_whole_4k_history_and_loses_the_beginning_at_32k(runs):
    full_lc, full = runs["full"]
    win_lc, win = runs["window"]
    a, b = _scores(full), _scores(win)
    rule_cases = sorted({cid for cid, _ in a})
    # 4k: 8 rounds + the current message fit the window, so every rule-checked case scores as with full history
    for cid in rule_cases:
        assert b.get((cid, "4k")) == a[(cid, "4k")], cid
    assert win_lc["by_length"]["4k"] == full_lc["by_length"]["4k"]
    # 32k: the seed's early information (origin 上海 / 深圳, the 知乎 request) is outside the window
    assert win_lc["by_length"]["32k"] < full_lc["by_length"]["32k"]
    assert win_lc["degradation_rate"] > 0.2 and win_lc["degradation_rate"] > full_lc["degradation_rate"]
    lost = {cid for cid in rule_cases if (b.get((cid, "32k")) or 0) < a[(cid, "32k")]}
    assert {"C5-EI-03", "C5-LT-01"} <= lost
    ei03 = next(r for r in win if r["case_id"] == "C5-EI-03" and r["variant"]["length"] == "32k")
    assert ei03["status"] == "failed"
    assert any(v["judge"] == "tool_called" and v["verdict"] == "fail" for v in ei03["verdicts"])


def test_window_10_keeps_information_placed_at_the_end(runs):
    lc, records = runs["window_end"]
    scores = _scores(records)
    # the end band is the last rounds before the current message: inside the window at every length
    for (cid, length), score in scores.items():
        assert score == scores[(cid, "4k")], (cid, length)
    assert lc["degradation_rate"] == 0
