"""The trip handler: a whole trip planned in order — flights, then the itinerary, then hotels."""

from __future__ import annotations

import copy
import re
from datetime import timedelta

from usersim.adapters.reference.itinerary import Itinerary
from usersim.adapters.reference.planner import Call, Ctx, Done, Handler
from usersim.adapters.reference.render import hhmm, items_of
from usersim.adapters.reference.travel import Flights, Hotels

_FLIGHT_NO = re.compile(r"\b[A-Z0-9]{2}\d{3,4}\b")


class Trip(Handler):
    """A whole trip: flights first, then the itinerary around the flight times, then hotels."""

    name = "trip"

    def __init__(self) -> None:
        self.flights, self.hotels, self.itinerary = Flights(), Hotels(), Itinerary()

    def summarising(self, ctx: Ctx) -> bool:
        """ "整理一份完整方案" after the plan was built turn by turn: assemble it from the history."""
        return bool(re.search(r"整理|汇总|总结", ctx.text)) and any(
            _FLIGHT_NO.search(t) for t in ctx.assistant_texts
        )

    def summary(self, ctx: Ctx) -> str:
        pieces = [p.strip(" ·-|") for t in ctx.assistant_texts for p in re.split(r"\n|·|(?<=。)", t)]
        pieces = [p for p in pieces if p]
        pick_lines = lambda pattern: list(dict.fromkeys(p for p in pieces if re.search(pattern, p)))
        flights = pick_lines(r"[A-Z0-9]{2}\d{3,4}|返程|回程|往返")
        days = pick_lines(r"Day\s*\d|第.天")
        stay = pick_lines(r"住宿|酒店|/晚")
        link = (
            "衔接：Day 1 按航班抵达时间安排轻松行程，最后一天按返程航班提前去机场；住宿选在行程主要区域附近。"
        )
        return "\n\n".join(
            [
                "一、机票\n" + "\n".join(flights),
                "二、每日行程\n" + "\n".join(days),
                "三、酒店区域\n" + "\n".join(stay),
                link,
            ]
        )

    def missing(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        if self.summarising(ctx):
            return []
        need = [
            k
            for k, v in (
                ("origin", s.origin),
                ("destination", s.destination),
                ("dates", s.start),
                ("duration", s.duration or s.nights or s.end),
            )
            if not v
        ]
        # Party size and budget are asked along when asking anyway (and stay asked until answered or
        # assumed out loud); a request that is complete otherwise gets 1 person and no budget cap.
        extra = [
            k
            for k, v in (("party", s.party), ("budget", s.budget))
            if not v and (need or k in ctx.asked_before)
        ]
        return need + extra

    def partial_calls(self, ctx: Ctx) -> list[Call]:
        return self.flights.partial_calls(ctx) + self.itinerary.partial_calls(ctx)

    def partial_answer(self, ctx: Ctx, done: list[Done]) -> str:
        s = ctx.slots
        if s.destination and (s.duration or s.nights or s.end):  # the days can be planned already
            return "先把行程排出来，机票和酒店等信息齐了再查：\n" + self.itinerary.answer(ctx, [])
        return self.itinerary.partial_answer(ctx, done)

    def city_stays(self, ctx: Ctx) -> list[Ctx]:
        """One context per destination city with its own check-in/check-out (days split like the itinerary)."""
        s = ctx.slots
        if not s.end and s.start and (s.duration or s.nights):
            s.end = s.start + timedelta(days=(s.duration or 0) - 1 if s.duration else s.nights or 0)
        cities = s.destinations or [s.destination]
        nights = max(1, (s.end - s.start).days) if s.end and s.start else 2
        per = [nights // len(cities) + (1 if i < nights % len(cities) else 0) for i in range(len(cities))]
        stays, offset = [], 0
        for city, k in zip(cities, per):
            sub = copy.deepcopy(ctx)
            sub.slots.destinations = [city]
            sub.slots.start = s.start + timedelta(days=offset) if s.start else None
            sub.slots.end = sub.slots.start + timedelta(days=max(k, 1)) if sub.slots.start else None
            stays.append(sub)
            offset += k
        return stays

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        if self.summarising(ctx):
            return []
        stages = self.flights.stages(ctx, done) + self.itinerary.stages(ctx, done)
        for stay in self.city_stays(ctx):
            stages += self.hotels.stages(stay, done)
        return stages

    def recover(self, ctx: Ctx, failed: Done, done: list[Done]) -> list[Call]:
        owner = {"search_hotels": self.hotels, "compute_google_maps_route_matrix": self.itinerary}
        return owner.get(failed.call.name, self.flights).recover(ctx, failed, done)

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        if self.summarising(ctx):
            return self.summary(ctx)
        f_done = [d for d in done if d.call.name == "search_flights" or "机票" in str(d.call.arguments)]
        m_done = [d for d in done if d.call.name == "compute_google_maps_route_matrix"]
        h_done = [d for d in done if d not in f_done and d not in m_done]
        flights = self.flights.answer(ctx, f_done)
        arrival = None
        ok = [d for d in f_done if d.call.name == "search_flights" and not d.failed]
        if ok:
            outs = items_of(ok[0].data, "outbound")
            if outs:
                arrival = hhmm(outs[0].get("arrival"))
        hotels = []
        for stay in self.city_stays(ctx):
            city = stay.slots.destination
            mine = [
                d for d in h_done if d.call.arguments.get("location") == city or city in str(d.call.arguments)
            ]
            hotels.append(self.hotels.answer(stay, mine))
        parts = [
            "一、机票\n" + flights,
            "二、" + self.itinerary.answer(ctx, m_done, arrival=arrival),
            "三、酒店\n" + "\n".join(hotels),
        ]
        s = ctx.slots
        if s.budget:
            scope = "人均" if s.budget_scope == "per_person" else "总"
            parts.append(f"预算：按您{scope}预算 {s.budget:g} 元安排，机票和酒店都选了预算内的选项。")
        return "\n\n".join(parts)
