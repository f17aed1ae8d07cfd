"""search_flights: schedules from sandbox/data/flights.json, priced per date (seed 004 result shape)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

from pydantic import Field

from usersim.sandbox.catalog import fixture
from usersim.sandbox.clock import demand_factor, stable_unit
from usersim.sandbox.places import city_info
from usersim.sandbox.tools import Args, ToolContext, ToolError, day_arg, place_city, register

_CABINS = {
    "economy": "Economy",
    "经济舱": "Economy",
    "premium_economy": "Premium Economy",
    "超级经济舱": "Premium Economy",
    "business": "Business",
    "商务舱": "Business",
    "first": "First",
    "头等舱": "First",
}
_CABIN_FACTOR = {"Economy": 1.0, "Premium Economy": 1.6, "Business": 3.2, "First": 5.5}
_WEEKDAY_NAMES = "一二三四五六日"


class FlightArgs(Args):
    origin: str = Field(description="Departure city, airport name or IATA code, e.g. 上海 / PVG.")
    destination: str = Field(description="Arrival city, airport name or IATA code, e.g. 大阪 / KIX.")
    departure_date: str = Field(description="Outbound date, YYYY-MM-DD.")
    return_date: str | None = Field(default=None, description="Return date for a round trip, YYYY-MM-DD.")
    passengers: int = Field(default=1, ge=1, le=9, description="Number of passengers.")
    cabin_class: str | None = Field(default=None, description="economy | premium_economy | business | first.")


def _schedule(frm: str, to: str) -> list[dict[str, Any]]:
    """Flights from city `frm` to city `to`, one dict per flight (direction resolved)."""
    out = []
    for route in fixture("flights")["routes"]:
        a, b = route["route"]
        if (a, b) not in ((frm, to), (to, frm)):
            continue
        for f in route["flights"]:
            airports = f.get("airports", route["airports"])
            forward = (a, b) == (frm, to)
            no, dep = f["out"] if forward else f["ret"]
            out.append(
                {
                    **f,
                    "flight_no": no,
                    "dep": dep,
                    "airports": airports if forward else airports[::-1],
                    "minutes": f.get("duration_min", route["duration_min"]),
                }
            )
    return out


def _leg(f: dict[str, Any], frm: str, to: str, day: date, cabin: str, passengers: int) -> dict[str, Any]:
    tz_from, tz_to = city_info(frm)["tz"], city_info(to)["tz"]
    hh, mm = map(int, f["dep"].split(":"))
    dep = datetime(day.year, day.month, day.day, hh, mm, tzinfo=timezone(timedelta(hours=tz_from)))
    arr = (dep + timedelta(minutes=f["minutes"])).astimezone(timezone(timedelta(hours=tz_to)))
    weekday = 1.08 if day.weekday() in (4, 6) else 1.0  # Friday / Sunday demand
    jitter = 0.88 + 0.24 * stable_unit(f["flight_no"], day.isoformat())
    price = int(round(f["price"] * demand_factor(day) * weekday * jitter * _CABIN_FACTOR[cabin], -1))
    lcc = f["type"] == "LCC"
    leg: dict[str, Any] = {
        "airline": f["airline"],
        "airline_type": f["type"],
        "flight_no": f["flight_no"],
        "departure_airport": f["airports"][0],
        "arrival_airport": f["airports"][1],
        "departure": dep.isoformat(),
        "arrival": arr.isoformat(),
        "duration_min": f["minutes"],
        "stops": f.get("stops", 0),
        "price_per_person": price,
        "total_price": price * passengers,
        "cabin": cabin,
        "baggage_included": not lcc,
        "seats_left": 1 + int(stable_unit("seats", f["flight_no"], day.isoformat()) * 9),
        "notes": f.get("notes", ""),
    }
    if f.get("via"):
        leg["via"] = f["via"]
    if lcc:
        leg["baggage_fee_per_piece"] = f["baggage_fee"]
        leg["notes"] = (
            leg["notes"] + "；" if leg["notes"] else ""
        ) + f"不含托运行李，托运 {f['baggage_fee']} 元/件"
    else:
        leg["baggage_allowance"] = f.get("baggage_allowance", "23kg")
    return leg


def _legs(
    frm: str, to: str, day: date, cabin: str, passengers: int, notes: list[str]
) -> list[dict[str, Any]]:
    schedule = _schedule(frm, to)
    if not schedule:
        notes.append(f"未找到 {frm} → {to} 的航线（本数据源仅含直飞与常见中转航线）")
        return []
    operating = [f for f in schedule if not f.get("days") or day.isoweekday() in f["days"]]
    if not operating:
        days = sorted({d for f in schedule for d in f.get("days", [])})
        names = "、".join("周" + _WEEKDAY_NAMES[d - 1] for d in days)
        notes.append(
            f"该日期无航班：{frm} → {to} 仅 {names} 有航班（{day.isoformat()} 为周{_WEEKDAY_NAMES[day.weekday()]}）"
        )
        return []
    offered = [f for f in operating if not (f["type"] == "LCC" and cabin != "Economy")]
    if not offered:
        notes.append(f"{day.isoformat()} {frm} → {to} 没有 {cabin} 舱位（仅廉航执飞）")
    legs = [_leg(f, frm, to, day, cabin, passengers) for f in offered]
    return sorted(legs, key=lambda leg: leg["departure"])


@register(
    "search_flights",
    "Search flights between two cities/airports on a date (optionally a round trip). Returns outbound and "
    "return options with airline, airline_type (LCC / Full-service), times with time zones, price per person "
    "in CNY, cabin, baggage rules (LCC fares exclude checked bags) and notes.",
    FlightArgs,
)
def search_flights(args: FlightArgs, ctx: ToolContext) -> dict[str, Any]:
    cabin = "Economy"
    if args.cabin_class:
        cabin = _CABINS.get(args.cabin_class.strip().lower().replace(" ", "_"), "")
        if not cabin:
            raise ToolError(
                f"argument 'cabin_class' must be one of economy, premium_economy, business, first; got '{args.cabin_class}'"
            )
    notes: list[str] = []
    cities = []
    for arg, value in (("origin", args.origin), ("destination", args.destination)):
        city = place_city(arg, value)
        alt = city_info(city).get("flight_city")
        if alt:  # 京都 has no airport: flights land at Kansai (Osaka)
            notes.append(f"{city}没有机场，已改为搜索{alt}（KIX/ITM）的航班")
            city = alt
        cities.append(city)
    frm, to = cities
    if frm == to:
        raise ToolError(f"origin and destination are the same city ({frm})")
    out_day = day_arg("departure_date", args.departure_date, ctx)
    result: dict[str, Any] = {
        "origin": frm,
        "destination": to,
        "departure_date": out_day.isoformat(),
        "passengers": args.passengers,
        "currency": "CNY",
        "outbound": _legs(frm, to, out_day, cabin, args.passengers, notes),
        "return": [],
    }
    if args.return_date:
        back = day_arg("return_date", args.return_date, ctx)
        if back < out_day:
            raise ToolError(
                f"argument 'return_date' {back.isoformat()} is before departure_date {out_day.isoformat()}"
            )
        result["return_date"] = back.isoformat()
        result["return"] = _legs(to, frm, back, cabin, args.passengers, notes)
    if notes:
        result["notes"] = notes
    return result
