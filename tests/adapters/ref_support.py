"""Fake tool schemas and results for reference-agent tests (the shapes of docs/design.md)."""

from __future__ import annotations

from typing import Any

from tests.adapters.harness import FakeTools, drive, tool_schema
from usersim.adapters.base import load_agent
from usersim.core.messages import Message

ALL_TOOLS = [
    "web_search",
    "search_flights",
    "search_hotels",
    "maps_weather",
    "search_restaurants",
    "taobao_search_products",
    "search_trains",
    "zhihu_search",
    "zhihu_get_article_detail",
    "beike_search_resale_housing",
    "beike_search_community_detail",
]


def schemas(names: list[str] = ALL_TOOLS) -> list[dict[str, Any]]:
    return [tool_schema(n, {}, []) for n in names]


def hotels(args: dict[str, Any]) -> dict[str, Any]:
    city = args.get("location")
    return {
        "hotels": [
            {"name": f"{city}站前酒店", "area": f"{city}站", "price_per_night": 680, "rating": 4.5},
            {"name": f"{city}中心酒店", "area": "市中心", "price_per_night": 920, "rating": 4.2},
        ]
    }


LAPTOPS = [
    {"name": "ThinkPad X1 Carbon", "brand": "联想", "price": 9999, "weight_kg": 1.12},
    {"name": "联想小新 Pro 14", "brand": "联想", "price": 5499, "weight_kg": 1.45},
    {"name": "华为 MateBook 14", "brand": "华为", "price": 5999, "weight_kg": 1.31},
    {"name": "MacBook Air M3", "brand": "苹果", "price": 7999, "weight_kg": 1.24},
    {"name": "ROG 幻16", "brand": "华硕", "price": 7499, "weight_kg": 2.1},
]
PROTEIN = [
    {"name": "经典浓缩乳清蛋白粉", "brand": "A", "price": 199},
    {"name": "分离乳清蛋白粉（无乳糖）", "brand": "B", "price": 299, "lactose_free": True},
    {"name": "豌豆植物蛋白粉", "brand": "C", "price": 159},
]


def products(args: dict[str, Any]) -> dict[str, Any]:
    """A catalog search that honours only the query (so the agent's own filtering is what is tested)."""
    items = PROTEIN if "蛋白" in args.get("query", "") else LAPTOPS
    return {"products": items}


def restaurants(args: dict[str, Any]) -> dict[str, Any]:
    items = [
        {"name": "海鲜大咖", "cuisine": "海鲜"},
        {"name": "胡同小馆", "cuisine": "京菜"},
        {"name": "麻辣香锅王", "cuisine": "川菜 麻辣"},
        {"name": "清汤面馆", "cuisine": "面食"},
    ]
    return {"restaurants": items}


def weather(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "city": args["city"],
        "date": args.get("date"),
        "condition": "小雨",
        "temp_low": 8,
        "temp_high": 15,
    }


def fake_tools(**errors: str) -> FakeTools:
    return FakeTools(
        {
            "search_hotels": hotels,
            "taobao_search_products": products,
            "search_restaurants": restaurants,
            "maps_weather": weather,
            "web_search": {"results": [{"title": "搜索结果", "snippet": "相关信息"}]},
        },
        errors,
    )


def system(date: str = "2026-04-07", memory: list[str] | None = None) -> Message:
    text = f"当前日期：{date}"
    if memory:
        text += "\n\n用户记忆：\n" + "\n".join(f"- {m}" for m in memory)
    return Message(role="system", content=text)


def convo(*turns: str | tuple[str, str]) -> list[Message]:
    """History from ('user text', 'assistant text') pairs and a final user message."""
    out: list[Message] = []
    for t in turns:
        if isinstance(t, tuple):
            out += [Message(role="user", content=t[0]), Message(role="assistant", content=t[1])]
        else:
            out.append(Message(role="user", content=t))
    return out


async def answer(
    spec: str,
    *turns: str | tuple[str, str],
    tools: FakeTools | None = None,
    names: list[str] = ALL_TOOLS,
    memory: list[str] | None = None,
) -> tuple[list[Message], FakeTools]:
    """Run one live agent turn after a replayed history; returns (new messages, tools)."""
    tools = tools or fake_tools()
    history = [system(memory=memory)] + convo(*turns)
    new = await drive(load_agent(spec), history, tools, schemas=schemas(names))
    return new, tools
