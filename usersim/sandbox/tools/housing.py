"""beike_search_resale_housing / beike_search_community_detail over Beijing 朝阳区 fixtures."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from usersim.core.registry import did_you_mean
from usersim.sandbox.catalog import fixture
from usersim.sandbox.tools import Args, ToolContext, ToolError, place_city, register


class ResaleArgs(Args):
    city: str = Field(description="City, e.g. 北京.")
    district: str | None = Field(default=None, description="District, e.g. 朝阳区.")
    community_name: str | None = Field(default=None, description="Community (小区) name.")
    bedrooms: int | None = Field(default=None, ge=1, le=6, description="Number of bedrooms (居室).")
    max_total_price_wan: float | None = Field(default=None, gt=0, description="Maximum total price, 万元.")


class CommunityArgs(Args):
    community_name: str = Field(description="Community (小区) name, e.g. 望京花园小区.")
    city: str | None = Field(default=None, description="City, e.g. 北京.")


def find_community(name: str) -> dict[str, Any] | None:
    """A community by exact name, or by a name that contains / is contained in it (望京花园 -> 望京花园小区)."""
    key = name.strip().replace(" ", "")
    communities = fixture("housing")["communities"]
    for c in communities:
        if c["community_name"] == key:
            return c
    hits = [c for c in communities if key in c["community_name"] or c["community_name"] in key]
    return hits[0] if len(hits) == 1 else None


@register(
    "beike_search_resale_housing",
    "Search resale homes (二手房) on Beike: filters by city, district, community, bedrooms and maximum total price "
    "(万元). Returns listings with community, address, bedrooms, area, total price (万) and unit price (元/㎡).",
    ResaleArgs,
)
def beike_search_resale_housing(args: ResaleArgs, ctx: ToolContext) -> dict[str, Any]:
    city = place_city("city", args.city)
    data = fixture("housing")
    if city not in {c["city"] for c in data["communities"]}:
        return {"total": 0, "listings": [], "message": f"暂无{city}的房源数据"}
    by_name = {c["community_name"]: c for c in data["communities"]}
    listings = list(data["listings"])
    if args.district:
        district = args.district if args.district.endswith("区") else args.district + "区"
        listings = [x for x in listings if by_name[x["community_name"]]["district"] == district]
    if args.community_name:
        community = find_community(args.community_name)
        if community is None:
            raise ToolError(
                f"unknown community '{args.community_name}' in argument 'community_name'."
                f"{did_you_mean(args.community_name, set(by_name))}"
            )
        listings = [x for x in listings if x["community_name"] == community["community_name"]]
    if args.bedrooms:
        listings = [x for x in listings if x["bedrooms"] == args.bedrooms]
    if args.max_total_price_wan:
        listings = [x for x in listings if x["total_price_wan"] <= args.max_total_price_wan]
    listings.sort(key=lambda x: x["total_price_wan"])
    return {"total": len(listings), "listings": listings}


@register(
    "beike_search_community_detail",
    "Details of one residential community (小区) on Beike: average price per ㎡, built year, nearby amenities, "
    "schools, subway distance and lines.",
    CommunityArgs,
)
def beike_search_community_detail(args: CommunityArgs, ctx: ToolContext) -> dict[str, Any]:
    if args.city:
        place_city("city", args.city)
    community = find_community(args.community_name)
    if community is None:
        names = {c["community_name"] for c in fixture("housing")["communities"]}
        raise ToolError(f"未找到小区 '{args.community_name}'.{did_you_mean(args.community_name, names)}")
    return community
