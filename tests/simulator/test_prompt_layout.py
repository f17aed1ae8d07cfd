"""Prompts laid out for provider prompt caches: what stays the same comes first, the growing
conversation after it, the per-call part last — so each turn's request starts with the whole of the
previous turn's request but its trailing per-call part (what a provider's cache can reuse).

Asserted on real built prompts: the requests a real run sends over HTTP, and build_messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import usersim
from tests.simulator.helpers import persona, view
from tests.support.openai_stub import OpenAIStub
from usersim.core.messages import Message
from usersim.simulator.llm_prompt import build_messages

LINES = ["从上海出发，7 月 15 号左右", "2 个人，预算一万", "想逛街吃东西", "好的"]
CASE = {
    "id": "LAYOUT-01",
    "dimension": "C2",
    "category": "TD",
    "title": "layout — organic travel planning",
    "mode": "organic",
    "persona": "japan-first-trip",
    "persona_overrides": {"events": []},
    "goal": "最终规划出包含机票、行程、酒店的完整方案",
    "max_turns": 6,
    "input": {"message": "我想暑假去日本玩"},
    "judging": {
        "checks": [{"stop_reason": {"in": ["max_turns"]}}],
        "scoring": {"methods": ["auto"], "note": "rules"},
    },
}


def responder(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    if body["model"] == "sim":  # the user's own lines come back as `assistant`, one per agent reply
        answered = sum(m["role"] == "assistant" for m in messages)
        if answered > len(LINES):
            return {"content": json.dumps({"action": "stop", "reason": "done"})}
        move = {"action": "continue", "message": LINES[answered - 1]}
        return {"content": json.dumps(move, ensure_ascii=False)}
    return {"content": f"好的，第 {len(messages)} 条：机票 MU729 ¥1980；酒店 ¥680/晚。"}


@pytest.fixture
def requests_of_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, Any]]]:
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump(CASE, allow_unicode=True), encoding="utf-8")
    with OpenAIStub(responder=responder) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("USERSIM_NO_CACHE", "1")
        monkeypatch.setenv("USERSIM_SKIP_MODEL_CHECK", "1")
        result = usersim.run(str(case), agent="openai:agent", simulator="openai:sim", out=tmp_path / "run")
        requests = list(stub.requests)
    assert [r.status for r in result.records] != ["error"], result.explain()
    by_model: dict[str, list[dict[str, Any]]] = {}
    for body in requests:
        by_model.setdefault(body["model"], []).append(body)
    return by_model


def test_each_simulator_request_starts_with_the_previous_one_but_its_turn_note(requests_of_a_run):
    sims = requests_of_a_run["sim"]
    assert len(sims) == len(LINES) + 1  # turns 2..6: a line each, then the stop
    for before, after in zip(sims, sims[1:], strict=False):
        kept = before["messages"][:-1]  # all but this turn's note
        assert after["messages"][: len(kept)] == kept
        # the part left out is per call: it names its turn, and the next request's differs
        assert "This turn (turn" in before["messages"][-1]["content"]
        assert before["messages"][-1] != after["messages"][-1]
        assert before.get("response_format") == after.get("response_format")
    # ...and the per-call part is nowhere else: the system prompt is the same on every turn
    assert len({s["messages"][0]["content"] for s in sims}) == 1
    assert "turn 2 of" not in sims[0]["messages"][0]["content"]


def test_each_agent_request_starts_with_the_whole_previous_one(requests_of_a_run):
    agents = requests_of_a_run["agent"]
    assert len(agents) == len(LINES) + 1
    for before, after in zip(agents, agents[1:], strict=False):
        assert after["messages"][: len(before["messages"])] == before["messages"]
        assert after.get("tools") == before.get("tools")


def test_a_due_event_goes_in_the_turn_note_and_leaves_the_prefix_alone():
    # a `say` event changes no fact: the goal in force stays, so only the note tells the model
    p = persona(events=[{"at_turn": 3, "kind": "say", "text": "我其实更想去京都"}])
    t2 = [Message(role="user", content="帮我订去大阪的票"), Message(role="assistant", content="从哪里出发？")]
    t3 = t2 + [Message(role="user", content="上海"), Message(role="assistant", content="几号出发？")]
    turn2, turn3 = build_messages(view(p, t2, 2)), build_messages(view(p, t3, 3))
    assert turn3[: len(turn2) - 1] == turn2[:-1]
    assert "京都" not in turn2[-1]["content"] and "Now: you bring this up." in turn3[-1]["content"]
    assert "京都" in turn3[-1]["content"] and "京都" not in turn3[0]["content"]


def test_the_first_turn_has_the_start_cue_in_its_trailing_note():
    msgs = build_messages(view(persona(), [], 1, opening=None))
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "turn 1 of 20" in msgs[1]["content"] and "Write your first message" in msgs[1]["content"]
