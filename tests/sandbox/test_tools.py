"""Tool behaviour: place normalisation, dates, argument errors, and what each family decides."""

from __future__ import annotations

import json
from datetime import date

import pytest

from tests.sandbox.conftest import call, make_case, result_json
from usersim.sandbox.base import open_sandbox
from usersim.sandbox.catalog import lookup_items
from usersim.sandbox.clock import DateError, parse_date
from usersim.sandbox.places import city_of, normalize_place


@pytest.mark.parametrize(
    "text,canon",
    [
        ("上海", "上海"),
        ("Shanghai", "上海"),
        ("PVG", "上海"),
        ("浦东", "上海"),
        ("上海市", "上海"),
        ("虹桥机场", "上海"),
        ("京都", "京都"),
        ("Kyoto", "京都"),
        ("Kyoto, Japan", "京都"),
        ("大阪", "大阪"),
        ("Osaka", "大阪"),
        ("关西", "大阪"),
        ("KIX", "大阪"),
        ("kix", "大阪"),
        ("曼谷", "曼谷"),
        ("BKK", "曼谷"),
        ("DMK", "曼谷"),
        ("新加坡", "新加坡"),
        ("Changi", "新加坡"),
        ("上海浦东机场", "上海"),
        ("北京故宫", "故宫"),
        ("京都清水寺", "清水寺"),
        ("东京清水寺", None),
        ("故宫", "故宫"),
        ("Forbidden City", "故宫"),
        ("伏见稻荷", "伏见稻荷大社"),
        ("Fushimi Inari", "伏见稻荷大社"),
    ],
)
def test_normalize_place(text, canon):
    assert normalize_place(text) == canon


def test_normalize_place_unknown_and_city_of_sights():
    assert (
        normalize_place("火星基地") is None and normalize_place("") is None and normalize_place(None) is None
    )
    assert city_of("故宫") == "北京" and city_of("KIX") == "大阪" and city_of("圣淘沙") == "新加坡"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2026-06-15", date(2026, 6, 15)),
        ("2026/6/15", date(2026, 6, 15)),
        ("6月15日", date(2026, 6, 15)),
        ("3月1号", date(2027, 3, 1)),
        ("明天", date(2026, 4, 8)),
        ("后天", date(2026, 4, 9)),
        ("下周五", date(2026, 4, 17)),
        ("周五", date(2026, 4, 10)),
        ("周一", date(2026, 4, 13)),
    ],
)
def test_dates_resolve_against_the_sandbox_clock(text, expected):
    assert parse_date(text, today=date(2026, 4, 7), arg="departure_date") == expected


def test_vague_date_is_an_error_naming_the_argument():
    with pytest.raises(
        DateError, match="argument 'departure_date' must be a day as YYYY-MM-DD .*got '6月中旬'"
    ):
        parse_date("6月中旬", today=date(2026, 4, 7), arg="departure_date")


def test_tool_schemas_use_the_design_argument_names(sandbox):
    props = {s["function"]["name"]: s["function"]["parameters"] for s in sandbox.tool_schemas()}
    assert set(props["search_flights"]["properties"]) == {
        "origin",
        "destination",
        "departure_date",
        "return_date",
        "passengers",
        "cabin_class",
    }
    assert props["search_flights"]["required"] == ["origin", "destination", "departure_date"]
    assert set(props["search_hotels"]["properties"]) == {
        "location",
        "check_in",
        "check_out",
        "guests",
        "room_type",
        "hotel_name",
        "max_price",
        "near",
    }
    assert set(props["taobao_search_products"]["properties"]) == {
        "query",
        "category",
        "min_price",
        "max_price",
        "brand",
        "exclude_brands",
        "max_weight_kg",
        "sort",
    }
    assert set(props["compute_google_maps_route_matrix"]["properties"]) == {
        "origins",
        "destinations",
        "travel_mode",
    }
    assert "load_skill" not in props  # skills are off in this case
    assert all(p.get("additionalProperties") is False and p["type"] == "object" for p in props.values())
    assert '"null"' not in json.dumps(props) and '"title"' not in json.dumps(props)  # plain OpenAI shape


def test_unknown_tool_and_bad_arguments_are_error_results_not_exceptions(sandbox):
    unknown = call(sandbox, "search_flight", {})
    assert unknown.is_error and unknown.result.startswith(
        "Error: Unknown tool 'search_flight'. Did you mean 'search_flights'?"
    )
    bad = call(
        sandbox, "search_hotels", {"location": "京都", "check_in": "2026-05-10", "checkout": "2026-05-12"}
    )
    assert bad.is_error
    assert (
        "missing required argument 'check_out'" in bad.result
        and "unexpected argument 'checkout'" in bad.result
    )
    wrong_type = call(
        sandbox,
        "search_flights",
        {"origin": "上海", "destination": "东京", "departure_date": "2026-05-10", "passengers": "two"},
    )
    assert wrong_type.is_error and "argument 'passengers'" in wrong_type.result


