import pytest

from tests.judges.helpers import bot, case, state, tool, user
from usersim.judges.checks import run_check, validate_check

FLIGHT_ARGS = {"origin": "PVG", "destination": "Osaka", "departure_date": "2026-06-15", "passengers": 2}
EI01 = {
    "tool_called": {
        "tool": "search_flights",
        "args": {
            "origin": {"place": "上海"},  # a city matches its airports only through place:
            "destination": {"place": "大阪"},
            "departure_date": "6 月中旬",
            "passengers": "两个人",
        },
    }
}


async def run(spec, transcript, **kw):
    return await run_check(
        spec, transcript=transcript, case=case(checks=[spec]), state=state(transcript, **kw)
    )


async def test_tool_called_matches_normalised_arguments():
    t = [
        user("帮我搜一下 6 月中旬从上海飞大阪的机票，两个人"),
        bot("", ("search_flights", FLIGHT_ARGS)),
        tool("search_flights"),
        bot("找到以下航班 …"),
    ]
    v = await run(EI01, t)
    assert v.verdict == "pass"
    assert v.judge == "tool_called"
    assert v.reason == (
        "search_flights called with origin=PVG, destination=Osaka, departure_date=2026-06-15, "
        "passengers=2; all 4 required arguments match"
    )
    assert v.criterion.startswith("tool_called {")
    assert v.evidence_turn == 2


async def test_tool_called_names_the_mismatched_argument():
    args = dict(FLIGHT_ARGS, destination="东京", departure_date="2026-07-01")
    args.pop("passengers")
    t = [user("…"), bot("", ("search_flights", args)), tool("search_flights"), bot("…")]
    v = await run(EI01, t)
    assert v.verdict == "fail"
    assert "1/4 required arguments match" in v.reason
    assert "destination=东京 (expected place 大阪)" in v.reason
    assert "departure_date=2026-07-01 (expected 6 月中旬)" in v.reason
    assert "passengers missing (expected 两个人)" in v.reason


async def test_tool_called_wrong_tool_lists_what_was_called():
    t = [user("…"), bot("", ("web_search", {"query": "上海 大阪 机票"})), tool("web_search"), bot("…")]
    v = await run(EI01, t)
    assert v.verdict == "fail"
    assert v.reason == "search_flights was never called (tools called: web_search x1)"


async def test_relative_dates_resolve_against_case_date():
    spec = {
        "tool_called": {
            "tool": "search_flights",
            "args": {"departure_date": "下周五", "return_date": {"present": True}},
        }
    }
    ok = [
        user("上海到东京，下周五出发，周日回"),
        bot(
            "",
            (
                "search_flights",
                {
                    "origin": "上海",
                    "destination": "东京",
                    "departure_date": "2026-04-17",
                    "return_date": "2026-04-19",
                },
            ),
        ),
        tool("search_flights"),
        bot("…"),
    ]
    assert (await run(spec, ok)).verdict == "pass"
    bad = [
        ok[0],
        bot("", ("search_flights", {"departure_date": "2026-04-10"})),
        tool("search_flights"),
        bot("…"),
    ]
    v = await run(spec, bad)
    assert v.verdict == "fail"
    assert "departure_date=2026-04-10 (expected 下周五)" in v.reason
    assert "return_date missing (expected present)" in v.reason


async def test_operator_matchers_and_min_calls():
    spec = {
        "tool_called": {
            "tool": ["search_hotels"],
            "min_calls": 2,
            "args": {
                "location": {"any_of": [{"place": "京都"}, {"place": "大阪"}]},
                "max_price": {"lte": "500元"},
                "near": {"contains": "清水"},
                "check_in": {"date_between": ["2026-05-01", "5 月 31 号"]},
            },
        }
    }
    call = {"location": "Kyoto", "max_price": 450, "near": "清水寺附近", "check_in": "2026-05-10"}
    one = [user("…"), bot("", ("search_hotels", call)), tool("search_hotels"), bot("…")]
    v = await run(spec, one)
    assert v.verdict == "fail" and v.reason == "search_hotels: 1 matching call(s), 2 required"
    two = one + [
        user("再查一次"),
        bot("", ("search_hotels", dict(call, max_price=300))),
        tool("search_hotels"),
        bot("…"),
    ]
    v = await run(spec, two)
    assert v.verdict == "pass" and "(2 matching calls)" in v.reason
    over = [
        user("…"),
        bot("", ("search_hotels", dict(call, max_price=800))),
        tool("search_hotels"),
        bot("…"),
    ] * 2
    assert "max_price=800 (expected <=500元)" in (await run(spec, over)).reason


async def test_tool_calls_are_read_from_transcript_without_trace():
    t = [user("…"), bot("", ("search_flights", FLIGHT_ARGS)), tool("search_flights"), bot("…")]
    assert (await run(EI01, t, use_trace=False)).verdict == "pass"


