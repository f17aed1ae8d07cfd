"""A weak local model's invalid replies are rejected and regenerated, never put in the user's mouth;
a conversation that ends as a simulator error shows that error as its reason on the console."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.simulator.test_llm_acceptance import CASE, FLIGHTS_AND_HOTEL, PERSONA, route, sim, users
from tests.support.cli import usersim
from tests.support.openai_stub import openai_stub, text  # noqa: F401  (fixture)


@pytest.fixture
def stub(openai_stub):  # noqa: F811
    """The running OpenAI stub (OPENAI_BASE_URL points at it)."""
    return openai_stub


# what SmolLM2-135M answered as the simulator: the answer nested in an object, no words for the user
INVALID = [
    {"message": {"description": {"action_code": "continue", "text": "6 月 15 号"}}},
    {"description": {"action_code": "continue", "text": "6 月 15 号"}},
    {"message": "{'description': {'action_code': 'continue'}}"},
    {"message": ["6 月 15 号"]},
    {"reply": "6 月 15 号", "action": "continue"},
]


def run_cli(tmp_path):
    cases, personas = tmp_path / "cases", tmp_path / "personas"
    cases.mkdir()
    personas.mkdir()
    (personas / "acc-user.yaml").write_text(yaml.safe_dump(PERSONA, allow_unicode=True), encoding="utf-8")
    (cases / "ACC-1.yaml").write_text(yaml.safe_dump(CASE, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    res = usersim(
        "run",
        str(cases),
        "--agent",
        "openai:agent-model",
        "--simulator",
        "openai:sim-model",
        "--personas",
        str(personas),
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    (line,) = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return res, json.loads(line)


@pytest.mark.parametrize("bad", INVALID, ids=lambda b: json.dumps(b, ensure_ascii=False)[:40])
def test_an_invalid_reply_is_rejected_and_regenerated_not_sent(stub, tmp_path, bad):
    route(
        stub,
        **{
            "agent-model": [text("请问几号出发？"), text(FLIGHTS_AND_HOTEL)],
            "sim-model": [
                text(json.dumps(bad, ensure_ascii=False)),
                sim("6 月 15 号"),
                sim("好的谢谢", "stop"),
            ],
        },
    )
    res, record = run_cli(tmp_path)
    said = users(record)
    assert said[1] == "6 月 15 号"  # the regenerated turn, not the object
    assert not any("description" in s or "action_code" in s or s.startswith(("{", "[")) for s in said)
    rejected = [e for e in record["sim_events"] if e["kind"] == "rejected"]
    assert rejected and rejected[0]["turn"] == 2 and "message" in rejected[0]["detail"]


def test_a_simulator_that_never_gives_a_valid_reply_shows_its_error_not_the_checks(stub, tmp_path):
    bad = text(json.dumps(INVALID[0]))
    route(stub, **{"agent-model": [text("请问几号出发？")], "sim-model": [bad]})
    res, record = run_cli(tmp_path)
    assert (record["status"], record["blame"], record["stop_reason"]) == (
        "error",
        "simulator",
        "simulator_error",
    )
    line = next(x for x in res.stdout.splitlines() if x.startswith("ACC-1"))
    assert "simulator_error: simulator openai:sim-model produced no valid turn" in line
    assert "keywords" not in line  # the failed check on the cut-short transcript is not the reason
    assert len(users(record)) == 1  # only the scripted opening was ever said


def fidelity_answer(knowledge: str) -> dict:
    checks = [{"check": "knowledge", "verdict": knowledge, "reasoning": f"knowledge {knowledge}", "turn": 2}]
    checks += [{"check": c, "verdict": "pass"} for c in ("character", "reveal", "language", "events")]
    return text(json.dumps({"checks": checks}))


def test_the_fidelity_judge_asks_every_model_of_an_ensemble_and_takes_the_majority(stub, tmp_path):
    route(
        stub,
        **{
            "agent-model": [text("请问几号出发？"), text(FLIGHTS_AND_HOTEL)],
            "sim-model": [sim("6 月 15 号"), sim("好的谢谢", "stop")],
            "judge-a": [fidelity_answer("fail")],
            "judge-b": [fidelity_answer("pass")],
            "judge-c": [fidelity_answer("fail")],
        },
    )
    cases, personas = tmp_path / "cases", tmp_path / "personas"
    cases.mkdir()
    personas.mkdir()
    (personas / "acc-user.yaml").write_text(yaml.safe_dump(PERSONA, allow_unicode=True), encoding="utf-8")
    (cases / "ACC-1.yaml").write_text(yaml.safe_dump(CASE, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    usersim(
        "run", str(cases), "--agent", "openai:agent-model", "--simulator", "openai:sim-model",
        "--personas", str(personas), "--out", str(out), "--no-progress",
        "--judge-model", "openai:judge-a", "--judge-model", "openai:judge-b", "--judge-model", "openai:judge-c",
        check=False,
    )  # fmt: skip
    asked = {
        r["model"] for r in stub.requests if "knowledge" in json.dumps(r["messages"], ensure_ascii=False)
    }
    assert {"judge-a", "judge-b", "judge-c"} <= asked  # not only the first model of the ensemble
    (line,) = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    knowledge = next(v for v in json.loads(line)["verdicts"] if v["judge"] == "fidelity.llm.knowledge")
    assert knowledge["verdict"] == "fail"  # two of three
    assert knowledge["details"]["votes"] == {
        "openai:judge-a": "fail",
        "openai:judge-b": "pass",
        "openai:judge-c": "fail",
    }
