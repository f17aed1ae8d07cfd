"""Correct and flawed python agents for the seed cases whose verdicts issue #11 fixed
(`python:tests.integration.seed_agents:NAME`). Each agent plays a fixed script: the tool calls of
the current user turn in order, then its reply text."""

from __future__ import annotations

import json
from typing import Any


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
        ],
    }


def _since_user(messages: list[dict[str, Any]]) -> int:
    """Tool results received since the last user message."""
    n = 0
    for m in reversed(messages):
        if m["role"] == "user":
            break
        n += m["role"] == "tool"
    return n


def scripted(calls: list[tuple[str, dict[str, Any]]], reply: str):
    """An agent that makes `calls` (one at a time) on each user turn, then says `reply`."""

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        done = _since_user(messages)
        if done < len(calls):
            name, args = calls[done]
            return _call(name, args, done + 1)
        return {"role": "assistant", "content": reply}

    return agent


# --- C5-LT-01: origin and dates after a long conversation -------------------------------------
lt01_round_trip = scripted(
    [
        (
            "search_flights",
            {
                "origin": "深圳",
                "destination": "曼谷",
                "departure_date": "2026-06-15",
                "return_date": "2026-06-20",
            },
        )
    ],
    "已为您查询深圳—曼谷 6 月 15 日去、6 月 20 日回的往返机票。",
)
lt01_two_one_ways = scripted(
    [
        ("search_flights", {"origin": "深圳", "destination": "曼谷", "departure_date": "2026-06-15"}),
        ("search_flights", {"origin": "曼谷", "destination": "深圳", "departure_date": "2026-06-20"}),
    ],
    "去程 6 月 15 日深圳飞曼谷、回程 6 月 20 日曼谷飞深圳的航班都查好了。",
)
lt01_wrong_origin = scripted(
    [
        (
            "search_flights",
            {
                "origin": "广州",
                "destination": "曼谷",
                "departure_date": "2026-06-15",
                "return_date": "2026-06-20",
            },
        )
    ],
    "已为您查询广州—曼谷的往返机票。",
)


def _skill(name: str) -> tuple[str, dict[str, Any]]:
    return ("load_skill", {"name": name})


# --- C1-SF-03: the low-cost fare plus its baggage fee against the full-service fare -------------
_SF03_SEARCH = ("search_flights", {"origin": "北京", "destination": "曼谷", "departure_date": "2025-03-20"})
sf03_total_price = scripted(
    [_skill("flight-selection"), _SF03_SEARCH],
    "两人各有一件 24 寸行李要托运，所以按总价比：春秋 9C8571 票面 800 元 + 行李费 250 元 = 1050 元/人；"
    "泰航 TG614 1200 元/人，已含 30kg 托运行李。算上行李，春秋每人只便宜 150 元，而不是 400 元。",
)
sf03_face_value = scripted(
    [_skill("flight-selection"), _SF03_SEARCH],
    "春秋航空 9C8571 只要 800 元/人，比泰航 TG614 的 1200 元便宜 400 元，推荐春秋。",
)

# --- C1-SF-01: ask where the open-jaw trip enters and leaves before searching ------------------
sf01_short_question = scripted(
    [_skill("flight-selection")], "这是开口程，搜票前先确认一下：您打算曼谷进、普吉岛出？"
)
sf01_assumes_route = scripted(
    [
        _skill("flight-selection"),
        ("search_flights", {"origin": "北京", "destination": "曼谷", "departure_date": "2025-04-01"}),
    ],
    "已按曼谷进、曼谷出为您搜索了往返机票。",
)

