"""The judges tell the good reference agent from its flawed variants where the flaw matters, and
agree where it does not (rule verdicts only, no judge model)."""

from __future__ import annotations

import pytest

from tests.integration.test_cli_run import records, usersim

CASES = ["B1-EI-01", "B1-CL-01", "B1-IF-01", "B1-MR-02", "C2-EP-01", "D-07"]

# flaw -> (cases whose rule verdicts must turn to fail, cases whose rule verdicts must stay as the good agent's)
EXPECTED = {
    "no-clarify": (["B1-CL-01"], ["B1-EI-01", "B1-IF-01", "C2-EP-01"]),
    "ignore-history": (["B1-IF-01", "B1-MR-02", "D-07"], ["B1-EI-01", "B1-CL-01"]),
    "give-up-on-error": (["C2-EP-01"], ["B1-EI-01", "B1-CL-01", "B1-IF-01", "B1-MR-02", "D-07"]),
}


def _rule_verdicts(rec: dict) -> list[tuple[str, str]]:
    return [(v["judge"], v["verdict"]) for v in rec["verdicts"] if v["judge"] not in ("llm_rubric", "human")]


def _run(tmp_path, agent: str) -> dict[str, dict]:
    out = tmp_path / agent.replace(":", "_").replace("=", "_")
    usersim(
        "run",
        *[a for c in CASES for a in ("--id", c)],
        "--agent",
        agent,
        "--out",
        str(out),
        "--no-progress",
        check=False,  # flawed runs exit 1 (failed conversations); the verdicts are what is compared
    )
    return {r["id"]: r for r in records(out)}


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("good"), "reference")


@pytest.mark.parametrize("flaw", sorted(EXPECTED))
def test_flaw_changes_verdicts_only_where_it_matters(tmp_path, good, flaw):
    flawed = _run(tmp_path, f"reference:flaw={flaw}")
    differ, agree = EXPECTED[flaw]
    for rid, rec in good.items():
        assert all(v != "fail" for _, v in _rule_verdicts(rec)), (rid, _rule_verdicts(rec))
        bad = flawed[rid]
        if rec["case_id"] in differ:
            assert bad["status"] == "failed", (rid, _rule_verdicts(bad))
            assert any(v["verdict"] == "fail" and v["reason"] for v in bad["verdicts"])
        elif rec["case_id"] in agree:
            assert _rule_verdicts(bad) == _rule_verdicts(rec), rid
            assert bad["status"] == rec["status"], rid
