"""Each seed's tool_intercept fires exactly when it should (tool, call number, condition) and not otherwise."""

from __future__ import annotations

import asyncio
import json
import time

from tests.sandbox.conftest import call, intercept_case, make_case, result_json
from tests.sandbox.seed_intercepts import SEED_INTERCEPTS as SEED
from usersim.sandbox.base import open_sandbox


def _injected(case_id: str) -> dict:
    return json.loads(SEED[case_id])["inject_tool_result"]


def test_c2_sc_01_search_hotels_fails_on_every_call_other_tools_untouched():
    sb = open_sandbox(intercept_case(SEED["C2-SC-01"]))
    for n in (1, 2):
        ev = call(
            sb, "search_hotels", {"location": "马尔代夫", "check_in": "2026-05-10", "check_out": "2026-05-17"}
        )
        assert (ev.intercepted, ev.is_error, ev.call_number) == (True, True, n)
        assert (
            ev.result
            == "Error: Hotel search service temporarily unavailable (HTTP 503). Please try again later."
        )
    flights = call(
        sb, "search_flights", {"origin": "上海", "destination": "马尔代夫", "departure_date": "2026-05-11"}
    )
    assert not flights.intercepted and not flights.is_error
    assert result_json(flights)["outbound"], "the flight step must still work (partial credit case)"


def test_c2_sc_02_condition_fires_only_for_baiziwan():
    sb = open_sandbox(intercept_case(SEED["C2-SC-02"]))
    wangjing = call(sb, "beike_search_community_detail", {"community_name": "望京花园小区"})
    jinsong = call(sb, "beike_search_community_detail", {"community_name": "劲松五区"})
    baiziwan = call(sb, "beike_search_community_detail", {"community_name": "百子湾家园"})
    assert not wangjing.intercepted and result_json(wangjing)["avg_price_per_sqm"] == 78500
    assert not jinsong.intercepted and result_json(jinsong)["subway_distance"]
    assert baiziwan.intercepted and not baiziwan.is_error and baiziwan.call_number == 3
    assert result_json(baiziwan) == json.loads(_injected("C2-SC-02")["content"])
    assert result_json(baiziwan)["avg_price_per_sqm"] is None
    # Same community through the other beike tool: the intercept is for community_detail only.
    listings = call(sb, "beike_search_resale_housing", {"city": "北京", "community_name": "百子湾家园"})
    assert not listings.intercepted and result_json(listings)["total"] == 2


def test_c2_ep_01_first_search_flights_call_only():
    sb = open_sandbox(intercept_case(SEED["C2-EP-01"]))
    args = {
        "origin": "上海",
        "destination": "新加坡",
        "departure_date": "2026-05-10",
        "return_date": "2026-05-13",
    }
    first, second = call(sb, "search_flights", args), call(sb, "search_flights", args)
    assert first.intercepted and first.is_error and "HTTP 429" in first.result
    assert not second.intercepted and not second.is_error and second.call_number == 2
    assert {f["flight_no"] for f in result_json(second)["outbound"]} == {"SQ833", "MU567", "TR189"}


def test_c2_ep_02_malformed_listings_on_every_call():
    sb = open_sandbox(intercept_case(SEED["C2-EP-02"]))
    for _ in range(2):
        ev = call(sb, "beike_search_resale_housing", {"city": "北京", "district": "朝阳区", "bedrooms": 3})
        assert ev.intercepted and not ev.is_error
        assert [x["community_name"] for x in result_json(ev)["listings"]] == [None, None, None]
    # The next step of the task (restaurants near a community) is not intercepted.
    food = call(sb, "search_restaurants", {"city": "北京", "near": "劲松五区"})
    assert not food.intercepted and result_json(food)["count"] >= 1


def test_c2_ep_03_search_flights_always_500_weather_and_hotels_work():
    sb = open_sandbox(intercept_case(SEED["C2-EP-03"], context={"current_date": "2026-04-07"}))
    weather = call(sb, "maps_weather", {"city": "北京", "date": "2026-04-08"})
    f1 = call(sb, "search_flights", {"origin": "北京", "destination": "上海", "departure_date": "2026-04-08"})
    f2 = call(sb, "search_flights", {"origin": "PEK", "destination": "SHA", "departure_date": "2026-04-08"})
    hotels = call(
        sb,
        "search_hotels",
        {"location": "上海", "near": "外滩", "check_in": "2026-04-08", "check_out": "2026-04-10"},
    )
    assert f1.intercepted and f2.intercepted and f1.is_error and "HTTP 500" in f2.result
    assert not weather.intercepted and result_json(weather)["kind"] == "forecast"
    assert not hotels.intercepted and len(result_json(hotels)["hotels"]) >= 3


def test_c2_sr_01_condition_city_gugong_not_beijing():
    sb = open_sandbox(intercept_case(SEED["C2-SR-01"]))
    wrong = call(sb, "maps_weather", {"city": "故宫", "date": "明天"})
    fixed = call(sb, "maps_weather", {"city": "北京", "date": "明天"})
    alias = call(sb, "maps_weather", {"city": "Forbidden City"})
    assert wrong.intercepted and wrong.is_error and json.loads(wrong.result)["code"] == 400
    assert not fixed.intercepted and not fixed.is_error
    assert result_json(fixed)["city"] == "北京" and result_json(fixed)["date"] == "2026-04-08"
    # Matched after place normalisation too: Forbidden City is 故宫 (but 北京 never is).
    assert alias.intercepted


