"""The itinerary handler: day-by-day plans from the built-in guide, or from the sights the user named
with commute times checked on the map (route matrix), as the itinerary-planning skill requires."""

from __future__ import annotations

import re
from datetime import timedelta

from usersim.adapters.reference.kb import itinerary_days
from usersim.adapters.reference.lexicon import find_sights, sight_city
from usersim.adapters.reference.planner import Call, Ctx, Done, Handler
from usersim.adapters.reference.render import search_lines
from usersim.adapters.reference.skills import (
    DRAFT_MARK,
    ITINERARY_SKILL,
    matrix_minutes,
    one_direction,
    split_days,
)
from usersim.lang.acts import accepts

MATRIX = "compute_google_maps_route_matrix"
_NO_MAP = re.compile(r"不用查地图|不要查地图|不用地图|别查地图|不用查了")


def _iso(d) -> str:
    return d.isoformat() if d else ""


class Itinerary(Handler):
    name = "itinerary"

    def sights(self, ctx: Ctx) -> list[str]:
        # sights in the message, else in the picture the user sent, else in their previous message
        return (
            find_sights(ctx.text)
            or find_sights(" ".join(ctx.images))
            or (find_sights(ctx.user_messages[-2]) if len(ctx.user_messages) > 1 else [])
        )

    def missing(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        if not s.destination and self.sights(ctx):
            s.destinations = [sight_city(self.sights(ctx)[0]) or ""]
        days_in_picture = [int(n) for n in re.findall(r"Day\s*(\d+)", " ".join(ctx.images))]
        if not (s.duration or s.nights) and days_in_picture:
            s.duration = max(days_in_picture)  # a screenshot of a 3-day plan
        return [
            k
            for k, v in (("destination", s.destination), ("duration", s.duration or s.nights or s.end))
            if not v
        ]

    def uses_map(self, ctx: Ctx) -> bool:
        return len(self.sights(ctx)) >= 2 and ctx.has(MATRIX) and not _NO_MAP.search(ctx.text)

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        stages = ctx.skill_stage(ITINERARY_SKILL, done) if len(self.sights(ctx)) >= 3 else []
        if self.uses_map(ctx):
            sights = self.sights(ctx)
            stages.append([(MATRIX, {"origins": sights, "destinations": sights, "travel_mode": "TRANSIT"})])
        return stages

    def recover(self, ctx: Ctx, failed: Done, done: list[Done]) -> list[Call]:
        # Skill note: TRANSIT is empty in some regions -> DRIVE, labelled "驾车时长，公交可能更长".
        if failed.call.name == MATRIX and failed.call.arguments.get("travel_mode") == "TRANSIT":
            if not any(d.call.arguments.get("travel_mode") == "DRIVE" for d in done):
                return [(MATRIX, {**failed.call.arguments, "travel_mode": "DRIVE"})]
        return []

    def partial_calls(self, ctx: Ctx) -> list[Call]:
        place = ctx.slots.destination or ctx.slots.country
        return [("web_search", {"query": f"{place} 旅行攻略"})] if place and ctx.has("web_search") else []

    def partial_answer(self, ctx: Ctx, done: list[Done]) -> str:
        lines = [ln for d in done if not d.failed for ln in search_lines(d.data)]
        place = ctx.slots.destination or ctx.slots.country
        return f"{place}旅行概览：\n" + "\n".join(f"- {x}" for x in lines) if lines else ""

    def n_days(self, ctx: Ctx) -> int:
        s = ctx.slots
        if s.duration:
            return s.duration
        if s.start and s.end and 0 < (s.end - s.start).days < 15:
            return (s.end - s.start).days + 1
        return s.nights + 1 if s.nights else 3

    def guide_days(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        n = self.n_days(ctx)
        cities = s.destinations or [s.destination or ""]
        per = [n // len(cities) + (1 if i < n % len(cities) else 0) for i in range(len(cities))]
        out: list[str] = []
        for city, k in zip(cities, per):
            out += [f"{city}·{t}" if len(cities) > 1 else t for t in itinerary_days(city, k)]
        return out

    def map_days(self, ctx: Ctx, done: list[Done]) -> tuple[list[str], str]:
        ok = [d for d in done if d.call.name == MATRIX and not d.failed]
        minutes = matrix_minutes(ok[-1].data) if ok else {}
        mode = ok[-1].call.arguments.get("travel_mode", "TRANSIT") if ok else ""
        label = {"TRANSIT": "公共交通", "DRIVE": "驾车", "WALK": "步行"}.get(mode, "")
        groups = split_days(one_direction(self.sights(ctx), minutes), self.n_days(ctx))
        days = []
        for group in groups:
            if not group:
                days.append("自由活动 / 购物 / 机动安排")
                continue
            legs = [group[0]]
            for a, b in zip(group, group[1:]):
                m, km = minutes.get((a, b), (None, None))
                legs.append(
                    f"（{label} {m:g} 分钟{f' / {km:g}km' if km else ''}，Google Maps）{b}"
                    if m is not None
                    else b
                )
            days.append(" → ".join(legs))
        if not ok:
            note = "通勤时间：未验证地图数据，仅按地理位置粗略分组，建议出发前用地图核实。"
        else:
            total = [sum(minutes.get((a, b), (0, None))[0] for a, b in zip(g, g[1:])) for g in groups]
            note = (
                "每天通勤合计："
                + "，".join(f"Day {i} 约 {t:g} 分钟" for i, t in enumerate(total, 1) if t)
                + "（数据来源：Google Maps 路线矩阵"
            )
            note += "；驾车时长，公交可能更长）" if mode == "DRIVE" else "）"
        return days, note

    def flight_times(self, ctx: Ctx) -> tuple[str | None, str | None]:
        """Arrival and return-departure times stated earlier in the conversation."""
        text = "\n".join(ctx.assistant_texts + ctx.user_messages)
        arrive = re.search(r"(?:抵达|到达)[^\d\n]{0,8}(\d{1,2}:\d{2})|(\d{1,2}:\d{2})\s*(?:抵达|到达)", text)
        back = re.search(r"(?:返程|回程)[^\n]{0,30}?(\d{1,2}:\d{2})", text)
        return (next(g for g in arrive.groups() if g) if arrive else None), (back.group(1) if back else None)

    def answer(self, ctx: Ctx, done: list[Done], arrival: str | None = None) -> str:
        s = ctx.slots
        mapped = bool(self.sights(ctx)) and len(self.sights(ctx)) >= 2
        days, note = self.map_days(ctx, done) if mapped else (self.guide_days(ctx), "")
        found_arrival, leave = self.flight_times(ctx)
        arrival = arrival or found_arrival
        lines = []
        for i, theme in enumerate(days, 1):
            date_label = f"（{_iso(s.start + timedelta(days=i - 1))}）" if s.start else ""
            if i == 1 and arrival:
                theme = f"{arrival} 抵达后先入住，下午/傍晚开始：{theme}"
            if i == len(days) and len(days) > 1:
                theme += f"，{leave} 的返程航班，下午前往机场" if leave else "，下午前往机场返程"
            lines.append(f"Day {i}{date_label}：{theme}")
        food = (
            f"\n餐饮上会避开{'、'.join(s.diet_excludes)}。"
            if s.diet_excludes and "forget-constraints" not in ctx.flaws
            else ""
        )
        body = "\n".join(lines) + (f"\n{note}" if note else "") + food
        if _NO_MAP.search(ctx.text):
            return (
                "通勤时间需要用地图（Google Maps）核实，凭经验估算容易有偏差；您不想查的话，下面是未验证地图数据的粗略安排：\n"
                + body
                + "\n要不要我再用地图核实一下通勤时间？"
            )
        drafting = (
            ITINERARY_SKILL in ctx.skills
            and mapped
            and not (any(DRAFT_MARK in t for t in ctx.assistant_texts[-1:]) and accepts(ctx.text))
        )
        if drafting:
            return (
                f"{DRAFT_MARK} #1（按地理位置分组，单向不走回头路）：\n{body}\n"
                "这样的分组可以吗？确认后我再排每天的具体时间（Draft Proposal #2）。"
            )
        return "行程安排（按区域聚类，不走回头路）：\n" + body
