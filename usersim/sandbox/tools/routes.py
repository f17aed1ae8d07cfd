"""compute_google_maps_routes / compute_google_maps_route_matrix over the map graph (sandbox.maps)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from usersim.core.registry import did_you_mean
from usersim.sandbox.maps import MODES, compute_route, node_for
from usersim.sandbox.places import unknown_place_message
from usersim.sandbox.tools import Args, ToolContext, ToolError, register

_MODE_ALIASES = {
    "DRIVING": "DRIVE",
    "CAR": "DRIVE",
    "WALKING": "WALK",
    "PUBLIC_TRANSIT": "TRANSIT",
    "TRANSIT_MODE": "TRANSIT",
}
MAX_ELEMENTS = 100


class RouteArgs(Args):
    origin: str = Field(description="Start: a landmark, station, airport, hotel or city, e.g. 清水寺.")
    destination: str = Field(description="End: a landmark, station, airport, hotel or city, e.g. 金阁寺.")
    travel_mode: str = Field(default="DRIVE", description="DRIVE | WALK | TRANSIT.")


class MatrixArgs(Args):
    origins: list[str] = Field(min_length=1, description="Start places.")
    destinations: list[str] = Field(min_length=1, description="End places.")
    travel_mode: str = Field(default="DRIVE", description="DRIVE | WALK | TRANSIT.")


def _mode(value: str) -> str:
    mode = value.strip().upper()
    mode = _MODE_ALIASES.get(mode, mode)
    if mode not in MODES:
        raise ToolError(
            f"argument 'travel_mode' must be DRIVE, WALK or TRANSIT; got '{value}'.{did_you_mean(mode, set(MODES))}"
        )
    return mode


def _node(arg: str, value: str) -> str:
    node = node_for(value)
    if node is None:
        raise ToolError(unknown_place_message(arg, value))
    return node


@register(
    "compute_google_maps_routes",
    "Google Maps route between two places for a travel mode (DRIVE, WALK, TRANSIT): duration in minutes, "
    "distance in km and the legs (means of transport per leg).",
    RouteArgs,
)
def compute_google_maps_routes(args: RouteArgs, ctx: ToolContext) -> dict[str, Any]:
    mode = _mode(args.travel_mode)
    a, b = _node("origin", args.origin), _node("destination", args.destination)
    route = compute_route(a, b, mode)
    base = {"origin": a, "destination": b, "travel_mode": mode, "source": "Google Maps"}
    if route is None:
        return {**base, "status": "ZERO_RESULTS", "error_message": f"No {mode} route between {a} and {b}."}
    return {
        **base,
        "status": "OK",
        "duration_min": route.minutes,
        "distance_km": route.km,
        "legs": route.legs,
    }


@register(
    "compute_google_maps_route_matrix",
    f"Google Maps travel times between every origin and every destination (at most {MAX_ELEMENTS} pairs) for a "
    "travel mode: one row per origin with duration_min and distance_km per destination.",
    MatrixArgs,
)
def compute_google_maps_route_matrix(args: MatrixArgs, ctx: ToolContext) -> dict[str, Any]:
    mode = _mode(args.travel_mode)
    if len(args.origins) * len(args.destinations) > MAX_ELEMENTS:
        raise ToolError(
            f"too many pairs: {len(args.origins)} origins x {len(args.destinations)} destinations > {MAX_ELEMENTS}"
        )
    rows = []
    for o in args.origins:
        a = node_for(o)
        elements = []
        for d in args.destinations:
            b = node_for(d)
            if a is None or b is None:
                elements.append(
                    {
                        "destination": d,
                        "status": "NOT_FOUND",
                        "error_message": unknown_place_message(
                            "origins" if a is None else "destinations", o if a is None else d
                        ),
                    }
                )
                continue
            route = compute_route(a, b, mode)
            if route is None:
                elements.append({"destination": b, "status": "ZERO_RESULTS"})
            else:
                elements.append(
                    {"destination": b, "status": "OK", "duration_min": route.minutes, "distance_km": route.km}
                )
        rows.append({"origin": a or o, "elements": elements})
    return {"travel_mode": mode, "status": "OK", "rows": rows, "source": "Google Maps"}
