"""Travel intent handlers: flights, hotels, weather, restaurants (trips and itineraries: trip.py)."""

from __future__ import annotations

import re
from datetime import timedelta

from usersim.adapters.reference.kb import STAY_AREA
from usersim.adapters.reference.lexicon import LANDMARK_CITY
from usersim.adapters.reference.planner import Call, Ctx, Done, Handler, error_note
from usersim.adapters.reference.render import (
    flight_lines,
    flight_total,
    hhmm,
    items_of,
    money,
    name_of,
    pick,
    rainy,
    record_line,
    search_lines,
    violates,
    weather_line,
)
from usersim.adapters.reference.skills import FLIGHT_SKILL, baseline_dates, flight_contract


def _iso(d) -> str:
    return d.isoformat() if d else ""


class Flights(Handler):
    name = "flights"

    def missing(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        # Skill Step 0 (blocking): an open-jaw trip needs its entry and exit cities before any search.
        open_jaw = (
            FLIGHT_SKILL in ctx.skills
            and len(s.destinations) >= 2
            and not any(
                re.search(r"进|入境|飞入", m) and re.search(r"出|离开|飞出", m) for m in ctx.user_messages[1:]
            )
        )
        need = [
            k for k, v in (("origin", s.origin), ("destination", s.destination), ("dates", s.start)) if not v
        ]
        # Asking anyway: also pin down a vague date (暑假) and the party size (else 1 person).
        if need and s.start and s.dates_fuzzy:
            need.append("dates")
        return (["entry", "exit"] if open_jaw else []) + need + (["party"] if need and not s.party else [])

    def partial_calls(self, ctx: Ctx) -> list[Call]:
        # Read the flight-selection skill before asking its Step 0 / Step 1 questions.
        return [c for stage in ctx.skill_stage(FLIGHT_SKILL, []) for c in stage]

    def args(self, ctx: Ctx) -> dict:
        s = ctx.slots
        args = {
            "origin": s.origin,
            "destination": s.destination,
            "departure_date": _iso(s.start),
            "passengers": s.party or 1,
        }
        if s.end:
            args["return_date"] = _iso(s.end)
        return args

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        s = ctx.slots
        if not ctx.has("search_flights"):
            return [[("web_search", {"query": f"{_iso(s.start)} {s.origin} 到 {s.destination} 机票"})]]
        if FLIGHT_SKILL not in ctx.skills or s.start is None:
            return [[("search_flights", self.args(ctx))]]
        searches = []
        for dep, ret in baseline_dates(s.start, s.end):
            args = {**self.args(ctx), "departure_date": _iso(dep)}
            if ret:
                args["return_date"] = _iso(ret)
            searches.append(("search_flights", args))
        return ctx.skill_stage(FLIGHT_SKILL, done) + [searches]

    def fallback_query(self, ctx: Ctx) -> str:
        return f"{ctx.slots.origin} 到 {ctx.slots.destination} 机票 {_iso(ctx.slots.start)}"

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        s = ctx.slots
        party = s.party or 1
        head = f"{s.origin} → {s.destination}，{_iso(s.start)} 出发，{party} 人"
        flights = [d for d in done if d.call.name == "search_flights" and not d.failed]
        if not flights:
            note = error_note(done, "机票查询")
            alt = [
                ln
                for d in done
                if d.call.name == "web_search" and not d.failed
                for ln in search_lines(d.data)
            ]
            tips = "建议：稍后重试、前后调整一两天，或考虑经东京/大阪等城市转机、换个出发城市。"
            body = ("\n".join(f"- {x}" for x in alt) + "\n") if alt else ""
            return f"机票（{head}）：{note}\n{body}{tips}".strip()
        if FLIGHT_SKILL in ctx.skills and len(flights) > 1:
            days = (s.end - s.start).days + 1 if s.end and s.start else s.duration
            results = [(d.call.arguments.get("departure_date", ""), d.data) for d in flights]
            text = f"航班（{head}）：\n" + flight_contract(results, _iso(s.start), party, days)
            return text + self.airline_note(
                ctx, [f for _, data in results for f in items_of(data, "outbound")]
            )
        cap = None
        if s.budget and s.budget_scope in ("per_person", "total") and "forget-constraints" not in ctx.flaws:
            per_person = s.budget if s.budget_scope == "per_person" else s.budget / party
            cap = per_person * 0.6  # leave room for hotel and food
        lines, best = flight_lines(items_of(flights[0].data, "outbound"), party, cap)
        ret_lines, _ = flight_lines(items_of(flights[0].data, "return"), party, None)
        text = f"航班（{head}）：\n" + "\n".join(f"{i}. {ln}" for i, ln in enumerate(lines, 1))
        if ret_lines:
            text += f"\n返程（{_iso(s.end)}）：\n" + "\n".join(f"- {ln}" for ln in ret_lines)
        if best:
            text += f"\n推荐 {best.get('airline', '')} {best.get('flight_no', '')}：综合行李费后总价最低。"
        elif lines:
            text += "\n以上航班都超出预算，建议错峰出行或调整预算。"
        else:
            text += "\n该日期没有查到航班，建议换日期或经转机。"
        return text

    @staticmethod
    def airline_note(ctx: Ctx, flights: list[dict]) -> str:
        """A preferred airline ("ANA 优先") is a nice-to-have: label its options, never filter on it."""
        m = re.search(
            r"(ANA|全日空|JAL|日航|国航|东航|南航|春秋|吉祥|泰航|新航)\s*(优先|最好|更好)", ctx.text
        )
        if not m:
            return ""
        alias = {
            "ANA": "全日空",
            "JAL": "日本航空",
            "日航": "日本航空",
            "国航": "中国国际航空",
            "东航": "东方航空",
            "南航": "南方航空",
            "泰航": "泰国国际航空",
            "新航": "新加坡航空",
        }
        name = alias.get(m.group(1), m.group(1))
        mine = [
            f for f in flights if name in str(f.get("airline", "")) or m.group(1) in str(f.get("airline", ""))
        ]
        listing = (
            "；".join(
                f"{f.get('flight_no')} {hhmm(f.get('departure'))} 起飞 {money(flight_total(f))}/人"
                for f in mine[:3]
            )
            or "这几天没有该航司的航班"
        )
        return f"\n{m.group(1)}（{name}）选项（您说的是优先、不是必须，所以所有航司都搜了）：{listing}。"


class Hotels(Handler):
    name = "hotels"

    def missing(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        need = [] if s.destination else ["destination"]
        return need + ([] if s.start else ["checkin"])

    def args(self, ctx: Ctx) -> dict:
        s = ctx.slots
        check_out = s.end_date() or (s.start + timedelta(days=2))
        args = {"location": s.destination, "check_in": _iso(s.start), "check_out": _iso(check_out)}
        if s.party:
            args["guests"] = s.party
        if s.room_type:
            args["room_type"] = s.room_type
        if s.hotel_name:
            args["hotel_name"] = s.hotel_name
        if s.budget and s.budget_scope == "per_night" and "forget-constraints" not in ctx.flaws:
            args["max_price"] = s.budget
        near = next((p for p in LANDMARK_CITY if p in ctx.text and p not in (s.hotel_name or "")), None)
        if near:
            args["near"] = near
        return args

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        if not ctx.has("search_hotels"):
            return [[("web_search", {"query": self.fallback_query(ctx)})]]
        return [[("search_hotels", self.args(ctx))]]

    def fallback_query(self, ctx: Ctx) -> str:
        return f"{ctx.slots.destination} {ctx.slots.hotel_name or ''} 酒店 住宿推荐".replace("  ", " ")

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        s = ctx.slots
        a = self.args(ctx)
        nights = (s.end_date() - s.start).days if s.end_date() and s.start else 2
        head = f"{s.destination}住宿（{a['check_in']} 入住，{a['check_out']} 离店，共 {nights} 晚）"
        area = STAY_AREA.get(s.destination or "", "市中心交通枢纽附近")
        found = [d for d in done if d.call.name == "search_hotels" and not d.failed]
        max_price = (
            s.budget if s.budget_scope == "per_night" and "forget-constraints" not in ctx.flaws else None
        )
        if found:
            items = items_of(found[0].data)
            good = [h for h in items if not violates(h, max_price=max_price, avoid=[])]
            lines = [f"{i}. {record_line(h)}" for i, h in enumerate(good[:3], 1)]
            if items and not good:
                return f"{head}：查到的酒店都超出每晚 {max_price:g} 元的预算，可以放宽预算或换到{area}一带。"
            body = "\n".join(lines) if lines else "暂时没有查到符合条件的酒店。"
            return f"{head}，推荐住在{area}一带，交通方便：\n{body}"
        note = error_note(done, "酒店搜索")
        alt = [
            ln for d in done if d.call.name == "web_search" and not d.failed for ln in search_lines(d.data)
        ]
        body = "\n".join(f"- {x}" for x in alt)
        fallback = (
            "我改用通用搜索找了住宿信息：\n" + body if alt else "也可以在携程、Booking 等平台按区域筛选预订。"
        )
        return f"{head}：{note}推荐区域是{area}。{fallback}".strip()


class Weather(Handler):
    name = "weather"

    def city(self, ctx: Ctx) -> str | None:
        s = ctx.slots
        if s.cities_now:
            return s.cities_now[0]
        if s.place:
            return LANDMARK_CITY[s.place]
        return s.destination

    def missing(self, ctx: Ctx) -> list[str]:
        return [] if self.city(ctx) else ["destination"]

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        day = _iso(ctx.slots.start if ctx.slots.dates_now else ctx.today)
        if not ctx.has("maps_weather"):
            return [[("web_search", {"query": f"{self.city(ctx)} {day} 天气"})]]
        return [[("maps_weather", {"city": self.city(ctx), "date": day})]]

    def recover(self, ctx: Ctx, failed: Done, done: list[Done]) -> list[Call]:
        # Self-correction: a sight passed as the city (故宫) is retried with its city (北京).
        city = failed.call.arguments.get("city")
        fixed = LANDMARK_CITY.get(str(city))
        if (
            failed.call.name == "maps_weather"
            and fixed
            and not any(d.call.arguments.get("city") == fixed for d in done)
        ):
            return [("maps_weather", {**failed.call.arguments, "city": fixed})]
        return super().recover(ctx, failed, done)

    def fallback_query(self, ctx: Ctx) -> str:
        return f"{self.city(ctx)} 天气预报"

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        ok = [d for d in done if not d.failed]
        if not ok:
            return f"天气：{error_note(done, '天气查询')}建议出门前再看一下天气预报。"
        d = ok[-1]
        if d.call.name == "maps_weather":
            line = weather_line(d.data, d.call.arguments.get("city", ""))
        else:
            line = f"{self.city(ctx)}天气（搜索结果）：" + "；".join(search_lines(d.data, 2))
        if rainy(line):
            line += "\n有雨，建议安排室内活动：博物馆、商场、美术馆或室内展览，出门带伞。"
        elif "如果" in ctx.text and "雨" in ctx.text:
            line += "\n不下雨，不需要改成室内活动，正常户外安排即可。"
        return line


class Restaurants(Handler):
    name = "restaurants"

    def city(self, ctx: Ctx) -> str | None:
        s = ctx.slots
        return s.cities_now[0] if s.cities_now else (s.destination or (LANDMARK_CITY.get(s.place or "")))

    def missing(self, ctx: Ctx) -> list[str]:
        return [] if self.city(ctx) else ["destination"]

    def args(self, ctx: Ctx) -> dict:
        query = next(
            (w for w in ("约会", "商务宴请", "亲子", "火锅", "特色", "小吃") if w in ctx.text), "美食"
        )
        args = {"city": self.city(ctx), "query": query}
        if ctx.slots.diet_excludes and "forget-constraints" not in ctx.flaws:
            args["exclude"] = list(ctx.slots.diet_excludes)
        return args

    def start_point(self, ctx: Ctx) -> str | None:
        m = re.search(r"从\s*([\u4e00-\u9fa5A-Za-z0-9]{2,12}?)\s*(?:怎么)?(?:过去|去|走)", ctx.text)
        return m.group(1) if m else None

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        if not ctx.has("search_restaurants"):
            return [[("web_search", {"query": self.fallback_query(ctx)})]]
        stages = [[("search_restaurants", self.args(ctx))]]
        found = next((d for d in done if d.call.name == "search_restaurants" and not d.failed), None)
        start = self.start_point(ctx)
        top = self.good(ctx, found)[:1] if found else []
        if start and top and ctx.has("compute_google_maps_routes"):  # "怎么从国贸地铁站过去"
            stages.append(
                [
                    (
                        "compute_google_maps_routes",
                        {"origin": start, "destination": name_of(top[0]), "travel_mode": "TRANSIT"},
                    )
                ]
            )
        return stages

    def good(self, ctx: Ctx, found: Done) -> list[dict]:
        return [r for r in items_of(found.data) if not violates(r, avoid=self.args(ctx).get("exclude", []))]

    def fallback_query(self, ctx: Ctx) -> str:
        a = self.args(ctx)
        avoid = " ".join(f"不含{w}" for w in a.get("exclude", []))
        return f"{a['city']} {a['query']} 餐厅推荐 {avoid}".strip()

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        avoid = self.args(ctx).get("exclude", [])
        caution = f"（已避开{'、'.join(avoid)}，点菜时也请提醒店家）" if avoid else ""
        found = [d for d in done if d.call.name == "search_restaurants" and not d.failed]
        if found:
            good = self.good(ctx, found[0])
            lines = [f"{i}. {record_line(r)}" for i, r in enumerate(good[:3], 1)] or [
                "暂时没有找到合适的餐厅。"
            ]
            route = next(
                (d for d in done if d.call.name == "compute_google_maps_routes" and not d.failed), None
            )
            if route and isinstance(route.data, dict):
                lines.append(
                    f"路线：从{route.call.arguments['origin']}到{route.call.arguments['destination']}，"
                    f"公共交通约 {pick(route.data, 'duration_min')} 分钟（{pick(route.data, 'distance_km')}km，Google Maps）。"
                )
            return f"{self.city(ctx)}餐厅推荐{caution}：\n" + "\n".join(lines)
        alt = [
            ln for d in done if d.call.name == "web_search" and not d.failed for ln in search_lines(d.data)
        ]
        if alt:
            return f"{self.city(ctx)}餐厅推荐{caution}：\n" + "\n".join(f"- {x}" for x in alt)
        return f"餐厅：{error_note(done, '餐厅搜索')}"
