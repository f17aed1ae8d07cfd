"""THE holiday calendar: official days off and peak-travel windows, per holiday and year.

One data file (usersim/lang/data/calendar.yaml, extended by a `calendar.yaml` in any resource
folder) feeds the judges' date matching, the reference agent's reading of "国庆" and the sandbox's
holiday prices, so they can no longer disagree. Official days and the peak-travel window are
separate fields: the judges and the reference agent resolve "春节" to the official days, the
sandbox prices on the peak window.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from usersim.core.yamlfile import load_trusted
from usersim.lang.resources import DATA, ResourceError, resource_dirs, resources

DateRange = tuple[date, date]


@dataclass(frozen=True)
class Holiday:
    """One holiday in one year. `official` = days off (None: not an official holiday, or the year's
    schedule is unpublished); `peak` = the peak-travel window (None: the official days are it)."""

    id: str
    year: int
    official: DateRange | None = None
    peak: DateRange | None = None
    day: date | None = None
    typical: date | None = None
    demand: float | None = None

    @property
    def window(self) -> DateRange | None:
        """The days a mention of the holiday means: the official days, else the peak window."""
        return self.official or self.peak

    @property
    def busy(self) -> DateRange | None:
        """The days travel costs more: the peak window, else the official days."""
        return self.peak or self.official


def _read(path: Path) -> dict[str, Any]:
    try:
        data = load_trusted(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ResourceError(f"{path}: cannot read the holiday calendar: {exc}") from None
    if not isinstance(data.get("holidays", {}), dict):
        raise ResourceError(f"{path}: `holidays` must map holiday ids to their years")
    return data.get("holidays") or {}


@functools.lru_cache(maxsize=4)
def _table(dirs: tuple[Path, ...]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for folder in (DATA, *dirs):
        path = folder / "calendar.yaml"
        if not path.is_file():
            continue
        for hid, spec in _read(path).items():
            base = table.setdefault(str(hid), {"years": {}})
            for key, value in (spec or {}).items():
                if key == "years":
                    for year, row in (value or {}).items():
                        base["years"].setdefault(int(year), {}).update(row or {})
                else:
                    base[key] = value
    return table


def table() -> dict[str, dict[str, Any]]:
    """The merged calendar: holiday id -> its spec (demand, every_year, years)."""
    return _table(tuple(resource_dirs()))


def holiday_ids() -> list[str]:
    return sorted(table())


def _day(value: Any, year: int) -> date:
    if isinstance(value, date):
        return value
    text = str(value)
    if len(text) == 5:  # MM-DD of the every_year pattern
        return date(year, int(text[:2]), int(text[3:]))
    return date.fromisoformat(text)


def _range(value: Any, year: int) -> DateRange | None:
    if not value:
        return None
    first, last = _day(value[0], year), _day(value[1], year)
    if last < first:  # a window over New Year (12-31 .. 01-03)
        last = last.replace(year=last.year + 1)
    return first, last


def holiday(hid: str, year: int) -> Holiday | None:
    """Holiday `hid` in `year`: the published row, else the every_year pattern, else None."""
    spec = table().get(hid)
    if spec is None:
        raise KeyError(f"unknown holiday '{hid}'; known: {', '.join(holiday_ids())}")
    row = {**(spec.get("every_year") or {}), **(spec.get("years", {}).get(year) or {})}
    if not row:
        return None
    return Holiday(
        id=hid,
        year=year,
        official=_range(row.get("official"), year),
        peak=_range(row.get("peak"), year),
        day=_day(row["day"], year) if row.get("day") else None,
        typical=_day(row["typical"], year) if row.get("typical") else None,
        demand=float(spec["demand"]) if spec.get("demand") is not None else None,
    )


def next_holiday(hid: str, today: date) -> Holiday | None:
    """The first occurrence of `hid` that has not ended by `today` (trips are planned ahead)."""
    for year in range(today.year - 1, today.year + 3):
        h = holiday(hid, year)
        if h is not None and h.window is not None and h.window[1] >= today:
            return h
    return None


def holidays_on(day: date) -> list[Holiday]:
    """The holidays whose peak window (else official days) covers `day`."""
    out = []
    for hid in holiday_ids():
        for year in (day.year - 1, day.year):
            h = holiday(hid, year)
            if h is not None and h.busy is not None and h.busy[0] <= day <= h.busy[1]:
                out.append(h)
    return out


def demand_factor(day: date) -> float:
    """How much busier than an ordinary day travel on `day` is: the largest demand of the holidays
    whose peak window covers it (1.0 on an ordinary day)."""
    return max([h.demand for h in holidays_on(day) if h.demand] + [1.0])


def holiday_names(code: str) -> dict[str, str]:
    """Holiday names of language `code` -> holiday ids (from <code>/dates.yaml `holidays`)."""
    return {str(k): str(v) for k, v in (resources(code).get("dates", "holidays") or {}).items()}