# --- C1-SF-07: commute times from the map, no 大约/预计 estimates for them ---------------------
_SF07_MATRIX = (
    "compute_google_maps_route_matrix",
    {
        "origins": ["大皇宫", "卧佛寺"],
        "destinations": ["卧佛寺", "考山路", "暹罗广场"],
        "travel_mode": "WALK",
    },
)
sf07_sourced_times = scripted(
    [_skill("itinerary-planning"), _SF07_MATRIX],
    "Day 1：大皇宫 → 卧佛寺 步行 8min / 0.6km (Google Maps)；卧佛寺 → 考山路 步行 19min / 1.3km (Google Maps)。"
    "大皇宫门票大约 500 泰铢，预计 11 点前到达人会少一些。",
)
sf07_estimated_times = scripted(
    [_skill("itinerary-planning"), _SF07_MATRIX],
    "Day 1：大皇宫 → 卧佛寺 大约 10 分钟；卧佛寺 → 考山路 预计 20 分钟左右。",
)

# --- C1-SB-03: TRANSIT fails in Bangkok; switch to DRIVE ----------------------------------------
_SB03_TRANSIT = (
    "compute_google_maps_route_matrix",
    {"origins": ["大皇宫"], "destinations": ["卧佛寺", "考山路"], "travel_mode": "TRANSIT"},
)
sb03_switches_to_drive = scripted(
    [
        _skill("itinerary-planning"),
        _SB03_TRANSIT,
        (
            "compute_google_maps_routes",
            {"origin": "大皇宫", "destination": "考山路", "travel_mode": "TRANSIT"},
        ),
        ("compute_google_maps_routes", {"origin": "大皇宫", "destination": "考山路", "travel_mode": "DRIVE"}),
    ],
    "曼谷暂不支持公交路线查询，改用 DRIVE 模式：大皇宫 → 考山路 驾车 9min (Google Maps)。"
    "通勤时间为驾车估算，公交实际可能更长。",
)
sb03_gives_up = scripted(
    [_skill("itinerary-planning"), _SB03_TRANSIT],
    "地图查不到公交，根据经验：大皇宫到考山路坐公交 20 分钟左右，卧佛寺就在旁边。",
)

# --- C1-SM-02: plan the days around the chosen flights -------------------------------------------
sm02_uses_flight_times = scripted(
    [
        _skill("itinerary-planning"),
        ("search_flights", {"origin": "上海", "destination": "大阪", "departure_date": "2025-05-10"}),
    ],
    "按方案 A 的航班排：Day 1（5/10）下午 14:00 抵达后入住，傍晚清水寺；Day 2 金阁寺；Day 3 岚山；"
    "Day 4 伏见稻荷；Day 5（5/15）上午自由活动，下午 5 点前出发去机场。",
)
sm02_no_skill_switch = scripted(
    [], "Day 1（5/10）早上 9 点清水寺，下午金阁寺；Day 2 岚山；Day 3 伏见稻荷；Day 5 全天购物。"
)
sm02_ignores_flight_times = scripted(
    [_skill("itinerary-planning")],
    "Day 1（5/10）早上 9 点清水寺，下午金阁寺；Day 2 岚山；Day 3 伏见稻荷；Day 5 全天购物。",
)

# --- C2-SV-01: five cities asked, the search has four -------------------------------------------
_SV01_SEARCH = ("web_search", {"query": "适合周末游的城市"})
sv01_states_shortage = scripted(
    [_SV01_SEARCH], "搜索结果里只找到 4 个合适的城市，先列给你：\n1. 苏州\n2. 杭州\n3. 厦门\n4. 南京"
)
sv01_five_cities = scripted(
    [_SV01_SEARCH],
    "为你推荐 5 个城市：\n1. 苏州\n2. 杭州\n3. 厦门\n4. 南京\n5. 青岛（我补充的，海边很适合周末）",
)
sv01_silent_four = scripted([_SV01_SEARCH], "为你推荐以下四个城市：\n1. 苏州\n2. 杭州\n3. 厦门\n4. 南京")

