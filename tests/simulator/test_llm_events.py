"""The LLM simulator honours conditional persona events (`when: {agent_calls | agent_says}`) like
scripted turn events: due on the user turn after the agent's trigger, reminded until said, and
reported missed at the end of the run if the user never said them."""

from __future__ import annotations

import json
from typing import Any

from tests.simulator.helpers import persona, view
from usersim.core.events import Usage
from usersim.core.messages import Message, ToolCall
from usersim.graphs.finalize import sim_events_of
from usersim.simulator.llm import LLMSimulator

DATES_CHANGE = {"kind": "change_fact", "slot": "dates", "value": "6 月 20 号"}


class FakeModel:
    """Scripted simulator model: the next JSON reply per call; keeps the prompt it was sent: the
    system prompt and this turn's note (the request's last message)."""

    def __init__(self, *messages: str) -> None:
        self.messages = list(messages)
        self.systems: list[str] = []

    async def __call__(self, *, messages: list[dict[str, Any]], **kw: Any) -> tuple[dict, Usage]:
        self.systems.append(messages[0]["content"] + "\n" + messages[-1]["content"])
        content = json.dumps({"message": self.messages.pop(0), "action": "continue"}, ensure_ascii=False)
        return {"role": "assistant", "content": content}, Usage(calls=1)


def U(text: str) -> Message:
    return Message(role="user", content=text)


def A(text: str, *tools: str) -> Message:
    return Message(role="assistant", content=text, tool_calls=[ToolCall(name=t) for t in tools])


async def _turn(p, transcript: list[Message], turn: int, said: str):
    model = FakeModel(said)
    move = await LLMSimulator("openai:m", complete=model).next_turn(view(p, transcript, turn))
    return move, model.systems[0]


async def test_agent_calls_event_becomes_due_only_after_the_tool_call_and_is_reminded_until_said():
    p = persona(events=[{"when": {"agent_calls": "search_flights"}, **DATES_CHANGE}])
    t = [U("帮我订去大阪的票"), A("好的，我先看看你的订单", "get_order")]  # another tool: no trigger
    move, system = await _turn(p, t, 2, "从上海出发")
    assert move.events == [] and "Nothing special" in system
    assert "6 月 15 号" in system and "6 月 20 号" not in system  # the change is not known yet

    t += [U("从上海出发"), A("", "search_flights"), A("查到几班，你几号走？")]  # a silent tool-call message
    move, system = await _turn(p, t, 3, "两个人")
    assert "Now (because the assistant called search_flights): you change your dates" in system
    assert "6 月 20 号" in system and "6 月 15 号" not in system
    (ev,) = move.events
    assert ev.kind == "event_reminded" and "due turn 3 (agent called search_flights)" in ev.detail

    t += [U("两个人"), A("好的，几号出发？")]
    move, system = await _turn(p, t, 4, "改成 6 月 20 号出发")
    assert "Since turn 3 (you have not said it yet) (because the assistant called search_flights)" in system
    (ev,) = move.events
    assert ev.kind == "event_said" and "said (due turn 3) (agent called search_flights)" in ev.detail


async def test_agent_says_event_fires_on_the_phrase():
    p = persona(events=[{"when": {"agent_says": ["没有直飞"]}, **DATES_CHANGE}])
    t = [U("帮我订去大阪的票"), A("从哪里出发？")]
    move, _ = await _turn(p, t, 2, "上海")
    assert move.events == []
    t += [U("上海"), A("那天没有直飞的航班")]
    move, system = await _turn(p, t, 3, "那就 6 月 20 号吧")
    assert "because the assistant said '没有直飞'" in system
    assert [e.kind for e in move.events] == ["event_said"]


async def test_conditional_event_never_said_is_reported_missed_and_never_reached_too():
    called = persona(events=[{"when": {"agent_calls": "search_flights"}, **DATES_CHANGE}])
    t = [U("帮我订去大阪的票"), A("我查一下", "search_flights")]
    trace = []
    for turn, said in ((2, "上海出发"), (3, "两个人")):  # the model never says the date change
        move, _ = await _turn(called, t, turn, said)
        trace += move.events
        t += [U(said), A("好的")]
    assert [e.kind for e in trace] == ["event_reminded", "event_reminded"]
    events = sim_events_of(called, {"messages": t, "turn": 3, "sim_events": trace})
    missed = [e for e in events if e.kind == "event_missed"]
    assert len(missed) == 1 and "due turn 2 but never said: its change is not applied" in missed[0].detail

    # the tool was never called: the event never fell due, the model was never told, and it is reported
    t = [U("帮我订去大阪的票"), A("从哪里出发？"), U("上海"), A("好的")]
    move, system = await _turn(called, t[:2], 2, "上海")
    assert move.events == [] and "6 月 20 号" not in system
    events = sim_events_of(called, {"messages": t, "turn": 2, "sim_events": []})
    (missed,) = events
    assert missed.kind == "event_missed" and "never reached (its trigger never happened" in missed.detail
