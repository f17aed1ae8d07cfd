"""The reference agent on the seeds' target behaviours: the right tool call, or one clarification."""

from __future__ import annotations

from tests.adapters.ref_support import answer, fake_tools


def calls(tools):
    return [(n, a) for n, a in tools.calls]


async def test_b1_ei_01_exact_flight_search_keeps_all_four_elements():
    new, tools = await answer("reference", "帮我搜一下 6 月中旬从上海飞大阪的机票，两个人")
    assert calls(tools) == [
        (
            "search_flights",
            {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2},
        )
    ]
    final = new[-1].content
    assert "MU729" in final and "08:30" in final and "¥1,880/人" in final
    # the LCC's checked-bag fee is added before comparing (算总账不看单价)
    assert "含行李约 ¥1,240/人" in final and "2 人合计" in final


async def test_b1_cl_01_asks_everything_missing_in_one_message_without_searching():
    new, tools = await answer("reference", "帮我订机票")
    assert tools.calls == [] and len(new) == 1
    text = new[0].content
    questions = [line for line in text.splitlines() if line.endswith("？")]
    assert len(questions) == 4
    for word in ("出发地", "目的地", "日期", "人数"):
        assert word in text


async def test_b1_mr_06_executes_after_clarification_with_return_date_and_default_party():
    new, tools = await answer(
        "reference",
        ("帮我订机票", "好的，请问出发地、目的地和大概时间是？"),
        "上海到东京，下周五出发，周日回",
    )
    assert calls(tools) == [
        (
            "search_flights",
            {
                "origin": "上海",
                "destination": "东京",
                "departure_date": "2026-04-17",
                "passengers": 1,
                "return_date": "2026-04-19",
            },
        )
    ]
    assert "？" not in new[-1].content  # no further questions


async def test_b1_if_01_resolves_where_to_stay_from_the_kyoto_history():
    history = ("我下周要去京都玩 5 天", "好的，京都 5 天完全可以把主要景点都覆盖到！推荐路线：Day 1：岚山……")
    new, tools = await answer("reference", history, "住哪里比较方便")
    assert calls(tools) == [
        ("search_hotels", {"location": "京都", "check_in": "2026-04-13", "check_out": "2026-04-18"})
    ]
    final = new[-1].content
    assert "京都" in final and "酒店" in final and "？" not in final


async def test_b1_mr_02_correction_switches_city_and_keeps_dates():
    history = ("帮我搜东京的酒店，8 月中旬，住 3 天", "好的，正在为您搜索东京 8 月中旬的酒店，入住 3 晚……")
    new, tools = await answer("reference", history, "等等，我说错了，是京都不是东京")
    assert calls(tools) == [
        ("search_hotels", {"location": "京都", "check_in": "2026-08-15", "check_out": "2026-08-18"})
    ]
    assert "京都" in new[-1].content and "东京" not in new[-1].content


async def test_b1_ei_03_hotel_name_dates_and_room_type_without_asking_nights():
    new, tools = await answer("reference", "帮我查一下三亚亚特兰蒂斯酒店 7 月 5 号到 7 号的海景房价格")
    assert calls(tools) == [
        (
            "search_hotels",
            {
                "location": "三亚",
                "check_in": "2026-07-05",
                "check_out": "2026-07-07",
                "room_type": "海景房",
                "hotel_name": "三亚亚特兰蒂斯",
            },
        )
    ]
    assert "几晚" not in new[-1].content


async def test_b1_mi_01_weather_and_restaurant_both_answered():
    new, tools = await answer("reference", "帮我查下明天北京的天气，还有推荐一家适合约会的餐厅")
    assert [n for n, _ in tools.calls] == ["maps_weather", "search_restaurants"]
    assert tools.calls[0][1] == {"city": "北京", "date": "2026-04-08"}
    assert tools.calls[1][1]["city"] == "北京" and tools.calls[1][1]["query"] == "约会"
    final = new[-1].content
    assert "天气" in final and "小雨" in final and "餐厅" in final


