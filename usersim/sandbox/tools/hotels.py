"""search_hotels: hotel fixtures priced per night (room type x season x weekend)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from pydantic import Field

from usersim.sandbox import catalog
from usersim.sandbox.clock import demand_factor, stable_unit
from usersim.sandbox.maps import haversine_km, map_graph, node_for
from usersim.sandbox.places import resolve_place, unknown_place_message
from usersim.sandbox.tools import Args, ToolContext, ToolError, day_arg, register

NEAR_KM = 1.5  # "附近": walking distance


class HotelArgs(Args):
    location: str = Field(description="City, district or landmark, e.g. 京都 / 祇园 / 上海外滩.")
    check_in: str = Field(description="Check-in date, YYYY-MM-DD.")
    check_out: str = Field(description="Check-out date, YYYY-MM-DD.")
    guests: int = Field(default=2, ge=1, le=10, description="Number of guests.")
    room_type: str | None = Field(default=None, description="Room type wanted, e.g. 海景房 / 大床房.")
    hotel_name: str | None = Field(default=None, description="A specific hotel, e.g. 三亚亚特兰蒂斯.")
    max_price: float | None = Field(default=None, gt=0, description="Maximum price per night, CNY.")
    near: str | None = Field(default=None, description=f"Landmark the hotel must be within {NEAR_KM} km of.")


def night_price(hotel: dict[str, Any], factor: float, day: date) -> int:
    """Price of one night in a room with `factor`, on `day` (never below the base: no discounts)."""
    weekend = 1.15 if day.weekday() in (4, 5) else 1.0  # Friday and Saturday nights
    jitter = 1.0 + 0.06 * stable_unit(hotel["id"], day.isoformat())
    return int(round(hotel["base_price"] * factor * demand_factor(day) * weekend * jitter, -1))


def _rooms(hotel: dict[str, Any], wanted: str | None, nights: list[date]) -> list[dict[str, Any]]:
    rooms = []
    for rt in hotel["room_types"]:
        if wanted and wanted.replace("房", "") not in rt["name"]:
            continue
        nightly = [night_price(hotel, rt["factor"], d) for d in nights]
        rooms.append(
            {
                "room_type": rt["name"],
                "size_sqm": rt.get("size_sqm"),
                "price_per_night": round(sum(nightly) / len(nightly)),
                "nightly_prices": nightly,
                "total_price": sum(nightly),
            }
        )
    return rooms


def _where(args: HotelArgs) -> tuple[str, str | None, str | None]:
    """(city, near landmark, hotel name) from location/near/hotel_name."""
    hotel_name = args.hotel_name
    ref = resolve_place(args.location)
    if ref is None:
        hotel = catalog.find_by_name("hotels", args.location)
        if hotel is None:
            raise ToolError(unknown_place_message("location", args.location))
        return hotel["city"], args.near, hotel_name or hotel["name"]
    near = args.near or (ref.name if ref.kind == "place" else None)
    return ref.city, near, hotel_name


@register(
    "search_hotels",
    "Search hotels in a city / near a landmark for given dates. Returns hotels with area, stars, rating, style, "
    f"distance to the landmark (within {NEAR_KM} km when `near` is given) and room types with per-night and total "
    "prices in CNY. max_price filters on the cheapest matching room's average nightly price.",
    HotelArgs,
)
def search_hotels(args: HotelArgs, ctx: ToolContext) -> dict[str, Any]:
    check_in = day_arg("check_in", args.check_in, ctx)
    check_out = day_arg("check_out", args.check_out, ctx)
    if check_out <= check_in:
        raise ToolError(f"argument 'check_out' {check_out} must be after check_in {check_in}")
    nights = [check_in + timedelta(days=i) for i in range((check_out - check_in).days)]
    city, near, hotel_name = _where(args)
    near_point = None
    if near:
        node = node_for(near)
        if node is None:
            raise ToolError(unknown_place_message("near", near))
        attrs = map_graph().nodes[node]
        near_point = (attrs["lat"], attrs["lon"])
    candidates = [h for h in catalog.hotels() if h["city"] == city]
    if hotel_name:
        wanted = catalog.find_by_name("hotels", hotel_name)
        candidates = [h for h in candidates if wanted is not None and h["id"] == wanted["id"]]
    found, messages = [], []
    for h in candidates:
        entry = {
            k: h[k] for k in ("id", "name", "area", "stars", "rating", "style", "amenities", "description")
        }
        if near_point:
            entry["distance_km"] = round(haversine_km(near_point, (h["lat"], h["lon"])), 2)
            if entry["distance_km"] > NEAR_KM and not hotel_name:
                continue
        rooms = _rooms(h, args.room_type, nights)
        if not rooms:
            if hotel_name:
                messages.append(
                    f"{h['name']} 没有「{args.room_type}」房型，可选："
                    + "、".join(r["name"] for r in h["room_types"])
                )
            continue
        entry["rooms"] = rooms
        found.append(entry)
    cheapest = min((min(r["price_per_night"] for r in e["rooms"]) for e in found), default=None)
    if args.max_price is not None:
        within = [e for e in found if min(r["price_per_night"] for r in e["rooms"]) <= args.max_price]
        if found and not within:
            messages.append(
                f"没有每晚 ≤ {args.max_price:g} 元的酒店；符合其他条件的最低价为每晚 {cheapest} 元"
            )
        found = within
    if not candidates and hotel_name:
        messages.append(f"{city} 没有找到名为「{hotel_name}」的酒店")
    elif not found and not messages:
        messages.append(
            f"没有找到符合条件的酒店（{city}{'，' + near + f' {NEAR_KM} 公里内' if near else ''}）"
        )
    key = (
        (lambda e: e.get("distance_km", 0))
        if near_point and not args.max_price
        else (lambda e: min(r["price_per_night"] for r in e["rooms"]))
    )
    result: dict[str, Any] = {
        "location": city,
        "near": near,
        "check_in": check_in.isoformat(),
        "check_out": check_out.isoformat(),
        "nights": len(nights),
        "guests": args.guests,
        "currency": "CNY",
        "hotels": sorted(found, key=key),
    }
    if messages:
        result["message"] = "；".join(messages)
    return result
