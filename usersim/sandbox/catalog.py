"""Fixture catalogs (products, hotels, flights, restaurants ...) and finding the items a reply names.

Judges call `lookup_items("products", reply_text)` to check recommended items against the very
data the tools served (e.g. every recommended laptop weighs <= 1.5 kg).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from usersim.core.registry import did_you_mean

DATA_DIR = Path(__file__).parent / "data"


@cache
def fixture(name: str) -> dict[str, Any]:
    """The parsed `sandbox/data/<name>.json` file."""
    with open(DATA_DIR / f"{name}.json", encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def hotels() -> list[dict[str, Any]]:
    """Hotels; `price` is the cheapest room on an ordinary night (what a judge compares a budget with)."""
    out = []
    for h in fixture("hotels")["hotels"]:
        cheapest = min(rt["factor"] for rt in h["room_types"])
        out.append({**h, "price": int(round(h["base_price"] * cheapest, -1))})
    return out


def restaurants() -> list[dict[str, Any]]:
    return fixture("restaurants")["restaurants"]


def products() -> list[dict[str, Any]]:
    return fixture("products")["products"]


def communities() -> list[dict[str, Any]]:
    return fixture("housing")["communities"]


@lru_cache(maxsize=1)
def flights() -> list[dict[str, Any]]:
    """Every scheduled flight as one flat item (both directions of each route)."""
    out: list[dict[str, Any]] = []
    for route in fixture("flights")["routes"]:
        a, b = route["route"]
        for f in route["flights"]:
            ap = f.get("airports", route["airports"])
            for (no, dep), frm, to, frm_ap, to_ap in (
                (f["out"], a, b, ap[0], ap[1]),
                (f["ret"], b, a, ap[1], ap[0]),
            ):
                lcc = f["type"] == "LCC"
                out.append(
                    {
                        "id": no,
                        "name": f"{f['airline']} {no}",
                        "flight_no": no,
                        "airline": f["airline"],
                        "airline_type": f["type"],
                        "origin": frm,
                        "destination": to,
                        "origin_airport": frm_ap,
                        "destination_airport": to_ap,
                        "departure_time": dep,
                        "duration_min": f.get("duration_min", route["duration_min"]),
                        "price": f["price"],
                        "price_per_person": f["price"],
                        "baggage_included": not lcc,
                        "baggage_fee_per_piece": f.get("baggage_fee") if lcc else None,
                        "baggage_allowance": None if lcc else f.get("baggage_allowance", "23kg"),
                        "stops": f.get("stops", 0),
                        "via": f.get("via"),
                        "days": f.get("days"),
                        "notes": f.get("notes", ""),
                    }
                )
    return out


CATALOGS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "products": products,
    "hotels": hotels,
    "flights": flights,
    "restaurants": restaurants,
    "communities": communities,
}


def _norm(text: str) -> str:
    return re.sub(r"[\s\-_·()（）]+", "", text).casefold()


def _names(catalog: str, item: dict[str, Any]) -> list[str]:
    if catalog == "flights":
        return [item["flight_no"]]
    if catalog == "communities":
        return [item["community_name"]]
    return [item["name"], item["id"], *item.get("aliases", [])]


@cache
def _alias_table(catalog: str) -> list[tuple[str, int]]:
    items = CATALOGS[catalog]()
    table = {
        (_norm(n), i) for i, item in enumerate(items) for n in _names(catalog, item) if len(_norm(n)) >= 2
    }
    # Longest first, so "iPhone 16 Pro Max" wins over the "iPhone 16" inside it.
    return sorted(table, key=lambda t: (-len(t[0]), t[1]))


def lookup_items(catalog: str, text: str) -> list[dict[str, Any]]:
    """Catalog items named (by name, alias or id) in `text`, in order of first mention, no repeats.

    catalog: products | hotels | flights | restaurants | communities. Matching ignores case, spaces
    and hyphens; a longer name claims its span before a shorter one inside it, and an ASCII name
    must not run on into more letters/digits ("MU531" does not match inside "MU5310").
    """
    if catalog not in CATALOGS:
        raise KeyError(
            f"Unknown catalog '{catalog}'.{did_you_mean(catalog, set(CATALOGS))} Available: {', '.join(CATALOGS)}"
        )
    items = CATALOGS[catalog]()
    hay, gaps = _norm_gaps(text)
    taken = [False] * len(hay)
    found: list[tuple[int, int]] = []  # (position, item index)
    for alias, idx in _alias_table(catalog):
        start = hay.find(alias)
        while start != -1:
            end = start + len(alias)
            if not any(taken[start:end]) and _bounded(hay, start, end, gaps):
                taken[start:end] = [True] * len(alias)
                found.append((start, idx))
            start = hay.find(alias, start + 1)
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for _, idx in sorted(found):
        if idx not in seen:
            seen.add(idx)
            out.append(items[idx])
    return out


def _norm_gaps(text: str) -> tuple[str, list[bool]]:
    """_norm(text) and, per kept character, whether a space or separator stood before it: "the
    ThinkPad X13" and "MacBook Air 13 M3" keep their word boundaries after the spaces go."""
    kept, gaps, gap = [], [], False
    for ch in text:
        if re.match(r"[\s\-_·()（）]", ch):
            gap = True
            continue
        for c in ch.casefold():
            kept.append(c)
            gaps.append(gap)
            gap = False
    return "".join(kept), gaps + [True]


def _bounded(hay: str, start: int, end: int, gaps: list[bool] | None = None) -> bool:
    def word(ch: str) -> bool:
        return ch.isascii() and ch.isalnum()

    cut = gaps or [False] * (len(hay) + 1)
    runs_in = word(hay[start]) and start > 0 and word(hay[start - 1]) and not cut[start]
    runs_on = word(hay[end - 1]) and end < len(hay) and word(hay[end]) and not cut[end]
    return not (runs_in or runs_on)


def find_by_name(catalog: str, text: str) -> dict[str, Any] | None:
    """The item whose name/alias/id equals `text` (normalised), else the single item named in it."""
    key = _norm(text)
    for item in CATALOGS[catalog]():
        if key in {_norm(n) for n in _names(catalog, item)} or key == _norm(str(item.get("id", ""))):
            return item
    hits = lookup_items(catalog, text)
    return hits[0] if len(hits) == 1 else None