async def test_b1_mi_01_with_only_the_b1_tools_falls_back_to_web_search():
    new, tools = await answer(
        "reference",
        "帮我查下明天北京的天气，还有推荐一家适合约会的餐厅",
        names=["web_search", "search_flights", "search_hotels"],
    )
    assert [(n, a["query"]) for n, a in tools.calls] == [
        ("web_search", "北京 2026-04-08 天气"),
        ("web_search", "北京 约会 餐厅推荐"),
    ]
    assert "天气" in new[-1].content and "餐厅" in new[-1].content


async def test_b1_mi_02_flight_plus_visa_question():
    new, tools = await answer("reference", "帮我搜一下7月初从上海去普吉岛的机票，顺便看看那边需要签证吗")
    assert tools.calls[0] == (
        "search_flights",
        {"origin": "上海", "destination": "普吉岛", "departure_date": "2026-07-03", "passengers": 1},
    )
    assert tools.calls[1] == ("web_search", {"query": "普吉岛 签证 政策"})
    assert "签证" in new[-1].content


async def test_b1_if_04_memory_lactose_intolerance_filters_whey():
    new, tools = await answer("reference", "帮我推荐几款蛋白粉", memory=["用户有乳糖不耐受"])
    final = new[-1].content
    assert "浓缩乳清蛋白粉" not in final.split("不推荐")[0].split("：", 1)[1].split("考虑到")[0]
    assert "分离乳清蛋白粉（无乳糖）" in final and "豌豆植物蛋白粉" in final and "乳糖" in final


async def test_b1_cl_02_laptop_asks_purpose_budget_brand_then_recommends_within_budget():
    new, tools = await answer("reference", "想买一台笔记本电脑")
    assert tools.calls == [] and all(w in new[0].content for w in ("用途", "预算", "品牌"))
    new, tools = await answer(
        "reference",
        ("想买一台笔记本电脑", new[0].content),
        "主要写代码，偶尔剪视频，预算 8000 左右，不要苹果",
    )
    args = tools.calls[0][1]
    assert args["max_price"] == 8000 and args["exclude_brands"] == ["苹果"]
    final = new[-1].content
    assert "MacBook" not in final and "ThinkPad X1 Carbon" not in final  # 9999 is over budget
    assert "推荐型号" in final and "京东" in final


async def test_c2_sr_01_weather_for_a_sight_uses_its_city():
    _, tools = await answer("reference", "查一下故宫明天的天气")
    assert tools.calls == [("maps_weather", {"city": "北京", "date": "2026-04-08"})]


async def test_tool_error_is_told_and_web_search_fallback_offered():
    tools = fake_tools(search_hotels="Error: Hotel search service temporarily unavailable (HTTP 503).")
    new, tools = await answer("reference", "帮我找一下 5 月 10 号到 12 号京都的酒店", tools=tools)
    assert [n for n, _ in tools.calls] == ["search_hotels", "web_search"]
    final = new[-1].content
    assert "HTTP 503" in final and "通用搜索" in final


async def test_multi_step_trip_flights_then_hotels_and_partial_delivery_on_error():
    tools = fake_tools(search_hotels="Error: Hotel search service temporarily unavailable (HTTP 503).")
    new, tools = await answer(
        "reference", "帮我规划 5 月 10 号到 14 号从上海去京都的旅行，两个人，5 天，预算人均 8000", tools=tools
    )
    names = [n for n, _ in tools.calls]
    assert names == ["search_flights", "search_hotels", "web_search"]
    final = new[-1].content
    assert "一、机票" in final and "MU729" in final and "Day 1" in final and "三、酒店" in final
    assert "HTTP 503" in final


