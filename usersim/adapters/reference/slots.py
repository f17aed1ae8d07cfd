"""Slot extraction: what the user has told the agent so far (later messages override earlier ones).

Slots cover the travel and shopping dialogues of the seeds: origin, destinations, dates, duration,
party size, budget, hotel name and room type, product, purpose, preferred / excluded brands,
weight limit, and diet constraints (海鲜过敏, 乳糖不耐受, 不吃辣).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from datetime import date, timedelta

from usersim.adapters.reference.dates import trip_dates
from usersim.adapters.reference.lexicon import (
    COUNTRIES,
    DIET_RULES,
    LANDMARK_CITY,
    NUM,
    PRODUCTS,
    ROOM_TYPES,
    canonical_city,
    cn_number,
    country_of,
    find_brands,
    find_cities,
    find_city_spans,
)
from usersim.lang import quantity

# Facts kept in a profile (profile injection) and in summaries: stable user facts and constraints.
PROFILE_FIELDS = (
    "origin",
    "destinations",
    "start",
    "end",
    "dates_fuzzy",
    "duration",
    "nights",
    "party",
    "budget",
    "budget_scope",
    "diet_excludes",
    "exclude_brands",
    "brands",
    "max_weight",
    "purpose",
    "product",
    "product_category",
)


@dataclass
class Slots:
    """Everything the reference agent knows about the user's request."""

    origin: str | None = None
    destinations: list[str] = field(default_factory=list)
    country: str | None = None
    start: date | None = None
    end: date | None = None
    dates_fuzzy: bool = False
    duration: int | None = None
    nights: int | None = None
    party: int | None = None
    budget: float | None = None
    budget_scope: str = "total"  # total | per_person | per_night
    hotel_name: str | None = None
    room_type: str | None = None
    product: str | None = None
    product_category: str | None = None
    purpose: str | None = None
    brands: list[str] = field(default_factory=list)
    exclude_brands: list[str] = field(default_factory=list)
    max_weight: float | None = None
    diet_excludes: list[str] = field(default_factory=list)
    place: str | None = None  # a sight named in the current message (故宫)
    cities_now: list[str] = field(default_factory=list)  # cities named in the current message
    dates_now: bool = False  # the current message gave a date

    @property
    def destination(self) -> str | None:
        return self.destinations[0] if self.destinations else None

    def end_date(self) -> date | None:
        if self.end:
            return self.end
        if self.start and (self.nights or self.duration):
            return self.start + timedelta(days=self.nights or self.duration or 0)
        return None

    def merged_over(self, base: Slots) -> Slots:
        """These slots with gaps filled from `base` (a profile or summary)."""
        out = replace(base)
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in (None, [], False, "total"):
                setattr(out, f.name, value)
        return out


def profile_of(slots: Slots) -> Slots:
    """Only the profile fields of `slots`."""
    return Slots(**{name: getattr(slots, name) for name in PROFILE_FIELDS})


_DEST_BEFORE = r"(?:去|到|飞|飞往|前往|抵达|玩|是|就|选|定|目的地\s*[:：]?)\s*$"
_DEST_AFTER = r"^\s*(?:的?(?:机票|航班|酒店|住宿|旅行|旅游|行程|攻略|之旅)|玩|旅行|旅游|吧|\d+\s*天)"


def extract(text: str, slots: Slots, today: date, *, asked: set[str] = frozenset()) -> Slots:  # type: ignore[assignment]
    """Update `slots` from one user message (or memory line); `asked` = slots our last question asked."""
    _places(text, slots, asked)
    _dates(text, slots, today)
    _party(text, slots)
    _budget(text, slots, asked)
    _shopping(text, slots, asked)
    for pattern, word in DIET_RULES:
        if re.search(pattern, text) and word not in slots.diet_excludes:
            slots.diet_excludes.append(word)
    for m in re.finditer(r"对\s*([\u4e00-\u9fa5]{1,4}?)\s*过敏", text):
        if m.group(1) not in slots.diet_excludes:
            slots.diet_excludes.append(m.group(1))
    room = next((r for r in ROOM_TYPES if r in text), None)
    slots.room_type = room or slots.room_type
    return slots


