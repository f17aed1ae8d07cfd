"""The reference agent reads a first-time traveller's answers (C2-TD-04): a positional answer to its
own questions, labelled fields, and "这个" meaning "this whole business" rather than a pointer."""

from __future__ import annotations

from datetime import date

from tests.adapters.ref_support import answer
from usersim.adapters.reference.slots import Slots, extract

ASKED = (
    "我想暑假去日本玩",
    "为了规划这趟行程，还需要确认几个信息：\n1. 出发地：从哪个城市出发？\n2. 目的地：想去哪个城市？\n"
    "3. 天数：计划玩几天？\n4. 人数：一共几位出行？\n5. 预算：大概多少？",
)


def places(text: str) -> tuple[str | None, list[str]]:
    s = extract(text, Slots(country="日本"), date(2026, 6, 1), asked={"origin", "destination"})
    return s.origin, s.destinations


async def test_an_answer_saying_first_time_doing_this_is_not_a_pointer_to_resolve():
    new, tools = await answer(
        "reference",
        ASKED,
        "从上海出发。可能东京和大阪吧，7 月 15 号左右出发，6 天，2 个人，人均 1 万。主要是第一次弄这个，有点没头绪。",
    )
    assert "具体指什么" not in new[-1].content
    assert tools.calls == [("web_search", {"query": "东京 旅行攻略"})]  # the trip goes on
    assert "Day 1" in new[-1].content


async def test_a_real_pointer_is_still_resolved_or_asked_about():
    new, tools = await answer("reference", ASKED, "帮我把它订了吧")
    assert tools.calls == [] and "具体指什么" in new[-1].content


def test_a_bare_home_city_before_the_trip_cities_is_the_origin():
    assert places("上海，东京和大阪吧，听说都挺好玩") == ("上海", ["东京", "大阪"])


def test_labelled_fields_name_origin_and_destination():
    assert places("上海，补充一下，目的地：东京和大阪吧") == ("上海", ["东京", "大阪"])
    assert places("出发地：上海，目的地：东京") == ("上海", ["东京"])