async def test_lyrics_do_not_trigger_a_flight_search():
    _, tools = await answer("reference", "我想飞上天和太阳肩并肩")
    assert all(n != "search_flights" for n, _ in tools.calls)


async def test_c2_ep_03_three_independent_requests_each_get_their_own_details():
    tools = fake_tools(search_flights="Error: Flight search service is currently unavailable (HTTP 500).")
    new, tools = await answer(
        "reference",
        "帮我查：1) 明天北京天气，2) 明天北京到上海的机票，3) 4月8日到10日上海外滩附近的酒店",
        tools=tools,
    )
    by_name = {n: a for n, a in tools.calls}
    assert by_name["maps_weather"] == {"city": "北京", "date": "2026-04-08"}
    assert by_name["search_flights"] == {
        "origin": "北京",
        "destination": "上海",
        "departure_date": "2026-04-08",
        "passengers": 1,
    }
    assert by_name["search_hotels"] == {
        "location": "上海",
        "check_in": "2026-04-08",
        "check_out": "2026-04-10",
        "near": "外滩",
    }
    final = new[-1].content
    assert "小雨" in final and "HTTP 500" in final and "上海住宿" in final  # the failure is isolated


async def test_b1_if_05_new_diet_constraint_replans_the_food():
    history = (
        "我在规划端午去成都的旅行",
        "好的！端午去成都 3 天行程建议：Day 1 宽窄巷子 + 串串香（红油麻辣锅）……",
    )
    new, tools = await answer("reference", history, "我男朋友不吃辣")
    assert tools.calls == [("search_restaurants", {"city": "成都", "query": "美食", "exclude": ["辣"]})]
    assert "麻辣香锅王" not in new[-1].content and "已避开辣" in new[-1].content


async def test_c2_sc_02_community_details_report_what_is_missing():
    def detail(args):
        if args["community_name"] == "百子湾家园":
            return {
                "community_name": "百子湾家园",
                "avg_price_per_sqm": None,
                "nearby_amenities": None,
                "subway_distance": None,
                "message": "该小区数据暂未收录，信息缺失",
            }
        return {
            "community_name": args["community_name"],
            "avg_price_per_sqm": 72000,
            "nearby_amenities": ["超市", "学校"],
            "subway_distance": "步行 8 分钟",
        }

    tools = fake_tools()
    tools.results["beike_search_community_detail"] = detail
    new, tools = await answer(
        "reference",
        "帮我对比北京朝阳区 3 个小区的二手房情况：望京花园小区、劲松五区、百子湾家园，要看房价、周边配套、交通",
        tools=tools,
    )
    details = [a["community_name"] for n, a in tools.calls if n == "beike_search_community_detail"]
    assert details == ["望京花园小区", "劲松五区", "百子湾家园"]
    # the community without data is looked up on the web instead of being given up
    assert tools.calls[-1] == ("web_search", {"query": "北京 百子湾家园 二手房 均价 配套 交通"})
    final = new[-1].content
    assert "劲松五区：房价 72000；配套 超市、学校；交通 步行 8 分钟" in final
    assert "百子湾家园：暂无数据；缺失：房价、配套、交通" in final and "网页搜索补充" in final


async def test_c5_lt_01_scattered_parameters_and_a_postponed_city():
    turns = [
        ("我想去泰国玩，听说曼谷和清迈都不错", "两个都值得去。"),
        ("我从深圳出发，深圳有直飞曼谷的航班吗？", "有直飞。"),
        ("6 月 15 号出发，20 号回，5 天够吗？", "有点紧。"),
        ("就曼谷吧，清迈下次再去", "好的，专注曼谷。"),
    ]
    _, tools = await answer("reference", *turns, "好了，帮我查机票")
    assert tools.calls == [
        (
            "search_flights",
            {
                "origin": "深圳",
                "destination": "曼谷",
                "departure_date": "2026-06-15",
                "passengers": 1,
                "return_date": "2026-06-20",
            },
        )
    ]
