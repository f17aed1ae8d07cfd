"""web_search, zhihu_search and zhihu_get_article_detail over fixed page/article fixtures."""

from __future__ import annotations

import re
from typing import Any

from pydantic import AliasChoices, Field

from usersim.core.registry import did_you_mean
from usersim.lang import dates
from usersim.sandbox.catalog import fixture
from usersim.sandbox.tools import Args, ToolContext, ToolError, register


def _terms(text: str) -> set[str]:
    """Search terms: ASCII words, and CJK runs as single chars' bigrams plus the run itself."""
    terms: set[str] = set()
    for run in re.findall(r"[A-Za-z0-9][A-Za-z0-9.+]*|[\u3040-\u9fff]+", text.lower()):
        if run.isascii():
            terms.add(run)
        else:
            terms.add(run)
            terms.update(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def relevance(query: str, document: str) -> float:
    """Share of the query's terms found in the document (0..1)."""
    q = _terms(query)
    if not q:
        return 0.0
    doc = document.lower()
    return sum(1 for t in q if t in doc) / len(q)


class WebSearchArgs(Args):
    query: str = Field(description="Search query.")
    num_results: int = Field(default=5, ge=1, le=10, description="How many results to return.")


class ZhihuSearchArgs(Args):
    query: str = Field(
        description="Keywords, e.g. 马拉松训练新手计划.", validation_alias=AliasChoices("query", "keyword")
    )


class ZhihuDetailArgs(Args):
    article_id: str = Field(description="Article id from zhihu_search, e.g. zh_1001.")


def _documents() -> list[dict[str, Any]]:
    docs = [dict(p, source="web") for p in fixture("web")["pages"]]
    for a in fixture("zhihu")["articles"]:
        docs.append(
            {
                "title": a["title"],
                "url": f"https://zhuanlan.zhihu.com/p/{a['article_id']}",
                "snippet": a["summary"],
                "keywords": a["tags"],
                "source": "知乎",
            }
        )
    return docs


def _place_groups(query: str) -> list[list[str]]:
    """For each city or country the query names: the words that mean it (a city also by its country)."""
    from usersim.sandbox.places import place_data

    q = query.casefold()
    groups: list[list[str]] = []
    countries: dict[str, list[str]] = {}
    for c in place_data()["cities"]:
        names = [c["name"], *c.get("aliases", [])]
        countries.setdefault(c.get("country", ""), []).extend(names)
        if any(len(n) >= 2 and n.casefold() in q for n in names):
            groups.append(names)
    for country, cities in countries.items():
        if country and country in query:
            groups.append([country, *cities])
    return groups


def _about_places(groups: list[list[str]], text: str) -> bool:
    low = text.casefold()
    return all(any(n.casefold() in low for n in group) for group in groups)


def _rank(query: str, docs: list[dict[str, Any]], text_of) -> list[tuple[float, dict[str, Any]]]:
    groups = _place_groups(query)
    if groups:  # a query about a place only finds documents about that place
        docs = [d for d in docs if _about_places(groups, text_of(d))]
    scored = [(relevance(query, text_of(d)), d) for d in docs]
    best = max((s for s, _ in scored), default=0.0)
    # Keep what is close to the best match; a query that matches nothing returns nothing.
    return [(s, d) for s, d in sorted(scored, key=lambda t: -t[0]) if s > 0 and s >= best * 0.4]


def _weather_card(query: str, ctx: ToolContext) -> dict[str, Any] | None:
    """Like a search engine's weather box: '明天北京天气' answers from the same model as maps_weather."""
    if not re.search(r"天气|气温|下雨|weather", query, flags=re.IGNORECASE):
        return None
    from usersim.sandbox.places import place_data
    from usersim.sandbox.tools.weather import daily_weather

    q = query.casefold()
    hits = [
        (q.find(alias.casefold()), c["name"])
        for c in place_data()["cities"]
        for alias in [c["name"], *c.get("aliases", [])]
        if len(alias) >= 2 and alias.casefold() in q
    ]
    climate = fixture("climate")["climate"]
    cities = [name for _, name in sorted(hits) if name in climate]
    if not cities:
        return None
    said = next((d for d in dates.find_dates(query, ctx.today) if d.kind == "relative"), None)
    day = said.first if said else ctx.today  # "明天北京天气": the day the query names
    w = daily_weather(cities[0], day)
    snippet = (
        f"{day.isoformat()} {cities[0]}：{w['condition']}，{w['temp_low_c']}~{w['temp_high_c']}°C，"
        f"降水概率 {w['precipitation_probability']}%，{w['wind']}"
    )
    return {
        "title": f"{cities[0]}天气预报",
        "url": "https://weather.example.cn/",
        "snippet": snippet,
        "source": "weather",
    }


@register(
    "web_search",
    "General web search. Returns result titles, URLs and snippets.",
    WebSearchArgs,
)
def web_search(args: WebSearchArgs, ctx: ToolContext) -> dict[str, Any]:
    ranked = _rank(args.query, _documents(), lambda d: " ".join([d["title"], d["snippet"], *d["keywords"]]))
    results = [
        {"title": d["title"], "url": d["url"], "snippet": d["snippet"], "source": d["source"]}
        for _, d in ranked[: args.num_results]
    ]
    card = _weather_card(args.query, ctx)
    if card is not None:
        results = [card, *results][: args.num_results]
    out: dict[str, Any] = {"query": args.query, "results": results}
    if not results:
        out["message"] = "No results found. Try different keywords."
    return out


@register(
    "zhihu_search",
    "Search Zhihu (知乎) articles and answers. Returns article_id, title, author, upvotes and summary.",
    ZhihuSearchArgs,
)
def zhihu_search(args: ZhihuSearchArgs, ctx: ToolContext) -> dict[str, Any]:
    articles = fixture("zhihu")["articles"]
    ranked = _rank(args.query, articles, lambda a: " ".join([a["title"], a["summary"], *a["tags"]]))
    results = [
        {k: a[k] for k in ("article_id", "title", "author", "upvotes", "comments", "summary")}
        for _, a in ranked
    ]
    out: dict[str, Any] = {"query": args.query, "results": results}
    if not results:
        out["message"] = "没有找到相关内容"
    return out


@register(
    "zhihu_get_article_detail",
    "Full text of one Zhihu article by article_id (from zhihu_search).",
    ZhihuDetailArgs,
)
def zhihu_get_article_detail(args: ZhihuDetailArgs, ctx: ToolContext) -> dict[str, Any]:
    articles = {a["article_id"]: a for a in fixture("zhihu")["articles"]}
    if args.article_id not in articles:
        raise ToolError(
            f"Unknown article_id '{args.article_id}'.{did_you_mean(args.article_id, set(articles))} "
            "Use an article_id returned by zhihu_search."
        )
    return articles[args.article_id]
