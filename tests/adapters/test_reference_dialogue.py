"""Conversation-level behaviour: pointers, list operations, corrections, digests, conflicts, recall."""

from __future__ import annotations

from tests.adapters.ref_support import answer

HOTELS = (
    "帮我在难波附近找几家酒店，每晚 1,000 元以内。",
    "难波附近符合预算的有这几家：\n1. 难波东方酒店：约 680 元/晚，评分 4.2\n2. 心斋桥十字酒店：约 920 元/晚，评分 4.7\n"
    "3. 大和 Roynet 酒店难波：约 760 元/晚，评分 4.4，含早餐",
)
FOOD = (
    "道顿堀附近有什么好吃的？",
    "可以试试：\n1. 蟹道乐道顿堀本店：螃蟹宴约 8,800 日元/人\n2. 一兰拉面道顿堀店：24 小时营业",
)


async def test_ordinal_pointer_picks_the_hotel_list_not_the_latest_list():
    new, tools = await answer(
        "reference",
        HOTELS,
        FOOD,
        ("那住的地方就定在难波了。", "好的。"),
        "那就订第一个吧，它离地铁站有多远？含早餐吗？",
    )
    assert tools.calls == []
    assert "难波东方酒店" in new[-1].content and "早餐" in new[-1].content


async def test_named_shop_pointer_and_where_we_stay():
    new, _ = await answer(
        "reference",
        FOOD,
        ("酒店我们最后定了心斋桥十字酒店，住 3 晚。", "好的。"),
        "回到吃的，那家螃蟹店，它的招牌套餐多少钱？离我们住的那家远吗？",
    )
    assert "8,800" in new[-1].content and "心斋桥十字酒店" in new[-1].content


async def test_resort_by_rating_reuses_the_previous_list():
    new, tools = await answer("reference", HOTELS, "不对，按评分从高到低排。")
    assert tools.calls == []
    final = new[-1].content
    assert final.index("心斋桥十字酒店") < final.index("大和 Roynet") < final.index("难波东方酒店")


async def test_filter_and_total_keep_the_users_order():
    items = (
        "帮我列一下要买的东西。",
        "1. 防水双肩包：359 元\n2. 降噪耳机：899 元\n3. 20000mAh 充电宝：199 元\n4. 旅行颈枕：89 元",
    )
    new, _ = await answer("reference", items, "只要 500 元以内的，其他先不买了。重新排一下再算个总数。")
    final = new[-1].content
    assert "降噪耳机" not in final and "合计 647 元" in final
    assert final.index("双肩包") < final.index("充电宝") < final.index("颈枕")


async def test_corrected_exchange_rate_recomputes_the_total():
    new, _ = await answer(
        "reference",
        ("5 万日元按 1:21 是多少人民币？", "约合 2,381 元人民币。"),
        ("再加上 3 万日元的餐饮呢？", "合计 8 万日元，按 1:21 约合 3,810 元人民币。"),
        "不对，我刚看了下，其实汇率是 1:19。",
    )
    assert "4,211" in new[-1].content and "重新计算" in new[-1].content


async def test_recall_of_a_number_we_computed_and_of_a_term_never_mentioned():
    new, _ = await answer(
        "reference",
        ("帮我算一下预算。", "合计 6,880 元。"),
        ("再给门票留 800 元。", "加上门票 800 元，总预算是 7,680 元。"),
        ("写句朋友圈文案。", "「大阪，我来啦」"),
        "好了，回到预算，刚才算的总数是多少来着？",
    )
    assert "7,680" in new[-1].content
    new, _ = await answer("reference", ("华东区一季度销售额 1200 万。", "收到。"), "刚才说的华北区呢？")
    assert "没有提到华北区" in new[-1].content and "华东区" in new[-1].content


async def test_ambiguous_pointer_asks_which_one():
    new, tools = await answer(
        "reference",
        ("我在比较两款行李箱：新秀丽 Cosmolite 和地平线 8 号。", "Cosmolite 更轻。"),
        ("充电宝带上飞机有什么限制？", "100Wh 以内可以随身带。"),
        "它有几年保修？",
    )
    assert tools.calls == [] and "Cosmolite" in new[-1].content and "地平线 8 号" in new[-1].content
    assert "？" in new[-1].content


async def test_conflicting_request_is_pointed_out():
    new, _ = await answer(
        "reference",
        ("帮我排京都 3 天的行程，我爸妈腿脚不太好，每天最多安排 2 个景点。", "好的。"),
        "第二天帮我把金阁寺、银阁寺、哲学之道、南禅寺和岚山都加上。",
    )
    assert "每天最多 2 个景点" in new[-1].content and "冲突" in new[-1].content


async def test_digest_quotes_the_latest_conclusions():
    new, _ = await answer(
        "reference",
        ("住哪里好？", "好，酒店就定难波东方酒店了。"),
        ("机场怎么去？", "坐南海电铁 rapi:t，大约 40 分钟。"),
        ("伴手礼呢？", "伴手礼买 Pocky 这类能放的更稳妥。"),
        "帮我把这三件事各自的结论汇总一下：住哪里、机场怎么往返、伴手礼买什么。",
    )
    final = new[-1].content
    assert "难波东方" in final and "rapi:t" in final and "Pocky" in final