def _places(text: str, slots: Slots, asked: set[str]) -> None:
    cities = find_cities(text)
    slots.cities_now = [c for _, c in cities]
    slots.place = next((p for p in LANDMARK_CITY if p in text), None)
    # corrections first: "是京都不是东京" / "不是东京，是京都" / "东京改成京都"
    fix = re.search(r"是\s*(\S{2,4}?)\s*[，,]?\s*不是\s*(\S{2,4}?)(?:[，,。！!]|$)", text) or re.search(
        r"不是\s*(\S{2,4}?)\s*[，,]?\s*(?:而)?是\s*(\S{2,4}?)(?:[，,。！!]|$)", text
    )
    if fix and len(cities) >= 2:
        right, wrong = (
            (fix.group(1), fix.group(2)) if fix.re.pattern.startswith("是") else (fix.group(2), fix.group(1))
        )
        right_c = next((c for _, c in find_cities(right)), None)
        wrong_c = next((c for _, c in find_cities(wrong)), None)
        if right_c and wrong_c:
            slots.destinations = [right_c if d == wrong_c else d for d in slots.destinations] or [right_c]
            if slots.origin == wrong_c:
                slots.origin = right_c
            return
    dests: list[str] = []
    spans = find_city_spans(text)
    for i, (pos, end, city) in enumerate(spans):
        before, after = text[max(0, pos - 4) : pos], text[end : end + 6]
        another_follows = i + 1 < len(spans)
        if re.match(r"\s*(?:下次再去|下次去|以后再去|就不去了|不去了|先不去)", text[end : end + 8]):
            continue  # "就曼谷吧，清迈下次再去": not a destination
        if (
            re.search(r"(?:从|由|我在|人在|家在|出发地\s*[:：]?)\s*$", before)
            or re.match(r"\s*(?:出发|起飞)", after)
            or (another_follows and re.match(r"\s*(?:到|飞|→|->|—|-)", after))
        ):
            slots.origin = city
        elif re.search(_DEST_BEFORE, before) or re.match(_DEST_AFTER, after):
            dests.append(city)
        elif slots.destinations and city not in slots.destinations and "destination" not in asked:
            continue  # "清迈的大象园怎么选？" asks about a place; it does not change the chosen destination
        elif (
            "origin" in asked
            and not slots.origin
            and (
                "destination" not in asked
                or any(re.search(_DEST_BEFORE, text[max(0, p - 4) : p]) for p, _e, _c in spans[i + 1 :])
                # "上海，东京和大阪吧" for a trip to 日本: the city outside the country is where they leave from
                or (
                    slots.country is not None
                    and country_of(city) != slots.country
                    and any(country_of(c) == slots.country for _p, _e, c in spans[i + 1 :])
                )
            )
        ):
            slots.origin = city  # a bare city answering "从哪个城市出发？"
        elif city != slots.origin:
            dests.append(city)
    if dests:
        slots.destinations = list(dict.fromkeys(dests))
        slots.country = None
    country = next((c for c in COUNTRIES if c in text), None)
    if country and not dests:
        slots.country = country
        if slots.destinations and all(country_of(d) != country for d in slots.destinations):
            slots.destinations = []
    hotel = re.search(r"([\u4e00-\u9fa5A-Za-z]{2,16})(?:酒店|饭店|宾馆)", text)
    if hotel:
        name = re.split(r"一下|帮我|查|搜|找|看看|订|的|住|推荐", hotel.group(1))[-1]
        if len(name) >= 3 and canonical_city(name) is None:
            slots.hotel_name = name
            lead = find_cities(name)
            if lead and lead[0][0] == 0 and not slots.destinations:
                slots.destinations = [lead[0][1]]
    if slots.place and not slots.destinations and re.search(r"去|玩|住", text):
        slots.destinations = [LANDMARK_CITY[slots.place]]


def _dates(text: str, slots: Slots, today: date) -> None:
    span, ret = trip_dates(text, today)
    slots.dates_now = span is not None
    if span is not None:
        slots.start, slots.dates_fuzzy = span.start, span.fuzzy
        slots.end = ret
    m = re.search(rf"(?:住|待|玩)?\s*({NUM})\s*(天|晚|日游|夜)(?!后|前)", text)
    if m and not re.search(rf"{m.group(1)}\s*天(内|以内)", text):
        n = cn_number(m.group(1))
        if n and 0 < n <= 60:
            if m.group(2) in {"晚", "夜"} or m.group(0).lstrip().startswith("住"):
                slots.nights = int(n)
            else:
                slots.duration = int(n)
    elif re.search(r"一周|一个星期|一星期", text):
        slots.duration = 7