# --- B1-MR-02: 京都 not 东京, same dates and nights ------------------------------------------------
mr02_kyoto_three_nights = scripted(
    [("search_hotels", {"location": "京都", "check_in": "2026-08-15", "check_out": "2026-08-18"})],
    "已改为京都：8 月 15 日入住、住 3 晚，京都站附近酒店 A ¥800/晚。",
)
mr02_kyoto_one_night = scripted(
    [("search_hotels", {"location": "京都", "check_in": "2026-08-15", "check_out": "2026-08-16"})],
    "已改为京都：8 月 15 日入住，京都站附近酒店 A ¥800/晚。",
)

# --- B1-MR-03: a new, unrelated question -------------------------------------------------------
_MR03_SEARCH = ("web_search", {"query": "北京 明天 天气"})
mr03_weather_only = scripted([_MR03_SEARCH], "明天北京晴，12-24℃，北风 3 级。需要我继续完善厦门行程吗？")
mr03_links_trip = scripted([_MR03_SEARCH], "明天北京晴，12-24℃。你端午去厦门的时候会更热，记得带好防晒。")

# --- D-06: 「它」 is the expense list ---------------------------------------------------------------
d06_analyses_expenses = scripted(
    [], "这份花费明细合计 10,300 元：酒店 2,600 元占 25%，机票 2,400 元占 23%，交通 800 元最省。"
)
d06_asks_back = scripted([], "你说的「它」是指什么呢？")
d06_talks_photos = scripted([], "拍照确实很重要，建议带一个轻便的相机。")

# --- C5-LS-01 / LS-02: switch to itinerary-planning and use the map -----------------------------
_KYOTO_MATRIX = (
    "compute_google_maps_route_matrix",
    {"origins": ["四条"], "destinations": ["清水寺", "金阁寺", "岚山", "伏见稻荷"], "travel_mode": "TRANSIT"},
)
ls01_switches_skill = scripted(
    [_skill("itinerary-planning"), _KYOTO_MATRIX],
    "11 月 20 日下午抵达入住四条：Day 1 傍晚清水寺（四条出发 公交 18min，Google Maps）；Day 2 金阁寺；"
    "Day 3 岚山；Day 4 伏见稻荷；26 日上午退房去机场。",
)
ls01_flight_logic = scripted(
    [("search_flights", {"origin": "上海", "destination": "大阪", "departure_date": "2026-11-20"})],
    "我再帮您比较一下机票价格。",
)
_BKK_MATRIX = (
    "compute_google_maps_route_matrix",
    {"origins": ["大皇宫"], "destinations": ["卧佛寺", "考山路"], "travel_mode": "WALK"},
)
ls02_uses_map = scripted(
    [_skill("itinerary-planning"), _BKK_MATRIX],
    "Day 1：大皇宫 → 卧佛寺 步行 8min (Google Maps)；Day 2：考山路。",
)
ls02_estimates = scripted([], "Day 1：大皇宫到卧佛寺大约 10 分钟；Day 2：考山路。")


def _user_turns(messages: list[dict[str, Any]]) -> int:
    return sum(m["role"] == "user" for m in messages)


def by_turn(turns: dict[int, Any], default: Any):
    """An organic-case agent: the scripted agent of the current user turn (1-based), else `default`."""

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return turns.get(_user_turns(messages), default)(messages, tools)

    return agent


# --- C2-E2E-04: vague laptop buyer (organic) ------------------------------------------------------
_E2E_SEARCH = ("taobao_search_products", {"query": "轻薄笔记本", "category": "笔记本电脑", "max_price": 6000})
_E2E_PICK = (
    "推荐华为MateBook 14 2024：5999 元、1.31kg，上课写论文和轻度游戏都够用，京东华为官方旗舰店有货。"
    "我排除了戴尔XPS 13（8999 元，超预算）。"
)
e2e04_guides_and_recommends = by_turn(
    {1: scripted([], "可以的！先了解一下：你主要用来做什么？预算大概多少？")},
    scripted([_E2E_SEARCH], _E2E_PICK),
)
e2e04_overspends = scripted(
    [("taobao_search_products", {"query": "笔记本电脑"})],
    "推荐 MacBook Pro 14，12999 元，京东 Apple 官方旗舰店购买。",
)