def test_tools_outside_case_tools_are_not_available():
    sb = open_sandbox(make_case(tools=["web_search"]))
    assert [s["function"]["name"] for s in sb.tool_schemas()] == ["web_search"]
    ev = call(sb, "search_flights", {"origin": "上海", "destination": "东京", "departure_date": "2026-05-10"})
    assert (
        ev.is_error
        and ev.result
        == "Error: tool 'search_flights' is not available in this conversation. Available: web_search"
    )


def test_unknown_tool_in_case_tools_fails_at_open():
    with pytest.raises(
        KeyError, match="Unknown tool 'web_serch' in case T-SANDBOX field 'tools'. Did you mean 'web_search'"
    ):
        open_sandbox(make_case(tools=["web_serch"]))


def test_flights_kyoto_lands_in_osaka_with_lcc_baggage_fees(sandbox):
    data = result_json(
        call(
            sandbox,
            "search_flights",
            {
                "origin": "上海",
                "destination": "京都",
                "departure_date": "2026-06-15",
                "return_date": "2026-06-20",
                "passengers": 2,
            },
        )
    )
    assert data["destination"] == "大阪" and "京都没有机场" in data["notes"][0]
    lcc = [f for f in data["outbound"] if f["airline_type"] == "LCC"]
    full = [f for f in data["outbound"] if f["airline_type"] == "Full-service"]
    assert lcc and full and data["return"]
    assert all(f["baggage_included"] is False and f["baggage_fee_per_piece"] > 0 for f in lcc)
    assert all(f["baggage_included"] is True and "baggage_fee_per_piece" not in f for f in full)
    assert all(f["total_price"] == 2 * f["price_per_person"] for f in data["outbound"])
    assert data["outbound"][0]["departure"].endswith("+08:00") and data["outbound"][0]["arrival"].endswith(
        "+09:00"
    )


def test_flight_prices_are_deterministic_and_vary_by_date():
    def prices(day):
        sb = open_sandbox(make_case())
        return {
            f["flight_no"]: f["price_per_person"]
            for f in result_json(
                call(sb, "search_flights", {"origin": "北京", "destination": "大阪", "departure_date": day})
            )["outbound"]
        }

    assert prices("2026-06-15") == prices("2026-06-15")
    assert prices("2026-06-14") != prices("2026-06-15")
    assert prices("2026-10-02")["CA161"] > prices("2026-09-15")["CA161"]  # 国庆 peak


def test_flight_errors_name_the_argument(sandbox):
    past = call(
        sandbox, "search_flights", {"origin": "上海", "destination": "东京", "departure_date": "2026-04-01"}
    )
    assert (
        past.is_error
        and "argument 'departure_date' 2026-04-01 is in the past (today is 2026-04-07)" in past.result
    )
    back = call(
        sandbox,
        "search_flights",
        {
            "origin": "上海",
            "destination": "东京",
            "departure_date": "2026-05-10",
            "return_date": "2026-05-08",
        },
    )
    assert (
        back.is_error
        and "argument 'return_date' 2026-05-08 is before departure_date 2026-05-10" in back.result
    )
    where = call(
        sandbox, "search_flights", {"origin": "上海", "destination": "东晶", "departure_date": "2026-05-10"}
    )
    assert where.is_error and "unknown place '东晶' in argument 'destination'" in where.result


def test_okinawa_has_no_flight_on_a_non_operating_day(sandbox):
    data = result_json(
        call(
            sandbox,
            "search_flights",
            {"origin": "上海", "destination": "冲绳", "departure_date": "2026-05-13"},
        )
    )
    assert data["outbound"] == [] and data["notes"][0].startswith("该日期无航班")


def test_hotels_near_kiyomizu_under_300_is_a_reported_conflict(sandbox):
    data = result_json(
        call(
            sandbox,
            "search_hotels",
            {
                "location": "京都",
                "near": "清水寺",
                "check_in": "2026-05-10",
                "check_out": "2026-05-12",
                "max_price": 300,
            },
        )
    )
    assert data["hotels"] == []
    assert data["message"].startswith("没有每晚 ≤ 300 元的酒店；符合其他条件的最低价为每晚")
    assert int(data["message"].split("每晚 ")[-1].split(" 元")[0]) > 300


