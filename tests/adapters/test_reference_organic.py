"""The reference agent completes organic conversations with the rule (agenda) simulator."""

from __future__ import annotations

import re

from tests.adapters.harness import drive
from tests.adapters.ref_support import fake_tools, schemas, system
from usersim.adapters.base import load_agent
from usersim.core.messages import Message
from usersim.personas.loader import load_persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator


async def converse(spec: str, persona_id: str, max_turns: int):
    persona = load_persona(persona_id)
    simulator, agent, tools = RuleSimulator("rule"), load_agent(spec), fake_tools()
    history = [system()]
    for turn in range(1, max_turns + 1):
        visible = [m for m in history if m.role == "user" or (m.role == "assistant" and m.content)]
        view = SimulatorView(
            case_id="ORG",
            persona=persona,
            goal=persona.goal.description,
            opening_message=persona.opening_message,
            transcript=visible,
            turn=turn,
            max_turns=max_turns,
            seed=7,
        )
        move = await simulator.next_turn(view)
        if move.stop:
            return move, history, tools, turn - 1
        history.append(Message(role="user", content=move.message or ""))
        history += await drive(agent, history, tools, schemas=schemas(), turn=turn)
    return None, history, tools, max_turns


async def test_first_trip_to_japan_ends_with_flights_itinerary_and_hotel():
    stop, history, tools, turns = await converse("reference", "japan-first-trip", 20)
    assert stop is not None and stop.stop == "goal_met", stop
    assert turns <= 6
    names = [n for n, _ in tools.calls]
    assert names.index("search_flights") < names.index("search_hotels")  # flights first, then hotels
    first_reply = next(m.content for m in history if m.role == "assistant" and m.content)
    assert "出发地" in first_reply and "？" in first_reply  # vague opening -> asks before searching
    flight = next(a for n, a in tools.calls if n == "search_flights")
    assert (
        flight["origin"] == "上海" and flight["passengers"] == 2 and flight["departure_date"] == "2026-07-15"
    )
    plan = [m.content for m in history if m.role == "assistant" and "一、机票" in m.content][-1]
    assert "Day 1" in plan and "三、酒店" in plan and "东京" in plan and "大阪" in plan


async def test_vague_laptop_buyer_gets_a_model_and_channel_within_budget():
    stop, history, tools, _ = await converse("reference", "vague-laptop-buyer", 15)
    assert stop is not None and stop.stop == "goal_met"
    search = next(a for n, a in tools.calls if n == "taobao_search_products")
    assert search["max_price"] == 8000


async def test_budget_change_mid_conversation_is_respected():
    agent, tools = load_agent("reference"), fake_tools()
    history = [system()]
    for turn, text in enumerate(
        [
            "想买个笔记本电脑",
            "上课写论文，偶尔打游戏，预算 8000 以内，品牌没要求",
            "我跟家里商量了，预算改成 6000 左右吧，不能超过 6000",
        ],
        1,
    ):
        history.append(Message(role="user", content=text))
        history += await drive(agent, history, tools, schemas=schemas(), turn=turn)
    searches = [a for n, a in tools.calls if n == "taobao_search_products"]
    assert [s["max_price"] for s in searches] == [8000, 6000]
    final = history[-1].content
    prices = [float(p.replace(",", "")) for p in re.findall(r"¥([\d,]+)", final)]
    assert prices and max(prices) <= 6000 and "推荐型号" in final and "京东" in final
