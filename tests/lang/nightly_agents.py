"""Scripted agents for C2-TD-04 whose hotel offer shows only a nightly price, each written another
common way (`python:tests.lang.nightly_agents:NAME`); `td04_no_hotel_price` names hotels without any
price or check-in word, so its hotel is NOT delivered (the control)."""

from __future__ import annotations

from tests.integration.seed_agents import by_turn, scripted

_FLIGHTS = (
    "search_flights",
    {
        "origin": "上海",
        "destination": "东京",
        "departure_date": "2026-07-15",
        "return_date": "2026-07-20",
        "passengers": 2,
    },
)
_ASK = "好的！先确认几个基础信息：打算玩几天？想去哪个城市？从哪里出发？预算大概多少？"


def _plan(hotel: str):
    text = (
        "完整方案如下。\n机票：7 月 15 日上海直飞东京，7 月 20 日返回，两人往返约 6,000 元。\n"
        "行程安排：第一天 浅草寺、晴空塔；第二天 银座逛街；第三天 新干线去大阪；第四天 奈良；第五天 京都；第六天 返程。\n"
        f"酒店：{hotel}"
    )
    return by_turn({1: scripted([], _ASK)}, scripted([_FLIGHTS], text))


td04_yen_one_night = _plan("东京新宿 APA 酒店 ¥680 一晚；大阪难波 Hotel ¥620 一晚。")
td04_yuan_each_night = _plan("东京新宿 APA 酒店 680 元每晚，大阪难波 Hotel 620 元每晚。")
td04_each_night_first = _plan("东京新宿 APA 酒店，每晚680元；大阪难波 Hotel，每晚620元。")
td04_slash_night = _plan("东京新宿 APA 酒店 680元/晚，大阪难波 Hotel 620元/晚。")
td04_per_night_english = _plan("Tokyo Shinjuku APA Hotel, $98 per night; Osaka Namba Hotel, 90 USD a night.")
td04_no_hotel_price = _plan("东京新宿 APA 酒店；大阪难波 Hotel。")
