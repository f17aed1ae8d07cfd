"""maps_weather: deterministic daily weather per (city, date) drawn from monthly climate normals."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import Field

from usersim.sandbox.catalog import fixture
from usersim.sandbox.clock import stable_unit
from usersim.sandbox.places import resolve_place, unknown_place_message
from usersim.sandbox.tools import Args, ToolContext, ToolError, day_arg, register

FORECAST_DAYS = 15


class WeatherArgs(Args):
    city: str = Field(description="City name, e.g. 北京 / 京都 (not a landmark).")
    date: str | None = Field(default=None, description="Day, YYYY-MM-DD; default today.")


def daily_weather(city: str, day: date) -> dict[str, Any]:
    """The weather of `city` on `day`: same inputs, same weather, in every run."""
    high, low, rain_p = fixture("climate")["climate"][city][day.month - 1]
    u = [stable_unit("weather", city, day.isoformat(), i) for i in range(4)]
    rainy = u[0] < rain_p
    if rainy:
        condition = "小雨" if u[1] < 0.45 else "中雨" if u[1] < 0.7 else "大雨" if u[1] < 0.85 else "雷阵雨"
        precip = 60 + int(u[2] * 36)
        shift = -3
    else:
        condition = "晴" if u[1] < 0.45 else "多云" if u[1] < 0.8 else "阴"
        precip = int(u[2] * 30)
        shift = 1 if condition == "晴" else 0
    delta = round((u[3] - 0.5) * 6)
    return {
        "condition": condition,
        "temp_high_c": high + delta + shift,
        "temp_low_c": low + delta,
        "precipitation_probability": precip,
        "humidity": 45 + int(u[2] * 40),
        "wind": f"{1 + int(u[3] * 4)}级",
    }


@register(
    "maps_weather",
    f"Weather for a city on a day: condition, high/low °C, precipitation probability, humidity, wind. Days within "
    f"{FORECAST_DAYS} days of today are forecasts; later days return the climate normal for that date.",
    WeatherArgs,
)
def maps_weather(args: WeatherArgs, ctx: ToolContext) -> dict[str, Any]:
    ref = resolve_place(args.city)
    if ref is None:
        raise ToolError(unknown_place_message("city", args.city))
    if ref.kind != "city":
        raise ToolError(
            f"InvalidCityParameter: '{args.city}' is not a city name; pass a city (e.g. 北京, 上海) in 'city'"
        )
    if ref.name not in fixture("climate")["climate"]:
        raise ToolError(f"no weather data for '{ref.name}'")
    day = day_arg("date", args.date, ctx, future=False) if args.date else ctx.today
    offset = (day - ctx.today).days
    out: dict[str, Any] = {"city": ref.name, "date": day.isoformat(), **daily_weather(ref.name, day)}
    if offset < 0:
        out["kind"] = "observed"
    elif offset < FORECAST_DAYS:
        out["kind"] = "forecast"
    else:
        high, low, rain_p = fixture("climate")["climate"][ref.name][day.month - 1]
        out = {
            "city": ref.name,
            "date": day.isoformat(),
            "kind": "climate_normal",
            "temp_high_c": high,
            "temp_low_c": low,
            "rainy_day_probability": rain_p,
            "note": f"超出 {FORECAST_DAYS} 天预报范围，以上为历史同期气候均值",
        }
    return out