def _party(text: str, slots: Slots) -> None:
    m = re.search(rf"({NUM})\s*(?:个人|位|口人|人)(?!均|民币|气)", text)
    if m and not re.search(r"单人|每人|人均", m.group(0)):
        n = cn_number(m.group(1))
        if n and 0 < n < 20:
            slots.party = int(n)
            return
    if re.search(r"一家三口", text):
        slots.party = 3
    elif re.search(r"一家四口", text):
        slots.party = 4
    elif re.search(
        r"我和(我的)?(女朋友|男朋友|老婆|老公|对象|朋友|同事|妈妈|爸爸|爱人|闺蜜)|带(男|女)朋友|蜜月|情侣",
        text,
    ):
        slots.party = 2
    elif re.search(r"我一个人|一个人去|独自|就我自己", text):
        slots.party = 1


def _budget(text: str, slots: Slots, asked: set[str]) -> None:
    per = {q.per for q in quantity.money(text)}
    scope = "per_person" if "person" in per or re.search(r"人均|每人|单人|/人|一个人", text) else "total"
    if "night" in per or re.search(r"每晚|一晚|/晚", text):
        scope = "per_night"
    q = _budget_amount(text, asked)
    if q is not None and q.value >= 50:
        slots.budget, slots.budget_scope = q.value, scope


# Where a user states a budget: after 预算 / 不超过, or before 以内 / 左右 (the amount: lang.quantity).
_BUDGET_BEFORE = re.compile(r"预算[^\d一二两三四五六七八九十，。,]{0,8}$|(?:不能|不要|别|不)超过\s*$")
_BUDGET_AFTER = re.compile(r"\s*(?:/人|每人)?\s*(?:以内|以下|之内|左右|上下)")


def _budget_amount(text: str, asked: set[str]) -> quantity.Quantity | None:
    amounts = [q for q in quantity.quantities(text) if q.kind in ("money", "number")]
    for q in amounts:
        if _BUDGET_BEFORE.search(text[: q.start]) or _BUDGET_AFTER.match(text, q.end):
            return q
    return amounts[0] if amounts and "budget" in asked else None


def _shopping(text: str, slots: Slots, asked: set[str]) -> None:
    for pattern, query, category in PRODUCTS:
        if re.search(pattern, text, re.IGNORECASE):
            slots.product, slots.product_category = query, category or None
            break
    model = re.search(
        r"(?:决定|就|想)买\s*(?:个|台|部|副|一副|一台)?\s*([A-Za-z][A-Za-z0-9 ]{2,24}[A-Za-z0-9])", text
    )
    if model:
        slots.product = model.group(1).strip()
    weights = quantity.measures(text, "weight")
    if weights:
        slots.max_weight = weights[0].value
    brands = find_brands(text)
    for pos, brand in brands:
        clause = re.split(r"[，,。；;！!]", text[pos:])[0]
        before = re.split(r"[，,。；;！!]", text[:pos])[-1]
        if re.search(r"可以考虑|也行|也可以|可以接受", clause):
            slots.exclude_brands = [b for b in slots.exclude_brands if b != brand]
        elif re.search(r"不要|不考虑|排除|别|不买|除了|不喜欢", before + clause[:6]):
            if brand not in slots.exclude_brands:
                slots.exclude_brands.append(brand)
            slots.brands = [b for b in slots.brands if b != brand]
        elif slots.product or "brand" in asked:
            if brand not in slots.brands:
                slots.brands.append(brand)
    p = re.search(r"(?:主要|平时|用来|用于|拿来)(?:是|就|用来|用于)?\s*([^，。,！!？?]{2,20})", text)
    if p and (slots.product or "purpose" in asked):
        slots.purpose = p.group(1).strip()
    elif "purpose" in asked:
        clause = next(
            (
                c
                for c in re.split(r"[，,。？?！!；;]", text)
                if re.search(r"写代码|编程|办公|游戏|剪视频|设计|上课|论文|学习|追剧|英雄联盟", c)
            ),
            None,
        )
        if clause:
            slots.purpose = re.sub(r"^(可能|大概|主要是|嗯)", "", clause.strip())[:20]
