"""`usersim tools list --case FILE [--json]`: the tools (parameters: name, type, required,
description) and state tables (key, columns, rows) an agent gets in one case, checked against what
the case files themselves say and what `open_sandbox` gives the agent."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.support.cli import REPO, usersim
from usersim.cases.loader import load_case
from usersim.sandbox.base import open_sandbox

BANK_CASE = "examples/bank/cases/bank-01-lost-card.yaml"


def _json(*args: str) -> dict:
    return json.loads(usersim("tools", "list", "--case", *args, "--json").stdout)


def test_json_gives_exactly_the_schemas_the_agent_gets():
    view = _json(BANK_CASE)
    sandbox = open_sandbox(load_case(REPO / BANK_CASE))
    assert view["case"] == "BANK-01" and view["file"].endswith("bank-01-lost-card.yaml")
    assert [t["schema"] for t in view["tools"]] == sandbox.tool_schemas()
    params = {t["name"]: {p["name"]: p for p in t["parameters"]} for t in view["tools"]}
    assert params["transfer_funds"]["amount"] == {
        "name": "amount",
        "type": "number",
        "required": True,
        "description": "Amount in USD.",
    }
    assert params["order_replacement_card"]["shipping"]["type"] == "one of standard|express"
    assert params["block_card"]["card_id"]["required"]  # a declarative update tool of the suite


def test_json_state_tables_match_the_state_file_and_the_suite_keys():
    view = _json(BANK_CASE)
    state = yaml.safe_load((REPO / "examples/bank/state.yaml").read_text(encoding="utf-8"))
    suite = yaml.safe_load((REPO / "examples/bank/cases/_suite.yaml").read_text(encoding="utf-8"))
    tables = {t["table"]: t for t in view["state"]}
    assert set(tables) == set(state) | set(suite["environment"]["keys"])
    for name, rows in state.items():
        assert tables[name]["rows"] == len(rows)
        assert tables[name]["columns"][0] == suite["environment"]["keys"][name]
        assert set(tables[name]["columns"]) >= {c for r in rows for c in r}
    assert tables["cards"]["key"] == "card_id"


def test_text_shows_each_parameter_and_each_table():
    out = usersim("tools", "list", "--case", BANK_CASE).stdout
    assert out.startswith(
        "case BANK-01 (examples/bank/cases/bank-01-lost-card.yaml): 9 tools, 6 state tables"
    )
    assert "transfer_funds(from_account_id, to_account_id, amount)\n" in out
    assert "      amount: number, required - Amount in USD.\n" in out
    assert "      shipping: one of standard|express, required\n" in out
    assert "  cards: 5 rows, key card_id; columns card_id, customer_id, account_id, last4, status" in out


def test_a_case_without_an_environment_lists_its_tools_and_no_tables():
    out = usersim("tools", "list", "--case", "C2-EP-01").stdout
    assert ": 14 tools, 0 state tables" in out.splitlines()[0]
    assert (
        "search_flights(origin, destination, departure_date, return_date?, passengers?, cabin_class?)" in out
    )
    assert "      passengers: integer, optional" in out
    assert "state tables" not in out.split("\n", 1)[1]
    assert _json("C2-EP-01")["state"] == []


def test_mock_tools_show_their_declared_parameters(tmp_path: Path):
    case = tmp_path / "mock.yaml"
    case.write_text(
        """
id: MOCK-1
dimension: sandbox
title: a mock tool
input: {message: hi}
tools: []
mock_tools:
  - name: get_order
    description: Look up an order.
    parameters:
      type: object
      properties:
        order_id: {type: string, description: The order number.}
        verbose: {type: boolean}
      required: [order_id]
    responses:
      - {content: "{}"}
judging: {scoring: {methods: [auto]}}
""",
        encoding="utf-8",
    )
    out = usersim("tools", "list", "--case", str(case)).stdout
    assert "get_order(order_id, verbose?)" in out
    assert "      order_id: string, required - The order number." in out
    assert "      verbose: boolean, optional" in out


def test_errors_name_the_file(tmp_path: Path):
    res = usersim("tools", "list", "--case", "no/such/case.yaml", check=False)
    assert res.returncode == 1 and "case file no/such/case.yaml does not exist" in res.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: X\ntitle: [unclosed\n", encoding="utf-8")
    res = usersim("tools", "list", "--case", str(bad), "--json", check=False)
    assert res.returncode == 1 and f"{bad}:" in res.stderr and res.stdout == ""
    res = usersim("tools", "list", "--case", "BANK-1", check=False)
    assert res.returncode == 1 and "Unknown case 'BANK-1'" in res.stderr
