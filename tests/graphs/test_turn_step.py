"""The conversation is one superstep: the `turn` node plays turn after turn (the user's move, then
the agent's answer) until one stops it, and the state it leaves is the one a superstep per half
(or per turn) would have left."""

from __future__ import annotations

import gc

from tests.graphs.fakes import CountingJudge, FakeSandbox, RecordingAgent, ScriptedSimulator
from tests.graphs.test_conversation import PERSONA, organic_case
from usersim.core.events import SimEvent, ToolEvent, Usage
from usersim.core.messages import Message
from usersim.graphs.context import RunContext
from usersim.graphs.conversation import graph
from usersim.graphs.heap import YOUNG_THRESHOLD, quiet_heap
from usersim.graphs.nodes import fold
from usersim.simulator.base import SimulatorTurn


def _ctx(agent, sim, sandbox=None) -> RunContext:
    return RunContext(
        case=organic_case(max_turns=6),
        agent=agent,
        sandbox=sandbox or FakeSandbox({"web_search": '{"ok": 1}'}),
        judges=[CountingJudge()],
        simulator=sim,
        persona=PERSONA,
    )


async def _steps(ctx: RunContext) -> tuple[list[str], dict]:
    """The nodes each superstep ran, and the final state."""
    nodes: list[str] = []
    final: dict = {}
    config = {"recursion_limit": 60}
    async for mode, chunk in graph.astream({}, context=ctx, stream_mode=["updates", "values"], config=config):
        if mode == "updates":
            nodes.extend(chunk)
        else:
            final = chunk
    return nodes, final


_MOVES = [
    SimulatorTurn(message="从上海出发"),
    SimulatorTurn(message="两个人"),
    SimulatorTurn(stop="goal_met", reason="够了"),
]


async def test_the_turns_are_one_superstep_then_one_for_the_judges_and_finalize():
    agent = RecordingAgent()
    nodes, final = await _steps(_ctx(agent, ScriptedSimulator(_MOVES)))
    # two answered turns, then the turn whose user half stops: it never reaches the agent
    assert nodes == ["turn", "judge"]  # every turn in one superstep; the judge node also finalizes
    assert [inp.turn for inp in agent.inputs] == [1, 2]
    assert [(m.role, m.content) for m in final["messages"]] == [
        ("user", "从上海出发"),
        ("assistant", "回答第 1 轮"),
        ("user", "两个人"),
        ("assistant", "回答第 2 轮"),
    ]
    assert final["turn"] == 2 and final["turn_starts"] == [0, 2]
    assert final["stop"].reason == "goal_met" and final["stop"].detail == "够了"
    assert final["tool_trace"] == [] and final["skill_events"] == []  # never written: still lists
    assert final["final"] is not None


async def test_the_agent_half_sees_the_user_line_of_its_own_turn_and_its_tools_are_traced():
    agent = RecordingAgent(tool="web_search")
    moves = [SimulatorTurn(message="住哪里"), SimulatorTurn(message="预算呢"), SimulatorTurn(stop="goal_met")]
    final = await graph.ainvoke(
        {}, context=_ctx(agent, ScriptedSimulator(moves)), config={"recursion_limit": 60}
    )
    first_of_turn = {inp.turn: inp.messages[-1] for inp in reversed(agent.inputs)}
    assert first_of_turn[2] == Message(role="user", content="预算呢")
    assert [(e.name, e.turn, e.message_index) for e in final["tool_trace"]] == [
        ("web_search", 1, 2),
        ("web_search", 2, 6),
    ]


async def test_an_agent_error_in_a_turn_goes_to_the_judges_with_the_user_line_kept():
    agent = RecordingAgent(fail_on_turn=2)
    moves = [SimulatorTurn(message="预算一万"), SimulatorTurn(message="两个人")]
    final = await graph.ainvoke(
        {}, context=_ctx(agent, ScriptedSimulator(moves)), config={"recursion_limit": 60}
    )
    assert final["stop"].reason == "agent_error" and "returned 500" in final["stop"].detail
    assert final["messages"][-1] == Message(role="user", content="两个人")
    assert final["turn"] == 2
    assert final["final"] is not None  # judged and finalized all the same


def test_fold_applies_an_update_as_the_channels_do():
    usage = Usage(calls=1, prompt_tokens=10, completion_tokens=2, cost_usd=0.001)
    state = {
        "messages": [Message(role="user", content="a")],
        "turn": 1,
        "usage": {"simulator": usage},
        "tool_trace": [],
        "sim_events": [],
    }
    event = ToolEvent(turn=1, call_number=1, name="web_search", arguments={}, result="{}")
    update = {
        "messages": [Message(role="assistant", content="b")],
        "turn": 2,
        "usage": {"simulator": usage, "agent": usage},
        "tool_trace": [event],
        "sim_events": [SimEvent(turn=2, kind="retry", detail="x")],
        "stop": None,
    }
    out = fold(state, update)
    assert [m.content for m in out["messages"]] == ["a", "b"]
    assert out["turn"] == 2 and out["stop"] is None
    assert out["usage"]["simulator"].calls == 2 and out["usage"]["agent"] == usage
    assert out["tool_trace"] == [event] and out["sim_events"][0].detail == "x"
    assert [m.content for m in state["messages"]] == ["a"]  # the state it folded into is untouched


def test_quiet_heap_freezes_and_restores_the_collector_once_the_last_run_ends():
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with quiet_heap():
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        assert gc.get_freeze_count() > frozen  # the pre-run heap is left out of collections
        with quiet_heap():  # an overlapping run
            pass
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD  # still inside the outer run
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen  # collectable again


def test_quiet_heap_leaves_a_collector_turned_off_turned_off():
    before = gc.get_threshold()
    gc.set_threshold(0, *before[1:])
    try:
        with quiet_heap():
            assert gc.get_threshold()[0] == 0
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def _per_turn_graph():
    """The graph with a superstep per turn (how it ran before): the state the one-superstep graph
    leaves must be this one's."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command

    from usersim.graphs import nodes
    from usersim.graphs.state import ConversationState

    async def turn(state, runtime):
        update, stopped = await nodes._turn(state, runtime)
        return Command(update=nodes._writes(update), goto="judge" if stopped else "turn")

    b = StateGraph(ConversationState, context_schema=RunContext)
    b.add_node("turn", turn, destinations=("turn", "judge"))
    b.add_node("judge", nodes.judge)
    b.add_edge(START, "turn")
    b.add_edge("judge", END)
    return b.compile()


def _moves() -> list[SimulatorTurn]:
    used = Usage(calls=1, prompt_tokens=120, completion_tokens=9, cost_usd=0.0003)
    lines = ["从上海出发", "两个人", "预算一万", "住京都"]
    return [SimulatorTurn(message=t, usage=used) for t in lines]  # never stops: max_turns ends it


async def test_one_superstep_leaves_the_state_a_superstep_per_turn_leaves():
    config = {"recursion_limit": 60}
    finals = []
    for g in (graph, _per_turn_graph()):
        ctx = _ctx(RecordingAgent(tool="web_search"), ScriptedSimulator(_moves()))
        finals.append(await g.ainvoke({}, context=ctx, config=config))
    one, per_turn = finals
    assert one["stop"].reason == "max_turns" and one["turn"] == 6  # the case's max_turns=6, all answered
    assert len(one["tool_trace"]) == 6 and one["usage"]["simulator"].calls == 4
    for key in ("messages", "turn", "turn_starts", "tool_trace", "usage", "stop", "verdicts", "sim_events"):
        assert one.get(key) == per_turn.get(key), key
    assert one["final"] == per_turn["final"]