def test_c1_sf_03_lcc_result_injected_with_baggage_fee():
    sb = open_sandbox(intercept_case(SEED["C1-SF-03"], context={"current_date": "2025-03-10"}))
    ev = call(
        sb,
        "search_flights",
        {
            "origin": "北京",
            "destination": "曼谷",
            "departure_date": "2025-03-20",
            "return_date": "2025-03-26",
            "passengers": 2,
        },
    )
    data = result_json(ev)
    assert ev.intercepted and not ev.is_error
    spring = data["outbound"][0]
    assert (spring["airline_type"], spring["price_per_person"], spring["baggage_fee_per_piece"]) == (
        "LCC",
        800,
        250,
    )
    assert data["outbound"][1]["baggage_included"] is True and data["outbound"][1]["price_per_person"] == 1200


def test_c1_sb_03_transit_matrix_zero_results_and_drive_route_still_works():
    sb = open_sandbox(intercept_case(SEED["C1-SB-03"]))
    places = ["大皇宫", "卧佛寺", "考山路"]
    transit = call(
        sb,
        "compute_google_maps_route_matrix",
        {"origins": places, "destinations": places, "travel_mode": "TRANSIT"},
    )
    assert transit.intercepted and result_json(transit)["status"] == "ZERO_RESULTS"
    # The seed's JSON has no condition, so every matrix call is replaced - even DRIVE ...
    drive_matrix = call(
        sb,
        "compute_google_maps_route_matrix",
        {"origins": places, "destinations": places, "travel_mode": "DRIVE"},
    )
    assert drive_matrix.intercepted
    # ... while the single-route tool answers DRIVE normally (the skill's documented fallback).
    drive = call(
        sb,
        "compute_google_maps_routes",
        {"origin": "大皇宫", "destination": "考山路", "travel_mode": "DRIVE"},
    )
    assert not drive.intercepted and result_json(drive)["status"] == "OK"


def test_c1_sb_03_with_travel_mode_condition_lets_drive_matrix_through():
    seed = json.loads(SEED["C1-SB-03"])
    seed["intercept_condition"] = {"param": "travel_mode", "value": "TRANSIT"}
    sb = open_sandbox(make_case(tool_intercepts=[seed]))
    places = ["大皇宫", "卧佛寺"]
    transit = call(
        sb,
        "compute_google_maps_route_matrix",
        {"origins": places, "destinations": places, "travel_mode": "transit"},
    )
    drive = call(
        sb,
        "compute_google_maps_route_matrix",
        {"origins": places, "destinations": places, "travel_mode": "DRIVE"},
    )
    assert transit.intercepted  # raw match is case-insensitive
    assert not drive.intercepted and result_json(drive)["rows"][0]["elements"][1]["status"] == "OK"


def test_condition_matches_normalised_places_and_list_arguments():
    case = make_case(
        tool_intercepts=[
            {
                "intercept_tool": "search_flights",
                "intercept_condition": {"param": "origin", "value": "上海"},
                "inject_tool_result": {"is_error": True, "content": "Error: no flights from Shanghai today"},
            }
        ]
    )
    sb = open_sandbox(case)
    day = {"destination": "东京", "departure_date": "2026-05-10"}
    assert call(sb, "search_flights", {"origin": "PVG", **day}).intercepted
    assert call(sb, "search_flights", {"origin": "Shanghai", **day}).intercepted
    assert not call(sb, "search_flights", {"origin": "北京", **day}).intercepted


def test_call_number_counts_per_tool_and_can_be_forced():
    seed = json.loads(SEED["C2-EP-01"])
    sb = open_sandbox(make_case(tool_intercepts=[dict(seed, intercept_on_call_number=2)]))
    args = {"origin": "上海", "destination": "新加坡", "departure_date": "2026-05-10"}
    call(sb, "maps_weather", {"city": "新加坡"})  # another tool does not advance search_flights' count
    assert not call(sb, "search_flights", args).intercepted
    assert call(sb, "search_flights", args).intercepted
    forced = asyncio.run(
        open_sandbox(make_case(tool_intercepts=[dict(seed, intercept_on_call_number=2)])).call(
            "search_flights", args, turn=1, call_number=2
        )
    )
    assert forced.intercepted and forced.call_number == 2


def test_timeout_with_latency_waits_and_reports_seconds():
    sb = open_sandbox(
        make_case(tool_intercepts=[{"intercept_tool": "web_search", "latency_s": 0.05, "timeout": True}])
    )
    started = time.monotonic()
    ev = call(sb, "web_search", {"query": "泰国签证"})
    assert time.monotonic() - started >= 0.05
    assert ev.is_error and ev.intercepted and ev.result == "Error: tool 'web_search' timed out after 0.05s"
    assert ev.latency_s == 0.05


def test_timeout_without_latency_does_not_sleep():
    sb = open_sandbox(make_case(tool_intercepts=[{"intercept_tool": "web_search", "timeout": True}]))
    started = time.monotonic()
    ev = call(sb, "web_search", {"query": "泰国签证"})
    assert time.monotonic() - started < 1.0
    assert ev.result == "Error: tool 'web_search' timed out after 30s"


def test_latency_only_delays_the_real_result():
    sb = open_sandbox(make_case(tool_intercepts=[{"intercept_tool": "web_search", "latency_s": 0.02}]))
    ev = call(sb, "web_search", {"query": "泰国签证"})
    assert not ev.is_error and not ev.intercepted and ev.latency_s == 0.02
    assert "泰国免签政策" in ev.result


def test_restore_resumes_call_counts_from_a_checkpoint_trace():
    case = intercept_case(SEED["C2-EP-01"])
    args = {"origin": "上海", "destination": "新加坡", "departure_date": "2026-05-10"}
    original = open_sandbox(case)
    trace = [call(original, "search_flights", args)]
    assert trace[0].intercepted
    branch = open_sandbox(case)
    branch.restore(trace)
    again = call(branch, "search_flights", args)
    assert again.call_number == 2 and not again.intercepted  # the 429 was the first call only
