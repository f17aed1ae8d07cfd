"""search_restaurants: restaurant fixtures filtered by place, cuisine, price and spice."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from usersim.lang import quantity
from usersim.sandbox import catalog
from usersim.sandbox.maps import haversine_km, map_graph, node_for
from usersim.sandbox.places import unknown_place_message
from usersim.sandbox.tools import Args, ToolContext, ToolError, place_city, register
from usersim.sandbox.tools.search import relevance

NEAR_KM = 3.0
_SPICY_WORDS = ("辣", "spicy", "麻辣", "辛辣")


class RestaurantArgs(Args):
    city: str = Field(description="City, e.g. 北京 / 成都.")
    query: str | None = Field(
        default=None, description="What you want, e.g. 约会 / 商务宴请 人均300-500 / 拉面."
    )
    near: str | None = Field(
        default=None, description=f"Landmark, district or community within {NEAR_KM} km."
    )
    cuisine: str | None = Field(default=None, description="Cuisine, e.g. 川菜 / 法餐 / 火锅.")
    exclude: list[str] | str | None = Field(
        default=None, description="Things to avoid, e.g. ['辣'] excludes spicy dishes."
    )


def _price_range(query: str) -> tuple[float, float] | None:
    """The price range a query names ("人均300-500", "300 到 500 元"), read by usersim.lang.quantity;
    and the query without it (the words left to match on)."""
    span = next(
        (q for q in quantity.quantities(query) if q.high is not None and q.kind in ("money", "number")), None
    )
    return (span.value, span.high) if span and span.high is not None else None


def _without_prices(query: str) -> str:
    out = query
    for q in reversed([q for q in quantity.quantities(query) if q.kind in ("money", "number")]):
        out = out[: q.start] + " " + out[q.end :]
    return re.sub(r"人均", " ", out)


@register(
    "search_restaurants",
    "Search restaurants in a city, optionally near a landmark/district, by cuisine or free-text query "
    "(a price range such as 人均300-500 in the query filters on price per person). exclude removes matches "
    "(exclude ['辣'] keeps only non-spicy or spice-optional places). Returns rating, price per person, "
    "spicy_level (0 none .. 3 very), tags, review summary and reviews.",
    RestaurantArgs,
)
def search_restaurants(args: RestaurantArgs, ctx: ToolContext) -> dict[str, Any]:
    city = place_city("city", args.city)
    items = [r for r in catalog.restaurants() if r["city"] == city]
    if args.near:
        node = node_for(args.near)
        if node is None:
            items = [r for r in items if args.near in (r["district"], r["near"])]
            if not items:
                raise ToolError(unknown_place_message("near", args.near))
        else:
            attrs = map_graph().nodes[node]
            items = [
                dict(
                    r, distance_km=round(haversine_km((attrs["lat"], attrs["lon"]), (r["lat"], r["lon"])), 2)
                )
                for r in items
            ]
            items = [r for r in items if r["distance_km"] <= NEAR_KM or r["district"] == args.near]
    if args.cuisine:
        items = [r for r in items if args.cuisine in r["cuisine"] or r["cuisine"] in args.cuisine]
    excludes = [args.exclude] if isinstance(args.exclude, str) else list(args.exclude or [])
    for word in excludes:
        if any(w in word.lower() for w in _SPICY_WORDS):
            items = [r for r in items if r["spicy_level"] <= 1]  # 1 = spice optional (清汤/鸳鸯/免辣)
        else:
            items = [
                r
                for r in items
                if word not in r["cuisine"] and word not in r["name"] and word not in r["tags"]
            ]
    if args.query:
        span = _price_range(args.query)
        if span:
            items = [r for r in items if span[0] <= r["price_per_person"] <= span[1]]
        words = _without_prices(args.query).strip()
        if words:
            scored = [
                (
                    relevance(
                        words,
                        " ".join([r["name"], r["cuisine"], r["district"], *r["tags"], r["review_summary"]]),
                    ),
                    r,
                )
                for r in items
            ]
            best = max((s for s, _ in scored), default=0)
            # A generic query (美食, 好吃的) matches nothing specific: it then ranks nothing out.
            items = [r for s, r in sorted(scored, key=lambda t: (-t[0], -t[1]["rating"])) if s >= best * 0.5]
    out = [{k: v for k, v in r.items() if k not in ("lat", "lon", "aliases")} for r in items]
    result: dict[str, Any] = {"city": city, "count": len(out), "restaurants": out}
    if not out:
        result["message"] = "没有找到符合条件的餐厅"
    return result
