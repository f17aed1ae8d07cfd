"""web_search keeps to the place a query names."""

from __future__ import annotations

import json

from usersim.cases.schema import Case
from usersim.sandbox.base import open_sandbox

CASE = Case.model_validate(
    {
        "id": "S-1",
        "dimension": "X",
        "title": "t",
        "input": {"message": "hi"},
        "judging": {"scoring": {"methods": ["auto"]}},
    }
)


async def _titles(query: str) -> list[str]:
    event = await open_sandbox(CASE).call("web_search", {"query": query}, turn=1)
    return [r["title"] + r["snippet"] for r in json.loads(event.result)["results"]]


async def test_a_country_query_finds_only_documents_about_that_country():
    results = await _titles("日本 旅行攻略")
    assert results and not any("厦门" in r for r in results)
    assert all(
        any(w in r for w in ("日本", "东京", "京都", "大阪", "冲绳", "沖绳", "富士山", "河口湖"))
        for r in results
    )


async def test_a_city_query_keeps_that_city_and_a_placeless_query_is_unfiltered():
    kyoto = await _titles("京都 住宿")
    assert "京都" in kyoto[0] and not any(w in r for r in kyoto for w in ("厦门", "北京", "三亚", "成都"))
    assert any("乳糖" in r for r in await _titles("蛋白粉 推荐"))
