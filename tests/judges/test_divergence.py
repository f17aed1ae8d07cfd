"""The divergence judge: where a promoted regression case now departs from its recorded failure.
Departing is what a fixed agent does, so it is information and never a failing verdict."""

from __future__ import annotations

import asyncio

from tests.judges.helpers import bot, case, state, tool, user
from usersim.cases.schema import PromotedFrom
from usersim.judges.divergence import DivergenceJudge

RECORDED = [
    user("想买个笔记本"),
    bot("预算多少？"),
    user("6000 以内"),
    bot("您指的是哪件商品？"),
]


def _judge(transcript, **origin):
    update: dict = {"reference_transcript": RECORDED}
    if origin:
        update["promoted_from"] = PromotedFrom(
            run_id="r", record_id="x", case_id="C", agent="a", status="failed", **origin
        )
    c = case().model_copy(update=update)
    (v,) = asyncio.run(DivergenceJudge()(transcript=transcript, case=c, state=state(transcript)))
    assert v.counts_toward_status is False and v.verdict != "fail"
    return v


def test_the_same_conversation_is_reported_as_followed():
    v = _judge(list(RECORDED))
    assert v.details["diverged"] is False and "follows" in v.reason


def test_a_fixed_agent_departing_is_information_naming_turn_and_tool_calls():
    now = RECORDED[:3] + [
        bot("", ("taobao_search_products", {"max_price": 6000, "query": "笔记本"})),
        tool("taobao_search_products"),
        bot("推荐联想小新，京东自营"),
    ]
    v = _judge(now)
    d = v.details
    assert d["diverged"] is True and d["first_divergent_turn"] == 2 and d["kind"] == "tool_calls"
    assert (
        d["now"] == "taobao_search_products(max_price=6000, query=笔记本)" and d["recorded"] == "no tool call"
    )
    assert "turn 2" in v.reason


def test_text_and_length_departures_are_named():
    text = _judge(RECORDED[:3] + [bot("好的，这就为您挑选几款轻薄本，稍等")])
    assert text.details["kind"] == "text" and text.details["first_divergent_turn"] == 2
    short = _judge(RECORDED[:2])
    assert short.details["kind"] == "length" and short.details["first_divergent_turn"] == 2


def test_a_strict_case_numbers_its_single_turn_as_in_the_recording():
    v = _judge(
        [user("想买个笔记本"), bot("完全不同的回答，和原来毫无关系的一段话")], form="strict", failing_turn=5
    )
    assert v.details["first_divergent_turn"] == 5