# --- C2-TD-04: first trip to Japan (organic) --------------------------------------------------------
_TD_FLIGHTS = (
    "search_flights",
    {
        "origin": "上海",
        "destination": "东京",
        "departure_date": "2026-07-15",
        "return_date": "2026-07-20",
        "passengers": 2,
    },
)
_TD_PLAN = (
    "完整方案如下。\n机票：7 月 15 日上海直飞东京，7 月 20 日返回，两人往返约 6,000 元。\n"
    "行程安排：第一天 浅草寺、晴空塔；第二天 银座逛街；第三天 新干线去大阪，道顿堀吃东西；第四天 奈良东大寺；第五天 京都清水寺；第六天 返程。\n"
    "酒店推荐：东京新宿 7 月 15 日入住，每晚约 700 元；大阪难波 7 月 17 日入住，每晚约 600 元。"
)
td04_stages_the_plan = by_turn(
    {1: scripted([], "好的！先确认几个基础信息：打算玩几天？想去哪个城市？从哪里出发？预算大概多少？")},
    scripted([_TD_FLIGHTS], _TD_PLAN),
)
td04_guesses_everything = scripted(
    [("search_flights", {"origin": "北京", "destination": "东京", "departure_date": "2026-07-01"})],
    "给你订北京飞东京的机票吧，7 月 1 日出发。",
)


# --- C5-LC-01: three scattered laptop constraints (non-Apple, <= 8000, <= 1.5 kg) ------------------
lc01_excludes_apple = scripted(
    [],
    "我排除了 MacBook Air 13（苹果），按三个条件推荐华为MateBook 14 2024：5999 元、1.31kg。",
)
lc01_recommends_apple = scripted([], "推荐 MacBook Air 13：7999 元、1.24kg，轻薄续航好。")

# --- C2-SR-03: five phones <= 2000, no 小米 / OPPO, as a table ------------------------------------
_SR03_SEARCH = (
    "taobao_search_products",
    {"query": "手机", "max_price": 2000, "exclude_brands": ["小米", "OPPO"]},
)
sr03_table = scripted(
    [_SR03_SEARCH],
    "为你精选 5 款：\n\n| # | 型号 | 价格 |\n|---|---|---|\n| 1 | vivo Y200 | 1599 |\n| 2 | 荣耀X50 | 1399 |\n"
    "| 3 | 华为畅享70 | 1199 |\n| 4 | iQOO Z9 | 1499 |\n| 5 | 一加Ace 3V | 1999 |\n\n"
    "Redmi Note 13 和 OPPO A3 已剔除（品牌不符合要求）。",
)
sr03_includes_redmi = scripted(
    [_SR03_SEARCH],
    "为你精选 5 款：\n\n| # | 型号 | 价格 |\n|---|---|---|\n| 1 | vivo Y200 | 1599 |\n| 2 | 荣耀X50 | 1399 |\n"
    "| 3 | 华为畅享70 | 1199 |\n| 4 | iQOO Z9 | 1499 |\n| 5 | Redmi Note 13 | 1099 |",
)

# --- D-14: the goal changed to 北海道 -------------------------------------------------------------
d14_hokkaido = scripted(
    [],
    "好的，改成北海道 3 天，不再去环球影城和大阪城了：\n第一天 札幌大通公园；第二天 小樽运河；第三天 富良野。",
)
d14_keeps_osaka = scripted([], "北海道 3 天：第一天 札幌；第二天 小樽；第三天 回大阪去环球影城。")

# --- D-08: 「第一个」 is the first hotel, not the first restaurant --------------------------------
d08_hotel = scripted([], "第一个是难波东方酒店（不是餐厅列表里的蟹道乐），离难波站步行约 3 分钟，含早餐。")
d08_restaurant = scripted([], "第一个是蟹道乐，离道顿堀很近，不提供早餐。")
