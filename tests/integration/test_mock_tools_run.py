"""A user's own case with its own mock tool, run through the CLI against a user agent."""

from __future__ import annotations

from tests.integration.test_cli_run import records, usersim

CASE = """\
id: SHOP-01
dimension: CUSTOM
title: 查询订单
input: {message: 我的订单 A100 到哪了？}
tools: []
mock_tools:
  - name: get_order_status
    description: 查询订单状态
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
    responses:
      - {when: {order_id: A100}, content: {order_id: A100, status: 已发货}}
      - {content: {status: 未找到}}
judging:
  scoring: {methods: [auto]}
  checks:
    - tool_called: {tool: get_order_status, args: {order_id: A100}}
    - keywords: {all: [已发货]}
"""


def test_case_defined_tool_runs_end_to_end(tmp_path):
    path = tmp_path / "SHOP-01.yaml"
    path.write_text(CASE, encoding="utf-8")
    usersim("validate", str(path))
    out = tmp_path / "run"
    usersim(
        "run",
        str(path),
        "--agent",
        "python:tests.integration.toy_agents:order_agent",
        "--out",
        str(out),
        "--no-progress",
    )
    (rec,) = records(out)
    assert rec["status"] == "passed", rec["verdicts"]
    assert rec["tool_trace"][0]["name"] == "get_order_status" and "已发货" in rec["tool_trace"][0]["result"]
    res = usersim("tools", "call", "get_order_status", "--args", '{"order_id": "B2"}', "--case", str(path))
    assert "未找到" in res.stdout
