"""`reference` recalls planted facts at every distance; `reference:window-N` only within its last N turns."""

from __future__ import annotations

from tests.integration.test_cli_run import records, usersim
from usersim.cases.loader import find_case

MEMORY = ["D-01", "D-02", "D-03", "D-04", "D-05", "D-17"]  # the same fact planted in turn 1, asked at turn n


def _run(tmp_path, agent: str) -> dict[str, dict]:
    out = tmp_path / agent.replace(":", "_")
    args = [a for cid in MEMORY for a in ("--id", cid)]
    # a forgetting agent fails conversations, so the run exits 1: the records are what is checked
    usersim("run", *args, "--agent", agent, "--out", str(out), "--no-progress", check=False)
    return {r["case_id"]: r for r in records(out)}


def test_window_agent_forgets_exactly_what_lies_outside_its_window(tmp_path):
    full = _run(tmp_path, "reference")
    window = _run(tmp_path, "reference:window-4")
    assert all(r["status"] == "passed" for r in full.values()), {k: r["status"] for k, r in full.items()}
    for cid in MEMORY:
        case = find_case(cid)
        user_turns = sum(1 for m in case.input.history if m.role == "user") + 1
        rec = window[cid]
        if user_turns <= 4:  # the planted turn is still inside the window
            assert rec["status"] == "passed", cid
        else:
            assert rec["status"] == "failed", cid
            recall = next(v for v in rec["verdicts"] if v["judge"] == "memory_recall")
            assert "张三: missing" in recall["reason"]
    assert window["D-01"]["system_config"]["window_turns"] == 4
    assert full["D-01"]["system_config"]["window_turns"] is None
