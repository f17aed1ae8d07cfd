"""Case-defined mock tools: schemas, matching answers, argument errors, intercepts, overriding."""

from __future__ import annotations

import json

from usersim.cases.loader import load_case
from usersim.cases.schema import Case
from usersim.sandbox.base import open_sandbox

ORDER_TOOL = {
    "name": "get_order_status",
    "description": "查询订单状态",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
    "responses": [
        {
            "when": {"order_id": "A100"},
            "content": {"order_id": "A100", "status": "已发货", "carrier": "顺丰"},
        },
        {"when": {"order_id": "A404"}, "content": "Error: order not found", "is_error": True},
        {"content": {"status": "处理中"}},
    ],
}


def case(**extra) -> Case:
    data = {
        "id": "M-1",
        "dimension": "X",
        "title": "t",
        "input": {"message": "我的订单到哪了"},
        "tools": ["web_search"],
        "mock_tools": [ORDER_TOOL],
        "judging": {"scoring": {"methods": ["auto"]}},
    }
    data.update(extra)
    return Case.model_validate(data)


def test_mock_tool_is_offered_beside_the_listed_tools():
    sb = open_sandbox(case())
    names = [t["function"]["name"] for t in sb.tool_schemas()]
    assert names == ["web_search", "get_order_status"]
    assert sb.tool_schemas()[1]["function"]["parameters"]["required"] == ["order_id"]


async def test_answers_by_argument_then_default_and_errors():
    sb = open_sandbox(case())
    hit = await sb.call("get_order_status", {"order_id": " a100 "}, turn=1)
    assert json.loads(hit.result)["carrier"] == "顺丰" and not hit.is_error
    missing = await sb.call("get_order_status", {"order_id": "A404"}, turn=1)
    assert missing.is_error and missing.result == "Error: order not found"
    other = await sb.call("get_order_status", {"order_id": "Z9"}, turn=1)
    assert json.loads(other.result) == {"status": "处理中"} and other.call_number == 3
    bad = await sb.call("get_order_status", {}, turn=1)
    assert bad.is_error and "missing required argument(s) order_id" in bad.result
    extra = await sb.call("get_order_status", {"order_id": "A100", "x": 1}, turn=1)
    assert extra.is_error and "unknown argument(s) x" in extra.result


async def test_intercepts_apply_to_mock_tools():
    c = case(
        tool_intercepts=[
            {
                "intercept_tool": "get_order_status",
                "intercept_on_call_number": 1,
                "inject_tool_result": {"is_error": True, "content": "Error: HTTP 503"},
            }
        ]
    )
    sb = open_sandbox(c)
    first = await sb.call("get_order_status", {"order_id": "A100"}, turn=1)
    second = await sb.call("get_order_status", {"order_id": "A100"}, turn=1)
    assert first.intercepted and first.result == "Error: HTTP 503"
    assert not second.intercepted and "已发货" in second.result


async def test_mock_replaces_a_sandbox_tool_of_the_same_name():
    mock = {
        "name": "search_flights",
        "description": "自家航班接口",
        "responses": [{"content": {"outbound": []}}],
    }
    sb = open_sandbox(case(tools=["search_flights"], mock_tools=[mock]))
    assert [t["function"]["description"] for t in sb.tool_schemas()] == ["自家航班接口"]
    event = await sb.call("search_flights", {}, turn=1)
    assert json.loads(event.result) == {"outbound": []}


def test_loader_accepts_mock_names_in_tools_and_intercepts(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(
        "id: M-2\ndimension: X\ntitle: t\ninput: {message: hi}\ntools: [get_order_status]\n"
        "tool_intercepts: [{intercept_tool: get_order_status, inject_tool_result: {content: x}}]\n"
        f"mock_tools: [{json.dumps(ORDER_TOOL, ensure_ascii=False)}]\n"
        "judging: {scoring: {methods: [auto]}, checks: [{tool_called: {tool: get_order_status}}]}\n",
        encoding="utf-8",
    )
    assert load_case(p).mock_tools[0].name == "get_order_status"


def test_mock_answers_match_numbers_by_value_and_lists_exactly():
    tool = {
        "name": "refund",
        "description": "Refund",
        "parameters": {"type": "object", "properties": {"amount": {}, "items": {}}},
        "responses": [
            {"when": {"amount": 1628}, "content": "refunded 1628"},
            {"when": {"items": ["A", "B"]}, "content": "two items"},
            {"content": "Error: no such refund", "is_error": True},
        ],
    }
    from usersim.cases.schema import MockTool
    from usersim.sandbox.mock import answer_mock

    mock = MockTool.model_validate(tool)
    assert answer_mock(mock, {"amount": "$1,628.00"}) == ("refunded 1628", False)
    assert answer_mock(mock, {"amount": "16.28"})[1] is True
    assert answer_mock(mock, {"items": ["a", "b"]}) == ("two items", False)
    assert answer_mock(mock, {"items": ["B", "A"]})[1] is True  # order matters
