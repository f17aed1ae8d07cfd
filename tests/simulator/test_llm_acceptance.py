"""Issue 16 acceptance: the LLM simulator over a scripted OpenAI-compatible server, through the CLI.

One stub serves three models: `agent-model` (the agent under test), `sim-model` (the simulated
user) and `judge-model` (fidelity). Each test scripts what the models say and checks what the
framework decided: the model's stop stands, nothing is put in the user's mouth, simulator and
endpoint failures are `error` with the right blame, unfaithful users are simulator-suspect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import usersim
from tests.support.openai_stub import error, openai_stub, slow, text  # noqa: F401  (fixture)

FLIGHTS_AND_HOTEL = (
    "为你找到航班：东航 MU523 6月15日 08:00 起飞 ¥1800/人；酒店：难波日航，入住 6月15日，¥800/晚。"
)
PERSONA: dict[str, Any] = {
    "id": "acc-user",
    "name": "测试用户",
    "language": "zh",
    "identity": "上海的上班族，想去大阪玩",
    "goal": {
        "description": "订去大阪的机票和酒店",
        "required": ["flights", "hotel"],
        "deliverable_keywords": {"flights": ["起飞", "航班号"], "hotel": ["入住", "/晚"]},
        "constraints": {"max_price": 3000},
    },
    "known_info": [
        {"slot": "origin", "value": "上海"},
        {"slot": "dates", "value": "6 月 15 号"},
        {"slot": "party_size", "value": "2 个人"},
    ],
    "unknown_info": ["酒店房价: 每晚 888 元"],
    "reveal_policy": "when_asked",
    "max_turns": 6,
}
CASE: dict[str, Any] = {
    "id": "ACC-1",
    "dimension": "C2",
    "title": "LLM simulator acceptance",
    "mode": "organic",
    "persona": "acc-user",
    "max_turns": 6,
    "input": {"message": "帮我订去大阪的机票和酒店"},
    "judging": {
        "scoring": {"methods": ["auto"]},
        "checks": [{"keywords": {"scope": "assistant", "any": ["航班"]}}],
    },
}


@pytest.fixture
def stub(openai_stub):  # noqa: F811
    """The running OpenAI stub (OPENAI_BASE_URL points at it)."""
    return openai_stub


def sim(message: str, action: str = "continue", reason: str = "") -> dict[str, Any]:
    return text(json.dumps({"message": message, "action": action, "reason": reason}, ensure_ascii=False))


def route(stub, **scripts: list[dict[str, Any]]) -> None:
    """Answer each model from its own script; the last reply repeats."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        queue = scripts[body["model"]]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    stub.responder = respond