async def test_history_tool_calls_do_not_count():
    history = [
        user("帮我查机票"),
        bot("", ("search_flights", FLIGHT_ARGS)),
        tool("search_flights"),
        bot("结果如下"),
    ]
    t = history + [user("谢谢"), bot("不客气")]
    v = await run(EI01, t, history_len=4, use_trace=False)
    assert v.verdict == "fail" and v.reason == "search_flights was never called (no tools were called)"


async def test_tool_not_called():
    spec = {"tool_not_called": {"tool": ["search_flights", "web_search"]}}
    clean = [user("我想飞上天和太阳肩并肩"), bot("这是《飞得更高》的歌词吧！")]
    v = await run(spec, clean)
    assert v.verdict == "pass" and v.reason == "search_flights / web_search not called (no tools were called)"
    dirty = [
        user("我想飞上天和太阳肩并肩"),
        bot("", ("search_flights", {"destination": "太阳"})),
        tool("search_flights"),
        bot("…"),
    ]
    v = await run(spec, dirty)
    assert v.verdict == "fail"
    assert v.reason == "search_flights was called 1 time(s), first in turn 1 with destination=太阳"


async def test_tool_order():
    spec = {"tool_order": {"tools": ["search_flights", "compute_google_maps_route_matrix"]}}
    good = [
        user("…"),
        bot("", ("search_flights", {})),
        tool("search_flights"),
        bot("", ("compute_google_maps_route_matrix", {})),
        tool("x"),
        bot("…"),
    ]
    v = await run(spec, good)
    assert v.verdict == "pass"
    assert v.reason == (
        "first calls in the required order: search_flights (call #1) -> "
        "compute_google_maps_route_matrix (call #2)"
    )
    bad = [
        user("…"),
        bot("", ("compute_google_maps_route_matrix", {})),
        tool("x"),
        bot("", ("search_flights", {})),
        tool("search_flights"),
        bot("…"),
    ]
    v = await run(spec, bad)
    assert v.verdict == "fail" and "out of order" in v.reason
    missing = [user("…"), bot("", ("search_flights", {})), tool("search_flights"), bot("…")]
    assert (await run(spec, missing)).reason.startswith("never called: compute_google_maps_route_matrix")


HOTEL = {"location": "京都", "check_in": "2026-08-15"}
NIGHTS = {
    "tool_called": {
        "tool": "search_hotels",
        "args": {"location": "京都"},
        "spans": [{"start": "check_in", "end": "check_out", "days": 3}],
    }
}


async def test_tool_called_spans_check_nights_within_one_call():
    three = [user("京都 3 晚"), bot("", ("search_hotels", {**HOTEL, "check_out": "2026-08-18"})), bot("好")]
    v = await run(NIGHTS, three)
    assert v.verdict == "pass" and "all 2 required arguments match" in v.reason
    one = [user("京都 3 晚"), bot("", ("search_hotels", {**HOTEL, "check_out": "2026-08-16"})), bot("好")]
    v = await run(NIGHTS, one)
    assert v.verdict == "fail" and "check_out - check_in = 1 days (expected 3)" in v.reason
    missing = [user("京都 3 晚"), bot("", ("search_hotels", HOTEL)), bot("好")]
    v = await run(NIGHTS, missing)
    assert v.verdict == "fail" and "not computable" in v.reason


ROUND_TRIP = {
    "tool_called": {
        "tool": "search_flights",
        "args": {"origin": "深圳", "departure_date": "2026-06-15", "return_date": "2026-06-20"},
        "or_each_of": [
            {"origin": "深圳", "departure_date": "2026-06-15"},
            {"destination": "深圳", "departure_date": "2026-06-20"},
        ],
    }
}


async def test_tool_called_or_each_of_accepts_separate_legs():
    out = ("search_flights", {"origin": "深圳", "destination": "曼谷", "departure_date": "2026-06-15"})
    back = ("search_flights", {"origin": "曼谷", "destination": "深圳", "departure_date": "2026-06-20"})
    v = await run(ROUND_TRIP, [user("查机票"), bot("", out), bot("", back), bot("好")])
    assert v.verdict == "pass" and "cover each of the 2 alternative argument sets" in v.reason
    v = await run(ROUND_TRIP, [user("查机票"), bot("", out), bot("好")])
    assert v.verdict == "fail" and "no call matches set 2" in v.reason


async def test_asked_clarification_about_accepts_regex_entries():
    spec = {"asked_clarification": {"about": [["飞入", "re:[\\u4e00-\\u9fff]进(?:$|[、，,。])"]]}}
    v = await run(spec, [user("泰国三地游机票"), bot("这是开口程：您打算曼谷进、普吉岛出？")])
    assert v.verdict == "pass", v.reason
    v = await run(spec, [user("泰国三地游机票"), bot("您从哪里出发？")])
    assert v.verdict == "fail" and "did not ask about 飞入" in v.reason
    with pytest.raises(ValueError, match="not a valid regex"):
        validate_check({"asked_clarification": {"about": [["re:(unclosed"]]}})
