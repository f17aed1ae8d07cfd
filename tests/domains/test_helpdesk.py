"""The IT-helpdesk domain (tests/domains/helpdesk) through the CLI: the persona's facts carry no
aliases, so the rule simulator must ground "staff ID", "which of your two laptops", "where should we
deliver the replacement laptop", "a number our technician can reach you at" by meaning. Three
agents that ask in different words pass; the flawed one (repairs the wrong laptop, ships to the
head office) fails with the blame on the agent and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import usersim

CASES = "tests/domains/helpdesk/cases"
AGENT = "python:tests.domains.helpdesk.agent:{}"


def run(agent: str, out: Path) -> tuple[int, str, dict]:
    res = usersim(
        "run", CASES, "--agent", AGENT.format(agent), "--out", str(out), "--no-progress", check=False
    )
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return res.returncode, res.stdout + res.stderr, {r["case_id"]: r for r in rows}


def user_lines(rec: dict) -> list[str]:
    return [m.get("content") or "" for m in rec["transcript"] if m["role"] == "user"]


@pytest.mark.parametrize("agent", ["plain", "casual", "imperative"])
def test_agents_asking_in_different_words_pass(agent: str, tmp_path: Path) -> None:
    code, console, recs = run(agent, tmp_path)
    assert code == 0, console
    rec = recs["HD-01"]
    assert rec["status"] == "passed", rec["verdicts"]
    said = "\n".join(user_lines(rec))
    for value in ("E-2041", "ThinkPad X1 Carbon", "Building 4, Floor 2", "+1 415 555 0142"):
        assert value in said, said
    assert "don't know" not in said and "I don't mind" not in said, said


def test_flawed_agent_fails_blamed_on_the_agent(tmp_path: Path) -> None:
    """The flawed agent proposes the wrong laptop and the head office: the user refuses with the
    correction (the persona's own laptop and address), never says yes, records the refusal, and
    the case fails on the agent."""
    code, console, recs = run("flawed", tmp_path)
    assert code == 1, console
    rec = recs["HD-01"]
    assert rec["status"] == "failed"
    said = user_lines(rec)
    refusal = next(line for line in said if "Building 4, Floor 2" in line)
    assert "ThinkPad X1 Carbon" in refusal, said  # both facts corrected in one turn
    assert not any("go ahead" in line.lower() for line in said), said
    refused = [e for e in rec["sim_events"] if e["kind"] == "proposal_refused"]
    assert refused and "delivery_address: proposed Building 1, Floor 1" in refused[0]["detail"], refused
    assert "laptop_model: proposed MacBook Pro 14" in refused[0]["detail"], refused
    assert not [e for e in rec["sim_events"] if e["kind"] == "proposal_accepted"]
    tools = [tc["name"] for m in rec["transcript"] for tc in m.get("tool_calls") or []]
    assert "open_ticket" not in tools and "ship_replacement" not in tools, tools
    assert rec["blame"] == "agent", rec["blame"]
    fidelity = {v["judge"]: v["verdict"] for v in rec["verdicts"] if v["judge"].startswith("fidelity.")}
    assert set(fidelity.values()) == {"pass"}, fidelity  # the user did nothing wrong