def run(tmp_path: Path, *extra: str, persona: dict | None = None) -> tuple[dict, dict, str]:
    """usersim run on the one case; returns (record, summary, report.html)."""
    cases, personas = tmp_path / "cases", tmp_path / "personas"
    cases.mkdir()
    personas.mkdir()
    (personas / "acc-user.yaml").write_text(
        yaml.safe_dump(persona or PERSONA, allow_unicode=True), encoding="utf-8"
    )
    (cases / "ACC-1.yaml").write_text(yaml.safe_dump(CASE, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    res = usersim(
        "run",
        str(cases),
        "--agent",
        "openai:agent-model",
        "--simulator",
        "openai:sim-model",
        "--out",
        str(out),
        "--no-progress",
        "--personas",
        str(personas),
        *extra,
        check=False,
    )
    assert res.returncode in (0, 1), res.stdout + res.stderr
    (line,) = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return json.loads(line), summary, (out / "report.html").read_text(encoding="utf-8")


def users(record: dict) -> list[str]:
    return [m["content"] for m in record["transcript"] if m["role"] == "user"]


def kinds(record: dict) -> list[str]:
    return [e["kind"] for e in record["sim_events"]]


def test_plain_text_stop_token_ends_the_conversation_with_the_models_stop(stub, tmp_path):
    route(
        stub,
        **{"agent-model": [text(FLIGHTS_AND_HOTEL)], "sim-model": [text("好的，就订这些，谢谢！###STOP###")]},
    )
    record, summary, _ = run(tmp_path)
    assert record["stop_reason"] == "goal_met" and record["turns"] == 2
    assert users(record) == ["帮我订去大阪的机票和酒店", "好的，就订这些，谢谢！"]  # the token never stays
    assert "###" not in json.dumps(record["transcript"], ensure_ascii=False)
    assert record["status"] == "passed" and record["blame"] == "none"
    assert kinds(record) == ["stop_accepted"] and "plain-text stop token" in record["sim_events"][0]["detail"]
    assert summary["totals"]["pass_rate"] == 1.0
    traits = summary["persona_traits"]["acc-user"]  # measured on the simulator's own turns
    assert (
        traits["conversations"] == 1
        and traits["verbosity"] == "medium"
        and traits["mean_chars"] == len("好的，就订这些，谢谢！")
    )


def test_a_stop_after_an_unrecognised_delivery_is_accepted_and_no_line_is_injected(stub, tmp_path):
    done = "都订好了：东航早上八点那班，难波日航两晚，确认单发你邮箱了。"
    route(
        stub,
        **{"agent-model": [text(done)], "sim-model": [sim("太好了，谢谢！", "stop", "both booked")]},
    )
    record, _, _ = run(tmp_path)
    assert record["stop_reason"] == "goal_met" and record["stop_detail"] == "both booked"
    assert users(record) == [
        "帮我订去大阪的机票和酒店",
        "太好了，谢谢！",
    ]  # every user line the model's or the case's
    (event,) = record["sim_events"]
    assert event["kind"] == "stop_accepted" and "left to the task-completion judge" in event["detail"]
    sim_calls = [r for r in stub.requests if r["model"] == "sim-model"]
    assert len(sim_calls) == 1  # the stop was not refused and re-asked


def test_a_simulator_failing_three_times_is_an_error_blamed_on_the_simulator(stub, tmp_path):
    route(
        stub,
        **{
            "agent-model": [text("请问几号出发？")],
            "sim-model": [text(""), sim("我来为您查询航班，请问您想几号出发？"), sim("好的", "dance")],
        },
    )
    record, summary, html = run(tmp_path)
    assert record["status"] == "error" and record["blame"] == "simulator"
    assert (
        record["stop_reason"] == "simulator_error" and "no valid turn in 3 attempts" in record["stop_detail"]
    )
    assert kinds(record) == ["rejected", "retry", "guard", "retry", "rejected"]
    assert (
        "character" in record["sim_events"][2]["detail"]
        and "unknown action 'dance'" in record["sim_events"][4]["detail"]
    )
    assert users(record) == ["帮我订去大阪的机票和酒店"]
    # an error is judged and not a pass (the gate's rule): in the pass rate's denominator
    assert summary["blame"] == {"simulator": 1} and summary["totals"]["pass_rate_text"] == "0/1 = 0.0%"
    assert "blame simulator" in html and "Simulator events (5)" in html


def test_an_agent_endpoint_timing_out_is_an_error_blamed_on_infrastructure(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_TIMEOUT_S", "0.3")
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")
    route(stub, **{"agent-model": [slow(1.0, text("late"))], "sim-model": [sim("上海")]})
    record, summary, _ = run(tmp_path)
    # the rule check (keywords 航班) fails on the empty conversation, but an outage is not the agent's failure
    assert record["status"] == "error" and record["blame"] == "infrastructure"
    assert record["stop_reason"] == "agent_error" and "timed out" in record["stop_detail"]
    assert summary["blame"] == {"infrastructure": 1} and summary["totals"]["failed"] == 0


def test_a_simulator_endpoint_down_is_an_error_blamed_on_infrastructure(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("USERSIM_LLM_MAX_ATTEMPTS", "2")
    route(stub, **{"agent-model": [text("请问几号出发？")], "sim-model": [error(503)]})
    record, summary, _ = run(tmp_path)
    assert record["status"] == "error" and record["blame"] == "infrastructure"
    assert record["stop_reason"] == "simulator_error" and "HTTP 503" in record["stop_detail"]
    assert kinds(record) == ["rejected"] and "model call failed" in record["sim_events"][0]["detail"]


def test_a_paraphrased_leak_is_an_advisory_fidelity_fail_that_never_excuses_the_agent(stub, tmp_path):
    # issue #22: the judge model's reading is not checked against what the agent did with it, so it
    # is shown (advisory) and the agent's own failure stands (this record was simulator-suspect before)
    judge = {
        "checks": [
            {
                "check": "knowledge",
                "evidence": "八百多一晚",
                "turn": 2,
                "reasoning": "paraphrases the hidden price",
                "verdict": "fail",
            },
            *[{"check": c, "verdict": "pass"} for c in ("character", "reveal", "language", "events")],
        ]
    }
    route(
        stub,
        **{
            "agent-model": [text("请问酒店预算多少？"), text("好的，推荐难波日航")],
            "sim-model": [sim("听说那边酒店八百多一晚"), sim("算了", "give_up", "not helpful")],
            "judge-model": [text(json.dumps(judge, ensure_ascii=False))],
        },
    )
    record, summary, html = run(tmp_path, "--judge-model", "openai:judge-model")
    verdicts = {v["judge"]: v for v in record["verdicts"]}
    assert verdicts["fidelity.leak"]["verdict"] == "pass"  # the rules cannot see the paraphrase
    knowledge = verdicts["fidelity.llm.knowledge"]
    assert knowledge["verdict"] == "fail" and knowledge["details"]["precision"] == "advisory"
    assert knowledge["details"]["turn"] == 2 and knowledge["details"]["kind"] == "llm.knowledge"
    assert (
        record["simulator_suspect"] is False and record["status"] == "failed" and record["blame"] == "agent"
    )
    assert summary["simulator_suspects"] == []
    assert summary["totals"]["pass_rate_text"] == "0/1 = 0.0%"
    assert "fidelity.llm.knowledge" in html


@pytest.mark.parametrize(
    ("bad", "guard"),
    [
        ("我来为您查询航班，请问您想几号出发？", "character"),
        ("I would like to book flights from Shanghai to Osaka please", "language"),
        ("我们 4 个人，预算1万", "invented"),
    ],
)
def test_assistant_voice_language_switch_and_invented_facts_are_guard_hits(stub, tmp_path, bad, guard):
    route(
        stub,
        **{
            "agent-model": [text("请问从哪里出发？"), text(FLIGHTS_AND_HOTEL)],
            "sim-model": [sim(bad), sim("上海出发"), sim("好的谢谢", "stop")],
        },
    )
    record, _, html = run(tmp_path)
    assert bad not in users(record)  # never reaches the agent
    hit = next(e for e in record["sim_events"] if e["kind"] == "guard")
    assert hit["turn"] == 2 and hit["detail"].startswith(f"attempt 1: {guard}:")
    assert "guard" in html


def test_an_unfaithful_turn_that_passes_the_guards_fails_rule_fidelity(stub, tmp_path):
    # no judge model: the rule fallback still fails a user who dumps every fact at once (when_asked)
    route(
        stub,
        **{
            "agent-model": [text("请问从哪里出发？"), text(FLIGHTS_AND_HOTEL)],
            "sim-model": [sim("上海出发，6 月 15 号，2 个人"), sim("好的谢谢", "stop")],
        },
    )
    record, summary, html = run(tmp_path)
    verdicts = {v["judge"]: v for v in record["verdicts"]}
    reveal = verdicts["fidelity.reveal"]
    assert reveal["verdict"] == "fail" and reveal["details"]["precision"] == "advisory"
    # a wording heuristic is shown, never a suspect (issue #22; this record was suspect before)
    assert record["status"] == "passed" and record["simulator_suspect"] is False
    assert "fidelity.reveal" in html


def test_an_event_never_said_is_reported_and_its_constraint_not_applied(stub, tmp_path):
    persona = dict(PERSONA)
    persona["events"] = [
        {
            "at_turn": 2,
            "kind": "add_constraint",
            "slot": "max_price",
            "value": "1500",
            "text": "预算改成 1500 以内",
        }
    ]
    route(
        stub,
        **{
            "agent-model": [text("请问几号出发？"), text(FLIGHTS_AND_HOTEL)],
            "sim-model": [sim("6 月 15 号"), sim("好的，就这个", "stop")],
        },
    )
    record, _, html = run(tmp_path, persona=persona)
    # the model was reminded on both turns, never said it: reported at the end
    assert kinds(record) == ["event_reminded", "event_reminded", "stop_accepted", "event_missed"]
    missed = record["sim_events"][-1]["detail"]
    assert "max_price = '1500'" in missed and "never said" in missed
    # the reminder is this turn's note: the request's last message, after the conversation
    sim_prompts = [r["messages"][-1]["content"] for r in stub.requests if r["model"] == "sim-model"]
    assert "Since turn 2 (you have not said it yet)" in sim_prompts[1]
    verdicts = {v["judge"]: v for v in record["verdicts"]}
    # ¥1800 breaks the unsaid 1500 limit, but the agent was never told it: not swayed, not failed for it
    assert (
        verdicts["fidelity.swayed"]["verdict"] == "pass" and verdicts["fidelity.events"]["verdict"] == "fail"
    )
    assert "event_missed" in html


def test_sim_events_are_on_every_organic_record(tmp_path):
    out = tmp_path / "out"
    usersim("run", "usersim/cases/c2", "--id", "C2-TD-04", "--out", str(out), "--no-progress", check=False)
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert record["mode"] == "organic" and record["sim_events"]
        assert record["schema_version"] == 4 and record["blame"] in (
            "agent",
            "simulator",
            "infrastructure",
            "case",
            "none",
        )