def test_hotel_by_name_with_sea_view_room(sandbox):
    data = result_json(
        call(
            sandbox,
            "search_hotels",
            {
                "location": "三亚",
                "hotel_name": "三亚亚特兰蒂斯",
                "check_in": "2026-07-05",
                "check_out": "2026-07-07",
                "room_type": "海景房",
            },
        )
    )
    (hotel,) = data["hotels"]
    assert hotel["name"] == "三亚亚特兰蒂斯酒店" and data["nights"] == 2
    assert hotel["rooms"][0]["room_type"] == "海景房" and len(hotel["rooms"][0]["nightly_prices"]) == 2


def test_weather_is_deterministic_and_rejects_landmarks(sandbox):
    a = call(sandbox, "maps_weather", {"city": "北京", "date": "2026-04-08"})
    b = call(open_sandbox(make_case()), "maps_weather", {"city": "Beijing", "date": "明天"})
    assert a.result == b.result and result_json(a)["kind"] == "forecast"
    far = result_json(call(sandbox, "maps_weather", {"city": "京都", "date": "2026-11-20"}))
    assert far["kind"] == "climate_normal"
    poi = call(sandbox, "maps_weather", {"city": "故宫"})
    assert poi.is_error and "'故宫' is not a city name" in poi.result


def test_restaurants_exclude_spicy_and_price_range(sandbox):
    chengdu = result_json(call(sandbox, "search_restaurants", {"city": "成都", "exclude": ["辣"]}))[
        "restaurants"
    ]
    assert chengdu and all(r["spicy_level"] <= 1 for r in chengdu)
    assert "蜀九香火锅（玉林店）" not in {r["name"] for r in chengdu}
    cbd = result_json(
        call(sandbox, "search_restaurants", {"city": "北京", "near": "国贸", "query": "商务宴请 人均300-500"})
    )
    assert cbd["restaurants"] and all(300 <= r["price_per_person"] <= 500 for r in cbd["restaurants"])
    assert all("商务宴请" in r["tags"] for r in cbd["restaurants"])


def test_taobao_filters(sandbox):
    light = result_json(
        call(
            sandbox,
            "taobao_search_products",
            {"query": "笔记本电脑", "max_price": 8000, "max_weight_kg": 1.5},
        )
    )
    assert len(light["products"]) >= 3
    assert all(p["price"] <= 8000 and p["weight_kg"] <= 1.5 for p in light["products"])
    phones = result_json(
        call(
            sandbox,
            "taobao_search_products",
            {"query": "手机", "max_price": 2000, "exclude_brands": ["Xiaomi", "OPPO"]},
        )
    )
    brands = {p["brand"] for p in phones["products"]}
    assert len(phones["products"]) >= 5 and not brands & {"小米", "OPPO"}
    ranked = result_json(call(sandbox, "taobao_search_products", {"query": "蛋白粉", "sort": "price_asc"}))[
        "products"
    ]
    assert [p["price"] for p in ranked] == sorted(p["price"] for p in ranked)
    assert {p["lactose"] for p in ranked} == {"含乳糖", "低乳糖", "无乳糖"}


def test_reviews_housing_and_zhihu(sandbox):
    reviews = result_json(call(sandbox, "taobao_get_product_reviews", {"product_id": "AirPods Pro 2"}))
    assert reviews["product_id"] == "p_hp_001" and len(reviews["reviews"]) == 4
    listings = result_json(
        call(sandbox, "beike_search_resale_housing", {"city": "北京", "district": "朝阳", "bedrooms": 3})
    )
    assert listings["total"] == 4 and all(x["bedrooms"] == 3 for x in listings["listings"])
    missing = call(sandbox, "beike_search_community_detail", {"community_name": "百子湾家"})
    assert not missing.is_error and result_json(missing)["community_name"] == "百子湾家园"
    zh = result_json(call(sandbox, "zhihu_search", {"keyword": "马拉松训练新手计划"}))["results"]
    assert zh[0]["article_id"] == "zh_1001" and zh[0]["upvotes"] == max(r["upvotes"] for r in zh)
    detail = call(sandbox, "zhihu_get_article_detail", {"article_id": "zh_9999"})
    assert detail.is_error and "Unknown article_id 'zh_9999'" in detail.result


def test_lookup_items_finds_named_catalog_items_longest_first():
    text = "推荐 iPhone 16 Pro Max；预算有限选 iPhone16。笔记本看 MacBook Air M3 或 ThinkPad X13。"
    assert [i["id"] for i in lookup_items("products", text)] == [
        "p_phn_002",
        "p_phn_001",
        "p_lap_001",
        "p_lap_004",
    ]
    assert [i["flight_no"] for i in lookup_items("flights", "选 9C8571 还是 TG 614？不是 MU5310")] == [
        "9C8571",
        "TG614",
    ]
    assert [i["name"] for i in lookup_items("products", "推荐 p_pro_005（无乳糖）")] == [
        "Orgain 有机植物蛋白粉"
    ]
    tower = lookup_items("hotels", "住京都塔酒店")[0]
    assert tower["base_price"] == 580 and tower["price"] == 580  # price: cheapest room, ordinary night
    assert lookup_items("hotels", "京都站前东横INN")[0]["price"] == 290  # its single room (factor 0.8)
    with pytest.raises(KeyError, match="Unknown catalog 'product'. Did you mean 'products'"):
        lookup_items("product", "x")


