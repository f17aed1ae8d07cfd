"""The conversation graph: static replay fidelity, organic stop reasons, tool loop, judge isolation."""

from __future__ import annotations

import pytest

from tests.graphs.fakes import CountingJudge, FakeSandbox, RecordingAgent, ScriptedSimulator
from usersim.cases.schema import Case
from usersim.core.messages import Message, ToolCall
from usersim.graphs.context import RunContext
from usersim.graphs.conversation import graph
from usersim.personas.schema import Goal, Persona
from usersim.simulator.base import SimulatorError, SimulatorTurn

HISTORY = [
    Message(role="user", content="我下周要去京都玩 5 天"),
    Message(
        role="assistant",
        content="",
        tool_calls=[ToolCall(id="t1", name="web_search", arguments={"query": "京都 景点"})],
    ),
    Message(role="tool", content='{"results": ["清水寺"]}', tool_call_id="t1", name="web_search"),
    Message(role="assistant", content="京都 5 天路线：Day 1 岚山……"),
]


def static_case(**kw) -> Case:
    data = {
        "id": "T-1",
        "dimension": "B1",
        "title": "t",
        "input": {"history": [m.model_dump() for m in HISTORY], "message": "住哪里比较方便"},
        "judging": {"scoring": {"methods": ["auto"]}},
    }
    data.update(kw)
    return Case.model_validate(data)


def organic_case(max_turns: int = 4) -> Case:
    return Case.model_validate(
        {
            "id": "O-1",
            "dimension": "C2",
            "title": "organic",
            "mode": "organic",
            "persona": "p",
            "goal": "plan",
            "max_turns": max_turns,
            "input": {"message": "我想暑假去日本玩"},
            "judging": {"scoring": {"methods": ["llm_judge"]}},
        }
    )


PERSONA = Persona(id="p", name="P", identity="first trip", goal=Goal(description="plan", required=["plan"]))


async def run(case, agent, sim=None, sandbox=None, judges=None, max_tool_rounds=8):
    ctx = RunContext(
        case=case,
        agent=agent,
        sandbox=sandbox or FakeSandbox({"web_search": '{"ok": 1}'}),
        judges=judges if judges is not None else [CountingJudge()],
        simulator=sim,
        persona=PERSONA if sim else None,
        max_tool_rounds=max_tool_rounds,
    )
    return await graph.ainvoke({}, context=ctx, config={"recursion_limit": 100})


async def test_static_replay_gives_agent_exactly_the_case_history():
    agent = RecordingAgent()
    final = await run(static_case(), agent)
    assert len(agent.inputs) == 1
    seen = agent.inputs[0].messages
    assert seen[0].role == "system" and "2026-04-07" in seen[0].content
    assert seen[1:] == HISTORY + [Message(role="user", content="住哪里比较方便")]
    assert final["stop"].reason == "replay_complete"
    assert final["turn"] == 1
    assert final["turn_starts"] == [len(HISTORY)]


async def test_static_script_turns_are_answered_live_in_order():
    case = static_case(input={"message": "第一句", "script": ["第二句", "第三句"]})
    agent = RecordingAgent()
    final = await run(case, agent)
    users = [m.content for m in final["messages"] if m.role == "user"]
    assert users == ["第一句", "第二句", "第三句"]
    assert [m.content for m in final["messages"] if m.role == "assistant"] == [
        "回答第 1 轮",
        "回答第 2 轮",
        "回答第 3 轮",
    ]
    assert final["turn_starts"] == [0, 2, 4]


async def test_tool_calls_run_through_sandbox_and_are_traced_with_turn_and_index():
    sandbox = FakeSandbox({"web_search": '{"hotels": ["京都站酒店"]}'})
    final = await run(static_case(), RecordingAgent(tool="web_search"), sandbox=sandbox)
    assert sandbox.calls == [("web_search", {"q": "x"}, 1)]
    (event,) = final["tool_trace"]
    assert event.turn == 1 and event.call_number == 1
    tool_msg = final["messages"][event.message_index]
    assert tool_msg.role == "tool" and tool_msg.content == '{"hotels": ["京都站酒店"]}'
    assert final["messages"][-1].content == "回答第 1 轮"


async def test_agent_error_stops_with_reason_and_still_judges():
    judge = CountingJudge()
    final = await run(static_case(), RecordingAgent(fail_on_turn=1), judges=[judge])
    assert final["stop"].reason == "agent_error"
    assert "returned 500" in final["stop"].detail
    assert final["verdicts"][0].judge == "counting"


async def test_endless_tool_loop_is_bounded():
    final = await run(static_case(), RecordingAgent(loop_forever=True), max_tool_rounds=3)
    assert final["stop"].reason == "agent_error"
    assert "after 3 rounds" in final["stop"].detail
    assert len(final["tool_trace"]) == 3


@pytest.mark.parametrize(
    "moves, reason",
    [
        (
            [
                SimulatorTurn(message="我想暑假去日本玩"),
                SimulatorTurn(stop="goal_met", reason="plan complete"),
            ],
            "goal_met",
        ),
        (
            [SimulatorTurn(message="我想暑假去日本玩"), SimulatorTurn(stop="gave_up", reason="patience")],
            "gave_up",
        ),
        ([SimulatorTurn(message="a"), SimulatorTurn(message="b"), SimulatorTurn(message="c")], "max_turns"),
        ([SimulatorTurn(message="a"), SimulatorError("role flip 3 times")], "simulator_error"),
        ([SimulatorTurn(message="a"), SimulatorTurn(message="   ")], "simulator_error"),
    ],
)
async def test_organic_stop_reasons(moves, reason):
    sim = ScriptedSimulator(moves)
    final = await run(organic_case(max_turns=3), RecordingAgent(), sim=sim)
    assert final["stop"].reason == reason
    if reason == "max_turns":
        assert final["turn"] == 3
        assert "max_turns=3" in final["stop"].detail


async def test_simulator_never_sees_tool_messages():
    sim = ScriptedSimulator(
        [SimulatorTurn(message="a"), SimulatorTurn(message="b"), SimulatorTurn(stop="goal_met")]
    )
    await run(organic_case(), RecordingAgent(tool="web_search"), sim=sim)
    second = sim.views[1]
    assert [m.role for m in second.transcript] == ["user", "assistant"]
    assert second.turn == 2 and second.max_turns == 4


async def test_crashing_judge_becomes_error_verdict():
    class Broken:
        name = "broken"

        async def __call__(self, **kw):
            raise RuntimeError("boom")

    final = await run(static_case(), RecordingAgent(), judges=[Broken(), CountingJudge()])
    assert [(v.judge, v.verdict) for v in final["verdicts"]] == [("broken", "error"), ("counting", "pass")]
    assert "boom" in final["verdicts"][0].reason
