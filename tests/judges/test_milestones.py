from tests.judges.helpers import bot, case, state, tool, user
from usersim.judges.milestones import MilestonesJudge

ASK = {"asked_clarification": {"min_questions": 1}}
MILESTONES = [
    {"id": "ask_basics", "check": ASK},
    {"id": "flights", "requires": ["ask_basics"], "check": {"tool_called": {"tool": "search_flights"}}},
    {
        "id": "itinerary",
        "requires": ["ask_basics"],
        "check": {"keywords": {"scope": "assistant", "any": ["Day 1", "第一天"]}},
    },
    {"id": "hotel", "requires": ["flights"], "check": {"tool_called": {"tool": "search_hotels"}}},
]


async def judge(transcript, milestones=MILESTONES, minefields=(), **kw):
    c = case(milestones=milestones, minefields=list(minefields))
    return (await MilestonesJudge()(transcript=transcript, case=c, state=state(transcript, **kw)))[0]


GOOD = [
    user("我想暑假去日本玩"),
    bot("请问您想玩几天？预算多少？"),
    user("7 天，1 万"),
    bot("", ("search_flights", {"origin": "上海"})),
    tool("search_flights"),
    bot("机票如下"),
    user("行程呢"),
    bot("Day 1 东京塔 …"),
    user("酒店呢"),
    bot("", ("search_hotels", {"location": "东京"})),
    tool("search_hotels"),
    bot("酒店如下"),
]


async def test_all_milestones_in_order():
    v = await judge(GOOD)
    assert v.verdict == "pass" and v.score == 1.0
    assert v.reason.startswith(
        "4/4 milestones reached in order (100%); reached: ask_basics (msg 1, turn 1), "
        "flights (msg 4, turn 2), itinerary (msg 7, turn 3), hotel (msg 10, turn 4)"
    )
    assert v.details["reached"] == {"ask_basics": 1, "flights": 4, "itinerary": 7, "hotel": 10}


async def test_partial_credit_for_missed_milestones():
    v = await judge(GOOD[:8])
    assert v.verdict == "fail" and v.score == 0.75
    assert v.reason.endswith("missed: hotel")


async def test_out_of_order_milestone_gets_no_credit():
    t = [
        user("我想暑假去日本玩"),
        bot("", ("search_hotels", {"location": "东京"})),
        tool("search_hotels"),
        bot("酒店如下"),
        user("机票呢"),
        bot("", ("search_flights", {"origin": "上海"})),
        tool("search_flights"),
        bot("你想玩几天？"),
    ]
    v = await judge(t)
    assert v.verdict == "fail"
    assert v.details["out_of_order"] == {"flights": 6, "hotel": 2}  # reached when the tool result arrives
    assert "out of order: flights (msg 6) before ask_basics, hotel (msg 2) before flights" in v.reason
    assert v.score == 0.0  # ask_basics is not asked in the first turn; itinerary missed


async def test_minefield_voids_the_score():
    mine = {"tool_called": {"tool": "search_flights", "args": {"destination": "曼谷"}}}
    t = GOOD[:3] + [bot("", ("search_flights", {"origin": "上海", "destination": "曼谷"}))] + GOOD[4:]
    v = await judge(t, minefields=[mine])
    assert v.verdict == "fail" and v.score == 0.0
    assert "minefield hit, score voided: tool_called" in v.reason
    assert v.details["reached"]  # milestones are still reported


async def test_minefields_without_milestones():
    mine = {"keywords": {"any": ["大约 20 分钟"]}}
    v = await judge([user("排个行程"), bot("步行 19min (Google Maps)")], milestones=[], minefields=[mine])
    assert v.judge == "minefields" and v.verdict == "pass" and v.reason == "no minefield hit (1 checked)"


async def test_cycle_is_an_error_verdict():
    cyc = [{"id": "a", "requires": ["b"], "check": ASK}, {"id": "b", "requires": ["a"], "check": ASK}]
    v = await judge(GOOD, milestones=cyc)
    assert v.verdict == "error" and v.reason.startswith("milestones form a cycle")


async def test_first_reached_without_a_recorded_trace_uses_call_messages():
    v = await judge(GOOD, use_trace=False)
    assert v.verdict == "pass"
    assert v.details["reached"] == {"ask_basics": 1, "flights": 3, "itinerary": 7, "hotel": 9}


PLAN = MILESTONES + [
    {
        "id": "complete_plan",
        "requires": ["flights", "itinerary", "hotel"],
        "check": {"keywords": {"scope": "assistant", "all": ["机票", "酒店"], "any": ["行程"]}},
    }
]


async def test_a_milestone_counts_from_where_its_prerequisites_were_reached():
    # "机票和酒店稍后再查" announces the plan; only the later reply after the searches delivers it
    t = [
        GOOD[0],
        bot("请问您想玩几天？先排行程，机票和酒店稍后再查。"),
        *GOOD[2:],
        bot("完整方案：机票、酒店、行程如上"),
    ]
    v = await judge(t, milestones=PLAN)
    assert v.verdict == "pass", v.reason
    assert v.details["reached"]["complete_plan"] == len(t) - 1


async def test_words_said_only_before_the_prerequisites_are_out_of_order():
    t = [GOOD[0], bot("请问您想玩几天？先排行程，机票和酒店稍后再查。"), *GOOD[2:]]
    v = await judge(t, milestones=PLAN)
    assert v.verdict == "fail" and v.details["out_of_order"] == {"complete_plan": 1}
    assert "complete_plan (msg 1) before flights/itinerary/hotel" in v.reason
