"""The fixtures satisfy what the seeds' expected behaviours need (so those behaviours are reachable)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta

from usersim.sandbox import catalog
from usersim.sandbox.maps import haversine_km, map_graph
from usersim.sandbox.places import _key, city_of, normalize_place, place_data
from usersim.sandbox.tools.hotels import NEAR_KM, night_price


def test_every_kyoto_room_near_kiyomizu_costs_more_than_300_every_night():
    """C2-SV-02: 清水寺附近 + 每晚 300 元以内 must be impossible (the agent has to report the conflict)."""
    g = map_graph()
    kiyomizu = (g.nodes["清水寺"]["lat"], g.nodes["清水寺"]["lon"])
    near = [
        h
        for h in catalog.hotels()
        if h["city"] == "京都" and haversine_km(kiyomizu, (h["lat"], h["lon"])) <= NEAR_KM
    ]
    assert len(near) >= 4
    days = [date(2025, 1, 1) + timedelta(days=i) for i in range(3 * 366)]
    cheapest = min(night_price(h, rt["factor"], d) for h in near for rt in h["room_types"] for d in days)
    assert cheapest > 300


def test_kyoto_has_hotels_in_station_kawaramachi_and_arashiyama_some_within_300():
    areas = defaultdict(list)
    for h in catalog.hotels():
        if h["city"] == "京都":
            areas[h["area"]].append(h)
    assert {"京都站", "河原町", "岚山"} <= set(areas)
    assert any(
        h["base_price"] <= 300 for h in areas["京都站"] + areas["河原町"]
    )  # the "换区域" option exists
    assert any(
        "极简" in h["style"] and h["base_price"] <= 500 for h in areas["京都站"] + areas["四条乌丸"]
    )  # C2-MM-03


def test_sanya_atlantis_has_sea_view_rooms():
    atlantis = catalog.find_by_name("hotels", "三亚亚特兰蒂斯")
    assert atlantis is not None and any(rt["name"] == "海景房" for rt in atlantis["room_types"])


def test_light_laptops_under_8000_with_brand_weight_price():
    light = [
        p
        for p in catalog.products()
        if p["category"] == "笔记本电脑" and p["weight_kg"] <= 1.5 and p["price"] < 8000
    ]
    assert len(light) >= 5
    assert len({p["brand"] for p in light}) >= 4
    macbook_thinkpad = [
        p
        for p in catalog.products()
        if p["brand"] in ("Apple", "ThinkPad") and p["category"] == "笔记本电脑" and p["price"] <= 8000
    ]
    assert {p["brand"] for p in macbook_thinkpad} == {"Apple", "ThinkPad"}  # B1-MR-05


def test_phones_headphones_and_protein_powders():
    names = {p["name"] for p in catalog.products()}
    assert {"Apple iPhone 16", "三星Galaxy S25", "Apple AirPods Pro 2", "索尼WF-1000XM5降噪豆"} <= names
    cheap_ok = [
        p
        for p in catalog.products()
        if p["category"] == "手机" and p["price"] <= 2000 and p["brand"] not in ("小米", "OPPO")
    ]
    assert len(cheap_ok) >= 5  # C2-SR-03
    anc_under_500 = [p for p in catalog.products() if p["category"] == "耳机" and p["price"] <= 500]
    assert (
        anc_under_500 and max(p["price"] for p in catalog.products() if p["category"] == "耳机") > 2000
    )  # B1-IP-01
    protein = [p for p in catalog.products() if p["category"] == "蛋白粉"]
    by_lactose = defaultdict(list)
    for p in protein:
        by_lactose[p["lactose"]].append(p["protein_type"])
    assert any("乳清" in t for t in by_lactose["含乳糖"])
    assert any("分离乳清" in t for t in by_lactose["低乳糖"])
    assert any("植物" in t or "豌豆" in t for t in by_lactose["无乳糖"])


def test_restaurants_for_dates_business_and_non_spicy():
    rs = catalog.restaurants()
    assert len([r for r in rs if r["city"] == "北京" and "约会" in r["tags"]]) >= 3
    assert (
        len(
            [
                r
                for r in rs
                if r["city"] == "北京"
                and r["district"] == "朝阳区"
                and "商务宴请" in r["tags"]
                and 300 <= r["price_per_person"] <= 500
            ]
        )
        >= 2
    )
    assert len([r for r in rs if r["city"] == "成都" and r["spicy_level"] <= 1]) >= 4
    assert all(r["reviews"] and r["review_summary"] for r in rs)


def test_housing_has_the_three_chaoyang_communities():
    names = {c["community_name"]: c for c in catalog.communities()}
    for n in ("望京花园小区", "劲松五区", "百子湾家园"):
        c = names[n]
        assert (
            c["district"] == "朝阳区"
            and c["avg_price_per_sqm"]
            and c["nearby_amenities"]
            and c["subway_distance"]
        )


def test_flights_cover_the_seed_routes_with_lcc_and_full_service():
    flights = catalog.flights()
    routes = defaultdict(set)
    for f in flights:
        routes[(f["origin"], f["destination"])].add(f["airline_type"])
    for pair in [("北京", "曼谷"), ("上海", "大阪"), ("上海", "东京"), ("北京", "三亚"), ("上海", "新加坡")]:
        assert routes[pair] == {"LCC", "Full-service"}, pair
    for pair in [
        ("北京", "新加坡"),
        ("北京", "大阪"),
        ("北京", "纽约"),
        ("上海", "普吉岛"),
        ("深圳", "曼谷"),
        ("北京", "上海"),
        ("上海", "冲绳"),
        ("上海", "马尔代夫"),
        ("曼谷", "清迈"),
        ("清迈", "普吉岛"),
    ]:
        assert routes[pair], pair
    assert all(f["baggage_fee_per_piece"] for f in flights if f["airline_type"] == "LCC")
    nyc = {f["stops"] for f in flights if (f["origin"], f["destination"]) == ("北京", "纽约")}
    assert nyc == {0, 1}  # C1-SP-03: direct vs via Seoul


def test_every_fixture_place_reference_resolves():
    for h in catalog.hotels():
        assert normalize_place(h["city"]) == h["city"], h["name"]
    for r in catalog.restaurants():
        assert city_of(r["near"]) == r["city"], r["name"]
    for f in catalog.flights():
        assert (
            city_of(f["origin_airport"]) == f["origin"]
            and city_of(f["destination_airport"]) == f["destination"]
        ), f["id"]


def test_no_alias_names_two_different_places():
    seen: dict[str, str] = {}
    data = place_data()
    entries = [(c["name"], [c["name"], *c.get("aliases", [])]) for c in data["cities"]]
    entries += [(a["code"], [a["code"], a["name"], *a.get("aliases", [])]) for a in data["airports"]]
    entries += [(p["name"], [p["name"], *p.get("aliases", [])]) for p in data["places"]]
    for owner, aliases in entries:
        for alias in aliases:
            assert seen.setdefault(_key(alias), owner) == owner, (
                f"alias '{alias}' names {seen[_key(alias)]} and {owner}"
            )


def test_catalog_names_are_unambiguous():
    from usersim.sandbox.catalog import CATALOGS, _names, _norm

    for name, items in CATALOGS.items():
        owner: dict[str, str] = {}
        for item in items():
            for n in _names(name, item):
                key = _norm(n)
                assert owner.setdefault(key, item.get("id", n)) == item.get("id", n), (
                    f"{name}: '{n}' names two items"
                )
