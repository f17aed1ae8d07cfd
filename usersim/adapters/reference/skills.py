"""How the reference agent follows the seeds' two skills when the sandbox lists them.

* flight-selection: load the skill, search the requested date ±1 day keeping the trip length,
  and answer with the output contract (search range, price range, 2-3 options with trade-offs,
  a baseline, usable time, hidden costs, data source); ask entry/exit cities first for open-jaw
  trips (Step 0); ask price-vs-time when a transfer saves a lot (ReAct sync).
* itinerary-planning: load the skill, get commute times from the route matrix (TRANSIT, DRIVE
  when transit has no results), group sights into one-direction days, and show a Draft Proposal
  for the user to confirm before the final day plan.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from usersim.adapters.reference.render import flight_total, hhmm, items_of, money, num, pick

FLIGHT_SKILL = "flight-selection"
ITINERARY_SKILL = "itinerary-planning"
DRAFT_MARK = "Draft Proposal"


def parse_skills(system_text: str) -> list[str]:
    """Skill names listed in the system prompt ("- name: description" under a 技能/Skills heading)."""
    names: list[str] = []
    listing = False
    for line in system_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            listing = bool(re.search(r"技能|skill", stripped, re.IGNORECASE))
            continue
        m = re.match(r"[-*•]\s*([a-z0-9][a-z0-9_\-]*)\s*[:：]", stripped)
        if listing and m:
            names.append(m.group(1))
    return names


def baseline_dates(start: date, end: date | None) -> list[tuple[date, date | None]]:
    """The requested dates and ±1 day, each keeping the trip length (skill Step 2a)."""
    return [(start + timedelta(days=k), end + timedelta(days=k) if end else None) for k in (-1, 0, 1)]


def is_transfer(f: dict[str, Any]) -> bool:
    return "/" in str(f.get("flight_no", "")) or bool(
        re.search(r"转机|经停|中转|transfer", str(f.get("notes", "")))
    )


def flight_contract(results: list[tuple[str, Any]], requested: str, passengers: int, days: int | None) -> str:
    """The skill's output contract from the baseline searches [(departure date, result data)]."""
    options = [(day, f) for day, data in results for f in items_of(data, "outbound") if flight_total(f)]
    if not options:
        return "按技能做了 ±1 天的基线搜索，但这几天都没有查到航班，建议换日期或经转机。"
    totals = [flight_total(f) or 0 for _, f in options]
    cheapest = min(options, key=lambda o: flight_total(o[1]) or 0)
    direct = [o for o in options if not is_transfer(o[1])]
    fastest = min(
        direct or options, key=lambda o: (hhmm(o[1].get("departure")) < "07:00", flight_total(o[1]) or 0)
    )
    same_day = [o for o in options if o[0] == requested]
    baseline = min(same_day, key=lambda o: flight_total(o[1]) or 0) if same_day else cheapest
    dates = "、".join(dict.fromkeys(day for day, _ in results))
    lines = [
        f"搜索范围：{dates} 出发（指定日期 ±1 天" + (f"，保持 {days} 天行程总时长" if days else "") + "）。",
        f"价格区间：{money(min(totals))} – {money(max(totals))}/人（已含托运行李费）。",
        f"对比基线：{requested} 当天最低 {describe(baseline)}。",
        "推荐：",
    ]
    picks = [("最省钱", cheapest), ("时间最合适", fastest)]
    if baseline not in (cheapest, fastest):
        picks.append(("指定日期", baseline))
    for i, (label, (day, f)) in enumerate(picks, 1):
        diff = (flight_total(f) or 0) - (flight_total(baseline[1]) or 0)
        vs = "与基线持平" if abs(diff) < 1 else f"比基线{'贵' if diff > 0 else '省'} {money(abs(diff))}/人"
        lines.append(f"{i}. {label}：{day} {describe((day, f))}，{vs}。")
    arrival = hhmm(cheapest[1].get("arrival"))
    lines.append(f"实际可玩时间：第一天 {arrival} 抵达后还有半天左右，按 {days or '全程'} 天计算。")
    lcc = [
        f for _, f in options if f.get("baggage_included") is False and num(f.get("baggage_fee_per_piece"))
    ]
    lines.append(
        "隐藏成本："
        + (
            f"廉航 {lcc[0].get('airline', '')} 不含托运行李，每件另付 "
            f"{money(num(lcc[0].get('baggage_fee_per_piece')))}，已计入总价。"
            if lcc
            else "所选航班含托运行李，无额外行李费。"
        )
    )
    if passengers > 1:
        lines.append(
            f"{passengers} 人合计：最省钱方案约 {money((flight_total(cheapest[1]) or 0) * passengers)}。"
        )
    lines.append("数据来源：search_flights 实时航班查询。")
    transfers = [o for o in options if is_transfer(o[1])]
    if direct and transfers:
        gap = min(flight_total(o[1]) or 0 for o in direct) - min(flight_total(o[1]) or 0 for o in transfers)
        base = min(flight_total(o[1]) or 1 for o in direct)
        if gap / base >= 0.25:
            lines.append(
                f"转机比直飞便宜 {money(gap)}/人（约 {gap / base:.0%}），但要多花几个小时："
                "省这笔钱值得多飞 3-4 小时吗？您更看重价格还是时间？"
            )
    return "\n".join(lines)


def describe(option: tuple[str, dict[str, Any]]) -> str:
    _, f = option
    kind = "转机" if is_transfer(f) else "直飞"
    return (
        f"{f.get('airline', '')} {f.get('flight_no', '')}（{kind}，{hhmm(f.get('departure'))} 起飞 → "
        f"{hhmm(f.get('arrival'))} 到达，含行李约 {money(flight_total(f))}/人）"
    )


def matrix_minutes(data: Any) -> dict[tuple[str, str], tuple[float, float | None]]:
    """(origin, destination) -> (minutes, km) from a route-matrix result."""
    out: dict[tuple[str, str], tuple[float, float | None]] = {}
    for row in items_of(data, "rows"):
        for el in row.get("elements") or []:
            minutes = num(pick(el, "duration_min", "duration_minutes", "minutes"))
            if minutes is not None:
                out[(row.get("origin", ""), el.get("destination", ""))] = (
                    minutes,
                    num(el.get("distance_km")),
                )
    return out


def one_direction(sights: list[str], minutes: dict[tuple[str, str], tuple[float, float | None]]) -> list[str]:
    """Sights chained nearest-next from the first one (no back-tracking)."""
    if not minutes:
        return sights
    chain, rest = [sights[0]], sights[1:]
    while rest:
        nxt = min(rest, key=lambda s: minutes.get((chain[-1], s), (1e9, None))[0])
        chain.append(nxt)
        rest.remove(nxt)
    return chain


def split_days(chain: list[str], days: int) -> list[list[str]]:
    per = max(1, -(-len(chain) // max(days, 1)))
    groups = [chain[i : i + per] for i in range(0, len(chain), per)]
    return groups + [[] for _ in range(days - len(groups))]
