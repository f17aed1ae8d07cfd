"""search_trains: high-speed rail timetables generated from sandbox/data/trains.json."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import Field

from usersim.sandbox.catalog import fixture
from usersim.sandbox.clock import demand_factor, stable_unit
from usersim.sandbox.tools import Args, ToolContext, ToolError, day_arg, place_city, register


class TrainArgs(Args):
    origin: str = Field(description="Departure city or station, e.g. 北京 / 北京南站.")
    destination: str = Field(description="Arrival city or station, e.g. 上海 / 上海虹桥站.")
    date: str = Field(description="Travel date, YYYY-MM-DD.")
    passengers: int = Field(default=1, ge=1, le=9, description="Number of passengers.")


def _seats(no: str, day: str, seat: str, factor: float) -> str:
    # Busier days sell out more often; the count is fixed by (train, day, class).
    u = stable_unit("seat", no, day, seat) / factor
    return "无" if u < 0.12 else ("有" if u > 0.6 else str(int(u * 40)))


@register(
    "search_trains",
    "Search high-speed rail (高铁/动车/新干线) between two cities on a date. Returns every train with "
    "number, stations, departure/arrival times, duration, seat classes with price (CNY) and availability.",
    TrainArgs,
)
def search_trains(args: TrainArgs, ctx: ToolContext) -> dict[str, Any]:
    frm, to = place_city("origin", args.origin), place_city("destination", args.destination)
    if frm == to:
        raise ToolError(f"origin and destination are the same city ({frm})")
    day = day_arg("date", args.date, ctx)
    line = next((ln for ln in fixture("trains")["lines"] if set(ln["cities"]) == {frm, to}), None)
    if line is None:
        return {
            "origin": frm,
            "destination": to,
            "date": day.isoformat(),
            "trains": [],
            "message": f"{frm} 与 {to} 之间没有高铁直达线路",
        }
    forward = line["cities"][0] == frm
    stations = line["stations"] if forward else line["stations"][::-1]
    start = datetime.combine(day, datetime.strptime(line["first"], "%H:%M").time())
    last = datetime.combine(day, datetime.strptime(line["last"], "%H:%M").time())
    factor = demand_factor(day)
    trains, i = [], 0
    while start + timedelta(minutes=i * line["interval_min"]) <= last:
        dep = start + timedelta(minutes=i * line["interval_min"])
        no = f"{line['prefix']}{line['number_base'] + 2 * i + (0 if forward else 1)}"
        fast = stable_unit("fast", no) < 0.4
        minutes = line["fast_min"] if fast else line["slow_min"]
        arr = dep + timedelta(minutes=minutes)
        trains.append(
            {
                "train_no": no,
                "from_station": stations[0],
                "to_station": stations[1],
                "departure": dep.strftime("%H:%M"),
                "arrival": arr.strftime("%H:%M") + ("（次日）" if arr.date() > day else ""),
                "duration_min": minutes,
                "seats": {
                    seat: {"price": price, "available": _seats(no, day.isoformat(), seat, factor)}
                    for seat, price in line["prices"].items()
                },
            }
        )
        i += 1
    return {
        "origin": frm,
        "destination": to,
        "date": day.isoformat(),
        "passengers": args.passengers,
        "currency": "CNY",
        "trains": trains,
    }
