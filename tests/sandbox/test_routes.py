"""Route times from the map graph are consistent: A->B->C is never shorter than A->C (same mode)."""

from __future__ import annotations

from itertools import permutations

import pytest

from tests.sandbox.conftest import call, result_json
from usersim.sandbox.maps import MODES, map_graph

# Every map node of these areas: the seeds' cities, plus Kansai as one cross-city area.
AREAS = {
    "京都+大阪+KIX": lambda a: a["city"] in ("京都", "大阪") or a.get("zone") == "airport:KIX",
    "曼谷": lambda a: a["city"] == "曼谷",
    "新加坡": lambda a: a["city"] == "新加坡",
    "北京": lambda a: a["city"] == "北京",
    "成都": lambda a: a["city"] == "成都",
    "厦门": lambda a: a["city"] == "厦门",
    "东京": lambda a: a["city"] == "东京",
}


def _matrix(sandbox, places: list[str], mode: str) -> dict[tuple[str, str], int]:
    """All-pairs minutes from the matrix tool (one call per origin: the tool caps pairs per call)."""
    out = {}
    for origin in places:
        ev = call(
            sandbox,
            "compute_google_maps_route_matrix",
            {"origins": [origin], "destinations": places, "travel_mode": mode},
        )
        assert not ev.is_error, ev.result
        for row in result_json(ev)["rows"]:
            for el in row["elements"]:
                if el["status"] == "OK":
                    out[(row["origin"], el["destination"])] = el["duration_min"]
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("area", list(AREAS))
def test_triangle_inequality_over_all_triples(sandbox, area, mode):
    g = map_graph()
    places = sorted(n for n, a in g.nodes(data=True) if AREAS[area](a))
    assert len(places) >= 5
    times = _matrix(sandbox, places, mode)
    checked = 0
    for a, b, c in permutations(places, 3):
        if (a, b) in times and (b, c) in times:
            assert (a, c) in times, f"{a}->{b}->{c} by {mode} exists but {a}->{c} does not"
            assert times[(a, b)] + times[(b, c)] >= times[(a, c)], (a, b, c, mode)
            checked += 1
    assert checked > 0


def test_seed_places_in_each_city_are_connected_by_every_mode(sandbox):
    for places in (
        ["清水寺", "金阁寺", "伏见稻荷", "岚山", "京都站", "祇园", "哲学之道", "银阁寺"],
        ["大皇宫", "卧佛寺", "考山路", "暹罗广场"],
        ["圣淘沙", "滨海湾花园", "动物园", "乌节路", "牛车水", "鱼尾狮"],
    ):
        for mode in MODES:
            times = _matrix(sandbox, places, mode)
            assert len(times) == len(places) ** 2, (places, mode)


def test_route_tool_matches_matrix_and_reports_legs(sandbox):
    route = result_json(
        call(
            sandbox,
            "compute_google_maps_routes",
            {"origin": "Kiyomizu-dera", "destination": "金阁寺", "travel_mode": "TRANSIT"},
        )
    )
    times = _matrix(sandbox, ["清水寺", "金阁寺"], "TRANSIT")
    assert route["status"] == "OK" and route["duration_min"] == times[("清水寺", "金阁寺")]
    assert sum(leg["duration_min"] for leg in route["legs"]) == route["duration_min"]
    assert route["source"] == "Google Maps"


def test_modes_rank_sensibly_for_a_long_trip(sandbox):
    t = {
        m: _matrix(sandbox, ["新加坡动物园", "滨海湾花园"], m)[("新加坡动物园", "滨海湾花园")] for m in MODES
    }
    assert t["DRIVE"] < t["TRANSIT"] < t["WALK"]


def test_walking_between_cities_has_no_route_but_transit_uses_the_shinkansen(sandbox):
    walk = result_json(
        call(
            sandbox,
            "compute_google_maps_routes",
            {"origin": "京都站", "destination": "大阪城", "travel_mode": "WALK"},
        )
    )
    transit = result_json(
        call(
            sandbox,
            "compute_google_maps_routes",
            {"origin": "京都站", "destination": "大阪城", "travel_mode": "TRANSIT"},
        )
    )
    assert walk["status"] == "ZERO_RESULTS"
    assert transit["status"] == "OK" and transit["legs"][0]["means"] == "新干线"


def test_gulangyu_is_reached_by_ferry_only(sandbox):
    drive = result_json(
        call(
            sandbox,
            "compute_google_maps_routes",
            {"origin": "中山路步行街", "destination": "鼓浪屿", "travel_mode": "DRIVE"},
        )
    )
    ferry = result_json(
        call(
            sandbox,
            "compute_google_maps_routes",
            {"origin": "中山路步行街", "destination": "鼓浪屿", "travel_mode": "TRANSIT"},
        )
    )
    assert drive["status"] == "ZERO_RESULTS"
    assert any(leg["means"] == "轮渡" for leg in ferry["legs"])


def test_bad_mode_and_unknown_place_are_errors_naming_the_argument(sandbox):
    bad_mode = call(
        sandbox,
        "compute_google_maps_routes",
        {"origin": "清水寺", "destination": "金阁寺", "travel_mode": "BICYCLE"},
    )
    unknown = call(
        sandbox,
        "compute_google_maps_routes",
        {"origin": "清水寺", "destination": "金閣", "travel_mode": "WALK"},
    )
    assert (
        bad_mode.is_error
        and "argument 'travel_mode' must be DRIVE, WALK or TRANSIT; got 'BICYCLE'" in bad_mode.result
    )
    assert unknown.is_error and "unknown place '金閣' in argument 'destination'" in unknown.result
    matrix = result_json(
        call(
            sandbox,
            "compute_google_maps_route_matrix",
            {"origins": ["清水寺"], "destinations": ["金阁寺", "火星基地"], "travel_mode": "DRIVE"},
        )
    )
    assert [e["status"] for e in matrix["rows"][0]["elements"]] == ["OK", "NOT_FOUND"]
