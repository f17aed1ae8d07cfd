"""Place names: one canonical spelling for every city, airport and sight the fixtures know.

`normalize_place` is shared with the judges (argument matchers compare places through it), so a
city alias, an airport code or an airport name all give the *city* (上海/Shanghai/PVG/浦东 -> 上海),
while a sight gives the sight itself (故宫 stays 故宫: it is in 北京 but is not the city).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from usersim.core.registry import did_you_mean

DATA_DIR = Path(__file__).parent / "data"

PlaceKind = Literal["city", "airport", "place"]


@dataclass(frozen=True)
class PlaceRef:
    """A resolved place: what it is, its canonical name and the city it belongs to."""

    kind: PlaceKind
    name: str  # canonical: city name, airport code, or sight name
    city: str


def _key(text: str) -> str:
    # Case, spaces and hyphens vary freely in user/agent text ("Fushimi Inari", "fushimi-inari").
    return re.sub(r"[\s\-_·'’]+", "", text).casefold()


@lru_cache(maxsize=1)
def place_data() -> dict[str, Any]:
    """The raw map fixture (cities, airports, places, links)."""
    with open(DATA_DIR / "places.json", encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def _index() -> dict[str, PlaceRef]:
    data = place_data()
    index: dict[str, PlaceRef] = {}

    def add(alias: str, ref: PlaceRef) -> None:
        index.setdefault(_key(alias), ref)

    # Order matters: cities first so an alias shared with a sight resolves to the city.
    for c in data["cities"]:
        ref = PlaceRef("city", c["name"], c["name"])
        for alias in [c["name"], *c.get("aliases", [])]:
            add(alias, ref)
    for a in data["airports"]:
        ref = PlaceRef("airport", a["code"], a["city"])
        for alias in [a["code"], a["name"], *a.get("aliases", [])]:
            add(alias, ref)
    for p in data["places"]:
        ref = PlaceRef("place", p["name"], p["city"])
        for alias in [p["name"], *p.get("aliases", [])]:
            add(alias, ref)
    return index


def resolve_place(text: Any) -> PlaceRef | None:
    """The place `text` names, or None. Tolerates 市/都/府 suffixes and 'Kyoto, Japan' forms."""
    if not isinstance(text, str) or not text.strip():
        return None
    index = _index()
    candidates = [text, re.split(r"[,，/]", text)[0]]
    for cand in list(candidates):
        candidates.append(re.sub(r"(市|都|府|city|国际机场|机场)$", "", cand.strip(), flags=re.IGNORECASE))
    for cand in candidates:
        ref = index.get(_key(cand))
        if ref is not None:
            return ref
    return _city_prefixed(_key(text), index)


def _city_prefixed(key: str, index: dict[str, PlaceRef]) -> PlaceRef | None:
    """'京都清水寺' / '北京故宫': a city name followed by a sight of that city is the sight."""
    for alias, ref in index.items():
        if ref.kind == "city" and len(alias) >= 2 and key.startswith(alias) and len(key) > len(alias):
            rest = index.get(key[len(alias) :])
            if rest is not None and rest.kind != "city" and rest.city == ref.city:
                return rest
    return None


def normalize_place(text: Any) -> str | None:
    """Canonical name for matching: cities and airports -> the city; sights -> the sight; else None."""
    ref = resolve_place(text)
    if ref is None:
        return None
    return ref.city if ref.kind in ("city", "airport") else ref.name


def city_of(text: Any) -> str | None:
    """The city any known place belongs to (故宫 -> 北京, KIX -> 大阪, 京都 -> 京都), else None."""
    ref = resolve_place(text)
    return ref.city if ref else None


def city_info(city: str) -> dict[str, Any]:
    """The fixture record of a canonical city name."""
    for c in place_data()["cities"]:
        if c["name"] == city:
            return c
    raise KeyError(city)


def known_names() -> list[str]:
    """Every canonical city, airport code and sight name (for 'did you mean' hints)."""
    data = place_data()
    return (
        [c["name"] for c in data["cities"]]
        + [a["code"] for a in data["airports"]]
        + [p["name"] for p in data["places"]]
    )


def unknown_place_message(arg: str, text: Any) -> str:
    """Error text for an argument naming a place the sandbox does not know."""
    return f"Error: unknown place '{text}' in argument '{arg}'.{did_you_mean(str(text), known_names())}"
