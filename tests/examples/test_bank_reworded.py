"""The bundled correct bank agent reworded five ways (tests/examples/bank_reworded.py), behaviour
unchanged, still passes BANK-01 through `usersim run`: the rule simulator reads the reworded
requests, consent question, closing and result through the language layer, not through the one
phrasing the agent was written with."""

from __future__ import annotations

import json

import pytest

from tests.examples.bank_reworded import REWORDINGS
from tests.support.cli import usersim


@pytest.mark.parametrize("name", sorted(REWORDINGS))
def test_reworded_correct_agent_passes_bank_01(name, tmp_path):
    res = usersim(
        "run",
        "examples/bank/cases",
        "--id",
        "BANK-01",
        "--agent",
        f"python:tests.examples.bank_reworded:{name}",
        "--out",
        str(tmp_path),
        "--no-progress",
        check=False,
    )
    rec = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    failing = [(v["judge"], v["reason"]) for v in rec["verdicts"] if v["verdict"] != "pass"]
    assert res.returncode == 0 and rec["status"] == "passed", (name, failing)
    assert rec["stop_reason"] == "goal_met"
    said = [m["content"] for m in rec["transcript"] if m["role"] == "assistant" and m.get("content")]
    reworded = [new for _pat, new, _back, _orig in REWORDINGS[name]]
    # the rewording really reached the simulated user (not only the original wording)
    assert any(any(part.split("\\")[0][:12] in s for s in said) for part in reworded), (name, said)
