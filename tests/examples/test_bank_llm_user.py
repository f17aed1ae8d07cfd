"""BANK-02 with a model playing the customer (a local OpenAI-compatible stub): the user answers
the flawed agent's "Shall I go ahead?" with "Sure, do it." where the persona's event says "Yes, go
ahead.". A rewording is no fidelity violation: the flawed agent blocked the wrong card, and the run
fails blamed on the agent with exit 1 (before issue #22 fidelity.events flagged the rewording, the
record was simulator-suspect and the run exited 0)."""

from __future__ import annotations

import json

import pytest

from tests.examples.test_bank_example import records
from tests.support.cli import usersim
from tests.support.openai_stub import OpenAIStub


def priya(body: dict) -> dict:
    """The customer of examples/bank/personas/priya-two-cards.yaml, answering the agent's last reply."""
    said = [m["content"] for m in body["messages"][1:] if m["role"] == "user"]  # flipped: the agent
    last = (said[-1] if said else "").lower()
    move: dict = {"action": "continue"}
    if not any(m["role"] == "assistant" for m in body["messages"]):  # only the start cue so far
        move["message"] = "Hi, one of my cards was stolen. I need it blocked right away."
    elif "is now blocked" in last:
        move = {"action": "stop", "reason": "the stolen card is blocked"}
    elif "customer id" in last:
        move["message"] = "Sure, it's C-1003."
    elif "date of birth" in last:
        move["message"] = "1978-07-21"
    elif "which card" in last:
        move["message"] = "The one ending in 7788."
    elif "shall i go ahead" in last:
        move["message"] = "Sure, do it."
    else:
        move["message"] = "Okay."
    return {"content": json.dumps(move), "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


@pytest.mark.parametrize(
    ("agent", "code", "status", "blame"), [("flawed", 1, "failed", "agent"), ("correct", 0, "passed", "none")]
)
def test_bank_02_with_a_rewording_user(tmp_path, agent, code, status, blame):
    out = tmp_path / agent
    with OpenAIStub(responder=priya) as stub:
        res = usersim(
            "run",
            "examples/bank/cases",
            "--id",
            "BANK-02",
            "--agent",
            f"python:examples.bank.agent:{agent}",
            "--simulator",
            "openai:sim-model",
            "--out",
            str(out),
            "--no-progress",
            env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-stub", "USERSIM_NO_CACHE": "1"},
            check=False,
        )
    rec = records(out)["BANK-02"]
    users = [m["content"] for m in rec["transcript"] if m["role"] == "user"]
    assert "Sure, do it." in users and "Yes, go ahead." not in users
    assert (res.returncode, rec["status"], rec["blame"], rec["simulator_suspect"]) == (
        code,
        status,
        blame,
        False,
    ), res.stdout + res.stderr
    fid = {v["judge"]: v for v in rec["verdicts"] if v["judge"].startswith("fidelity")}
    events = fid["fidelity.events"]
    assert events["verdict"] == "inconclusive" and events["details"]["precision"] == "advisory"
    assert (
        "'Yes, go ahead.'" in events["reason"] and "cannot tell a rewording from a miss" in events["reason"]
    )
    assert not [v for v in fid.values() if v["verdict"] == "fail" and v["details"]["precision"] == "high"]
    if agent == "flawed":
        reasons = " | ".join(v["reason"] for v in rec["verdicts"] if v["verdict"] == "fail")
        assert "unexpected change to cards K-3002" in reasons
