"""The map graph behind the route tools: networkx shortest paths over the places the seeds name.

Nodes are sights, stations, airports, hotels and restaurants. Inside a city (or an island zone)
each node links to its nearest neighbours (plus a spanning tree, so the city is connected); cities
link to airports and to each other through explicit transport links (新干线, 机场快线, 轮渡).
Edge times are whole minutes, so a route's time is a sum of integers and A->B->C can never be
shorter than A->C by the same mode (shortest paths obey the triangle inequality).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, pairwise
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx

from usersim.sandbox import catalog
from usersim.sandbox.places import city_info, place_data, resolve_place

MODES = ("DRIVE", "WALK", "TRANSIT")
_NEIGHBOURS = 4
_DETOUR = {"WALK": 1.25, "DRIVE": 1.35, "TRANSIT": 1.3}  # street distance / straight line
_WALK_KMH = 4.8
_TRANSIT_WAIT_MIN = 6  # boarding + waiting on each transit hop


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance in km between two (lat, lon) points."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def _edge_times(km: float, city: dict[str, Any]) -> dict[str, Any]:
    walk = max(1, round(km * _DETOUR["WALK"] / _WALK_KMH * 60))
    drive = max(2, round(km * _DETOUR["DRIVE"] / city.get("drive_kmh", 25) * 60 + 2))
    attrs: dict[str, Any] = {
        "km": km,
        "WALK": walk,
        "DRIVE": drive,
        "WALK_label": "步行",
        "DRIVE_label": "驾车",
    }
    if city.get("transit_kmh"):
        ride = round(km * _DETOUR["TRANSIT"] / city["transit_kmh"] * 60 + _TRANSIT_WAIT_MIN)
        # Google's transit routes walk short hops; so does ours (keeps TRANSIT <= WALK per edge).
        attrs["TRANSIT"] = min(walk, ride)
        attrs["TRANSIT_label"] = "步行" if walk <= ride else city.get("transit_label", "公共交通")
    return attrs


@lru_cache(maxsize=1)
def map_graph() -> nx.Graph:
    """The whole map (built once): nodes carry lat/lon/city; edges carry minutes per mode."""
    import networkx as nx  # ~0.3 s to import: only when a route is asked for

    data = place_data()
    g = nx.Graph()
    for p in data["places"]:
        g.add_node(
            p["name"],
            lat=p["lat"],
            lon=p["lon"],
            city=p["city"],
            zone=p.get("zone", p["city"]),
            kind="place",
            transit_label=p.get("transit_label"),
        )
    for a in data["airports"]:
        g.add_node(
            a["code"], lat=a["lat"], lon=a["lon"], city=a["city"], zone=f"airport:{a['code']}", kind="airport"
        )
    zones: dict[str, list[str]] = {}
    for n, attrs in g.nodes(data=True):
        zones.setdefault(attrs["zone"], []).append(n)
    for members in zones.values():
        _link_zone(g, members)
    # Hotels and restaurants hang off their nearest sights; they never shortcut between two cities.
    for kind, items in (("hotel", catalog.hotels()), ("restaurant", catalog.restaurants())):
        for item in items:
            if "transfer" in item:  # island resorts: reached only by their own transfer (水上飞机, 快艇)
                t = item["transfer"]
                g.add_node(
                    item["name"],
                    lat=item["lat"],
                    lon=item["lon"],
                    city=item["city"],
                    zone=item["name"],
                    kind=kind,
                )
                g.add_edge(
                    item["name"],
                    t["from"],
                    km=round(_km(g, item["name"], t["from"]), 1),
                    link=True,
                    TRANSIT=t["minutes"],
                    TRANSIT_label=t["label"],
                )
                continue
            anchors = [n for n, a in g.nodes(data=True) if a["kind"] == "place" and a["city"] == item["city"]]
            if not anchors:
                continue
            g.add_node(item["name"], lat=item["lat"], lon=item["lon"], city=item["city"], kind=kind)
            # Join the zone of the nearest sight, so an island hotel does not bridge island and mainland.
            zone = g.nodes[min(anchors, key=lambda n: _km(g, item["name"], n))]["zone"]
            g.nodes[item["name"]]["zone"] = zone
            near = sorted(
                (n for n in anchors if g.nodes[n]["zone"] == zone), key=lambda n: _km(g, item["name"], n)
            )[:3]
            for n in near:
                g.add_edge(item["name"], n, **_edge_times(_km(g, item["name"], n), city_info(item["city"])))
    for link in data["links"]:
        attrs: dict[str, Any] = {"km": link["km"], "link": True}
        for mode in ("DRIVE", "TRANSIT"):
            if mode in link:
                attrs[mode] = link[mode]
                attrs[f"{mode}_label"] = link["label"] if mode == "TRANSIT" else "驾车"
        g.add_edge(link["a"], link["b"], **attrs)
    return g


def _km(g: nx.Graph, a: str, b: str) -> float:
    return haversine_km((g.nodes[a]["lat"], g.nodes[a]["lon"]), (g.nodes[b]["lat"], g.nodes[b]["lon"]))


def _link_zone(g: nx.Graph, members: list[str]) -> None:
    if len(members) < 2:
        return
    city = dict(city_info(g.nodes[members[0]]["city"]))
    override = next(
        (g.nodes[m].get("transit_label") for m in members if g.nodes[m].get("transit_label")), None
    )
    if override:  # e.g. the Fuji area is served by buses, not Tokyo's metro
        city["transit_label"] = override
    import networkx as nx

    full = nx.Graph()
    for a, b in combinations(members, 2):
        full.add_edge(a, b, km=_km(g, a, b))
    # Edges as sorted pairs, added in sorted order: the graph's adjacency order (and so the tie-breaks of
    # shortest paths) must not depend on set iteration order, which changes with PYTHONHASHSEED.
    chosen = {tuple(sorted(e)) for e in nx.minimum_spanning_tree(full, weight="km").edges()}
    for a in members:
        for b in sorted((m for m in members if m != a), key=lambda m: (full[a][m]["km"], m))[:_NEIGHBOURS]:
            chosen.add(tuple(sorted((a, b))))
    for a, b in sorted(chosen):
        g.add_edge(a, b, **_edge_times(full[a][b]["km"], city))


@dataclass
class Route:
    """One computed route: total minutes, distance and the legs (merged by means of transport)."""

    origin: str
    destination: str
    mode: str
    minutes: int
    km: float
    legs: list[dict[str, Any]]


def node_for(text: Any) -> str | None:
    """The map node a place argument names: a sight, airport, hotel, restaurant or a city's centre."""
    ref = resolve_place(text)
    g = map_graph()
    if ref is not None:
        if ref.kind == "city":
            center = city_info(ref.name).get("center")
            return center if center in g else None
        return ref.name if ref.name in g else None
    for cat in ("hotels", "restaurants"):
        item = catalog.find_by_name(cat, str(text))
        if item is not None and item["name"] in g:
            return item["name"]
    return None


def compute_route(origin: str, destination: str, mode: str) -> Route | None:
    """Fastest route between two map nodes by one mode, or None when that mode cannot connect them."""
    import networkx as nx

    g = map_graph()

    def weight(u: str, v: str, attrs: dict[str, Any]) -> int | None:
        return attrs.get(mode)  # None hides the edge (no walking between cities)

    try:
        path = nx.shortest_path(g, origin, destination, weight=weight)
    except nx.NetworkXNoPath:
        return None
    legs: list[dict[str, Any]] = []
    total, km = 0, 0.0
    for u, v in pairwise(path):
        e = g[u][v]
        dist = e["km"] if e.get("link") else e["km"] * _DETOUR[mode]
        total += e[mode]
        km += dist
        label = e.get(f"{mode}_label", mode)
        if legs and legs[-1]["means"] == label:
            legs[-1].update(to=v, duration_min=legs[-1]["duration_min"] + e[mode])
            legs[-1]["distance_km"] = round(legs[-1]["distance_km"] + dist, 1)
        else:
            legs.append(
                {"from": u, "to": v, "means": label, "duration_min": e[mode], "distance_km": round(dist, 1)}
            )
    return Route(origin, destination, mode, total, round(km, 1), legs)
