"""Reading tool results (JSON) and writing them as answer lines, with the user's constraints applied.

Results are read defensively (lists under common keys, several field spellings) because the
reference agent must work with any sandbox fixture that follows docs/design.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from usersim.core.embedded import split_json

LIST_KEYS = (
    "outbound",
    "results",
    "items",
    "hotels",
    "products",
    "restaurants",
    "listings",
    "articles",
    "trains",
    "data",
    "list",
    "forecast",
    "answers",
)


def load(content: str) -> Any:
    """A tool result's JSON, also when text surrounds it (an injected note): tool results are data."""
    return split_json(content)[0]


def items_of(data: Any, key: str | None = None) -> list[dict[str, Any]]:
    """The list of result records in a tool result."""
    if isinstance(data, list):
        return [x for x in data if isinstance(x, dict)]
    if not isinstance(data, dict):
        return []
    for k in ([key] if key else []) + list(LIST_KEYS):
        if k and isinstance(data.get(k), list):
            return [x for x in data[k] if isinstance(x, dict)]
    return []


def pick(item: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if item.get(k) not in (None, ""):
            return item[k]
    return None


def num(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = re.search(r"\d+(?:\.\d+)?", value.replace(",", ""))
        return float(m.group(0)) if m else None
    return None


def money(value: float | None) -> str:
    return f"¥{value:,.0f}" if value is not None else "价格待定"


def hhmm(value: Any) -> str:
    m = re.search(r"T?(\d{1,2}:\d{2})", str(value or ""))
    return m.group(1) if m else str(value or "?")


def name_of(item: dict[str, Any]) -> str:
    return str(
        pick(item, "name", "title", "hotel_name", "product_name", "community_name", "flight_no", "train_no")
        or "未命名"
    )


# --- flights -------------------------------------------------------------------------------------
def flight_total(f: dict[str, Any]) -> float | None:
    """Price per person including a checked bag for low-cost carriers (算总账不看单价)."""
    price = num(f.get("price_per_person") or f.get("price"))
    if price is None:
        return None
    if f.get("baggage_included") is False and num(f.get("baggage_fee_per_piece")):
        return price + (num(f.get("baggage_fee_per_piece")) or 0)
    return price


def flight_lines(
    flights: list[dict[str, Any]], passengers: int, cap: float | None
) -> tuple[list[str], dict | None]:
    """Answer lines for flight options (over-budget ones marked) and the recommended one."""
    lines, ok = [], []
    for f in flights:
        total = flight_total(f)
        price = num(f.get("price_per_person") or f.get("price"))
        line = (
            f"{pick(f, 'airline') or ''} {pick(f, 'flight_no') or ''}：{hhmm(f.get('departure'))} 起飞 → "
            f"{hhmm(f.get('arrival'))} 到达，{money(price)}/人"
        ).strip()
        if f.get("baggage_included") is False and num(f.get("baggage_fee_per_piece")):
            line += f"（不含托运行李，托运费 {money(num(f.get('baggage_fee_per_piece')))}/件，含行李约 {money(total)}/人）"
        elif f.get("baggage_included"):
            line += "（含托运行李）"
        if passengers > 1 and total is not None:
            line += f"，{passengers} 人合计约 {money(total * passengers)}"
        if cap is not None and total is not None and total > cap:
            line += f"——超出预算（机票每人宜控制在 {money(cap)} 以内），不推荐"
        else:
            ok.append(f)
        lines.append(line)
    best = min(ok, key=lambda f: flight_total(f) or 1e12) if ok else None
    return lines, best


# --- generic records -----------------------------------------------------------------------------
def text_blob(item: dict[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False).lower()


def violates(
    item: dict[str, Any],
    *,
    max_price: float | None = None,
    max_weight: float | None = None,
    exclude_brands: list[str] = (),
    avoid: list[str] = (),
) -> str | None:  # type: ignore[assignment]
    """Why a record breaks the user's constraints, or None."""
    from usersim.adapters.reference.lexicon import BRANDS

    price = num(pick(item, "price", "price_per_night", "avg_price", "price_per_person", "total_price"))
    if max_price is not None and price is not None and price > max_price:
        return f"价格 {money(price)} 超出预算"
    weight = num(pick(item, "weight_kg", "weight"))
    if max_weight is not None and weight is not None and weight > max_weight:
        return f"重量 {weight:g}kg 超过 {max_weight:g}kg"
    blob = text_blob(item)
    for brand in exclude_brands:
        if any(alias in blob for alias in BRANDS.get(brand, [brand.lower()])):
            return f"属于您排除的品牌（{brand}）"
    for word in avoid:
        if word == "乳糖" and lactose_risk(item):
            return "含乳糖"
        if (
            word != "乳糖"
            and word.lower() in blob
            and not re.search(rf"(不含|无|免|不){re.escape(word)}", blob)
        ):
            return f"含{word}"
    return None


def lactose_risk(item: dict[str, Any]) -> bool:
    if isinstance(item.get("lactose"), str):  # the catalog's own label: 含乳糖 / 低乳糖 / 无乳糖
        return item["lactose"] == "含乳糖"
    blob = text_blob(item)
    if item.get("lactose_free") is True or re.search(
        r"无乳糖|不含乳糖|lactose[_ -]?free|植物蛋白|分离乳清|大豆|豌豆", blob
    ):
        return False
    return item.get("lactose_free") is False or bool(re.search(r"乳清|牛奶|乳糖|whey|milk", blob))


def record_line(item: dict[str, Any]) -> str:
    """One line describing a hotel / restaurant / product / listing record."""
    parts = [name_of(item)]
    where = pick(item, "area", "district", "location", "address", "near")
    if where:
        parts.append(f"（{where}）")
    price = num(pick(item, "price_per_night", "price", "avg_price", "total_price_wan"))
    if price is not None:
        unit = "/晚" if "price_per_night" in item else ("万" if "total_price_wan" in item else "")
        parts.append(f" {price:g}万" if unit == "万" else f" {money(price)}{unit}")
    weight = num(pick(item, "weight_kg"))
    if weight is not None:
        parts.append(f"，{weight:g}kg")
    rating = pick(item, "rating", "score")
    if rating is not None:
        parts.append(f"，评分 {rating}")
    extra = pick(item, "cuisine", "room_type", "highlights", "summary", "snippet", "description", "tags")
    if isinstance(extra, list):
        extra = "、".join(str(x) for x in extra[:4])
    if extra:
        parts.append(f"，{str(extra)[:60]}")
    return "".join(parts)


def search_lines(data: Any, limit: int = 3) -> list[str]:
    """Lines for web_search / zhihu_search results."""
    lines = []
    for item in items_of(data)[:limit]:
        title = pick(item, "title", "name", "question") or "结果"
        snippet = pick(item, "snippet", "summary", "content", "excerpt") or ""
        # a result title is not our question: keep its "？" from reading as one
        lines.append(f"{title}：{str(snippet)[:80]}".rstrip("：").replace("？", "—").replace("?", "—"))
    if not lines and isinstance(data, dict):
        text = pick(data, "answer", "summary", "content", "message")
        if text:
            lines.append(str(text)[:160])
    if not lines and isinstance(data, str):
        lines.append(data[:160])
    return lines


def weather_line(data: Any, city: str) -> str:
    """'北京 2026-04-08：小雨，8~15℃' from a maps_weather result."""
    if not isinstance(data, dict):
        return f"{city}天气：{str(data)[:80]}"
    day = data
    forecast = items_of(data, "forecast")
    if forecast:
        day = forecast[0]
    cond = pick(day, "condition", "weather", "text", "summary", "description") or "天气数据"
    hi = pick(day, "temp_high", "high", "max_temp", "temp_max", "tempMax")
    lo = pick(day, "temp_low", "low", "min_temp", "temp_min", "tempMin")
    temp = (
        f"，气温 {lo}~{hi}℃"
        if hi is not None and lo is not None
        else (
            f"，气温 {pick(day, 'temperature', 'temp')}℃"
            if pick(day, "temperature", "temp") is not None
            else ""
        )
    )
    when = pick(day, "date") or pick(data, "date") or ""
    return f"{pick(data, 'city') or city} {when} 天气：{cond}{temp}".replace("  ", " ")


def rainy(text: str) -> bool:
    return bool(re.search(r"雨|雪|rain|storm", text, re.IGNORECASE))