def test_web_search_weather_box_agrees_with_maps_weather(sandbox):
    box = result_json(call(sandbox, "web_search", {"query": "明天北京天气怎么样"}))["results"][0]
    weather = result_json(call(sandbox, "maps_weather", {"city": "北京", "date": "2026-04-08"}))
    assert box["source"] == "weather" and box["snippet"].startswith(
        "2026-04-08 北京：" + weather["condition"]
    )
    assert f"{weather['temp_low_c']}~{weather['temp_high_c']}°C" in box["snippet"]
    visa = result_json(call(sandbox, "web_search", {"query": "普吉岛签证"}))["results"]
    assert visa[0]["title"].startswith("泰国免签政策") and all(r["source"] != "weather" for r in visa)


def test_trains_timetable_both_directions(sandbox):
    down = result_json(
        call(sandbox, "search_trains", {"origin": "北京南站", "destination": "上海", "date": "明天"})
    )
    up = result_json(
        call(sandbox, "search_trains", {"origin": "上海", "destination": "北京", "date": "2026-04-08"})
    )
    assert down["date"] == "2026-04-08" and down["trains"][0]["train_no"] == "G1"
    assert down["trains"][0]["from_station"] == "北京南站" and up["trains"][0]["train_no"] == "G2"
    assert {t["duration_min"] for t in down["trains"]} == {268, 336}  # fast and slower services
    assert all(t["seats"]["二等座"]["price"] == 662 for t in down["trains"])
    afternoon = [t for t in down["trains"] if "12:00" <= t["departure"] <= "18:00"]
    assert len(afternoon) >= 10  # C2-TD-03: 明天下午 has plenty of choice
    none = result_json(
        call(sandbox, "search_trains", {"origin": "北京", "destination": "曼谷", "date": "2026-04-08"})
    )
    assert none["trains"] == [] and "没有高铁直达线路" in none["message"]


def test_housing_and_restaurant_argument_errors(sandbox):
    bad = call(sandbox, "beike_search_resale_housing", {"city": "北京", "community_name": "望京花苑"})
    assert (
        bad.is_error
        and "unknown community '望京花苑' in argument 'community_name'. Did you mean '望京花园小区'?"
        in bad.result
    )
    elsewhere = result_json(call(sandbox, "beike_search_resale_housing", {"city": "上海"}))
    assert elsewhere == {"total": 0, "listings": [], "message": "暂无上海的房源数据"}
    near = call(sandbox, "search_restaurants", {"city": "北京", "near": "火星基地"})
    assert near.is_error and "unknown place '火星基地' in argument 'near'" in near.result


def test_generic_queries_do_not_empty_filtered_results(sandbox):
    kyoto = result_json(
        call(sandbox, "search_restaurants", {"city": "京都", "query": "美食", "exclude": ["海鲜"]})
    )["restaurants"]
    assert len(kyoto) >= 4 and all(
        r["cuisine"] != "海鲜" and "海鲜" not in r["tags"] for r in kyoto
    )  # C5-EI-01
    assert [r["rating"] for r in kyoto] == sorted((r["rating"] for r in kyoto), reverse=True)
    cheap_anc = result_json(
        call(sandbox, "taobao_search_products", {"query": "推荐", "category": "耳机", "max_price": 500})
    )
    assert cheap_anc["products"] and all(p["price"] <= 500 for p in cheap_anc["products"])
    nothing = result_json(call(sandbox, "taobao_search_products", {"query": "推荐一下"}))
    assert nothing["products"] == [] and "放宽" in nothing["message"]


def test_the_schemas_of_built_in_tools_are_shared_by_conversations_and_copies_are_the_callers():
    """Every conversation's sandbox hands out the same schema objects (read-only); `schema()` is
    a copy to change, and a change to it reaches no conversation."""
    from usersim.sandbox.tools import tool_registry

    tool = tool_registry.get("search_flights")
    copy = tool.schema()
    assert copy == tool.shared_schema() and copy is not tool.shared_schema()
    copy["function"]["parameters"]["properties"].clear()
    assert tool.shared_schema()["function"]["parameters"]["properties"]
    assert tool.shared_schema() is tool_registry.get("search_flights").shared_schema()
