"""The whole LLM path over real HTTP: an `openai:` agent, an `openai:` simulator and an `openai:` judge,
all answered by the local OpenAI-compatible stub server, driven through the CLI."""

from __future__ import annotations

import json
import re

from tests.integration.test_cli_run import records, usersim
from tests.support.openai_stub import OpenAIStub

PLAN = (
    "方案如下：机票：东方航空 MU729，7 月 15 日 上海→大阪，¥1,980/人；"
    "行程：第一天 大阪城，第二天 京都清水寺，第三天 奈良；酒店：大阪难波酒店，¥680/晚，共 5 晚。"
)


class Roles:
    """Answers each request by who sent it: the agent (has tools), the simulator, or the judge."""

    def __init__(self) -> None:
        self.seen = {"agent": 0, "simulator": 0, "judge": 0}
        self.bodies: list[dict] = []

    def __call__(self, body: dict) -> dict:
        self.bodies.append(body)
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if system.startswith("You are role-playing a USER"):
            self.seen["simulator"] += 1
            move = (
                {"message": "从上海出发，7 月中旬，2 个人，预算人均 1 万", "action": "continue"}
                if self.seen["simulator"] == 1
                else {"action": "stop", "reason": "机票、行程、酒店都有了"}
            )
            return {
                "content": json.dumps(move, ensure_ascii=False),
                "usage": {"prompt_tokens": 300, "completion_tokens": 20},
            }
        if "You audit a SIMULATED USER" in json.dumps(body["messages"], ensure_ascii=False):
            self.seen["judge"] += 1  # the LLM fidelity check
            checks = [
                {"check": c, "verdict": "pass"}
                for c in ("knowledge", "character", "reveal", "language", "events")
            ]
            return {
                "content": json.dumps({"checks": checks}),
                "usage": {"prompt_tokens": 700, "completion_tokens": 40},
            }
        if "Criteria to judge" in json.dumps(body["messages"], ensure_ascii=False):
            self.seen["judge"] += 1
            results = [
                {
                    "criterion_id": i,
                    "criterion": "c",
                    "verdict": "pass",
                    "reason": f"消息 5 给出了完整方案 ({i})",
                    "evidence_turn": 5,
                }
                # one result per criterion the prompt lists (an extra id is an error after repair)
                for i in map(int, re.findall(r"^(\d+)\. \[", body["messages"][0]["content"], re.M))
            ]
            return {
                "content": json.dumps({"results": results}, ensure_ascii=False),
                "usage": {"prompt_tokens": 900, "completion_tokens": 80},
            }
        self.seen["agent"] += 1
        last = body["messages"][-1]
        if last["role"] == "tool":
            return {"content": PLAN, "usage": {"prompt_tokens": 500, "completion_tokens": 60}}
        if sum(1 for m in body["messages"] if m["role"] == "user") == 1:
            return {
                "content": "好的！请问从哪里出发、几月去、几个人、预算多少？",
                "usage": {"prompt_tokens": 200, "completion_tokens": 20},
            }
        args = {"origin": "上海", "destination": "大阪", "departure_date": "2026-07-15", "passengers": 2}
        return {
            "tool_calls": [{"name": "search_flights", "arguments": args}],
            "usage": {"prompt_tokens": 400, "completion_tokens": 15},
        }


def test_openai_agent_simulator_and_judge_over_http(tmp_path):
    roles = Roles()
    out = tmp_path / "llm"
    secret = "sk-stub-SECRET-0123456789"
    with OpenAIStub(responder=roles) as stub:
        usersim(
            "run",
            "--id",
            "C2-TD-04",
            "--agent",
            "openai:agent-model",
            "--simulator",
            "openai:sim-model",
            "--judge-model",
            "openai:judge-model",
            "--out",
            str(out),
            "--no-progress",
            env={"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": secret, "USERSIM_NO_CACHE": "1"},
            check=False,  # a failed conversation exits 1; the records are what is checked
        )
    (rec,) = records(out)
    assert rec["stop_reason"] == "goal_met", rec["stop_detail"]
    assert [m["content"] for m in rec["transcript"] if m["role"] == "user"][0] == "我想暑假去日本玩"
    assert any(
        m.get("tool_calls") and m["tool_calls"][0]["name"] == "search_flights" for m in rec["transcript"]
    )
    llm = [v for v in rec["verdicts"] if v["judge"] == "llm_rubric"]
    assert llm and all(v["verdict"] == "pass" and "完整方案" in v["reason"] for v in llm)
    usage = rec["usage"]
    assert usage["agent"]["calls"] == roles.seen["agent"] and usage["agent"]["prompt_tokens"] > 0
    assert usage["simulator"]["calls"] >= 2 and usage["judge"]["calls"] >= 1
    assert {b["model"] for b in roles.bodies} == {"agent-model", "sim-model", "judge-model"}
    # the simulator's prompt never carries the judges' criteria
    sim_prompts = [json.dumps(b, ensure_ascii=False) for b in roles.bodies if b["model"] == "sim-model"]
    assert all("20 轮内完成了机票、行程、酒店三个核心任务" not in p for p in sim_prompts)
    for f in out.rglob("*"):
        if f.is_file():
            assert secret not in f.read_bytes().decode("utf-8", "ignore")
