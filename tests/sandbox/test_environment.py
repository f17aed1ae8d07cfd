"""Stateful environments: python and declarative tools over per-conversation state, rollback,
intercepts, branch restore, load errors with file:line, and the agent's system prompt."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from usersim.cases.loader import load_case
from usersim.core.events import ToolEvent
from usersim.core.yamlfile import FileProblems
from usersim.sandbox.base import open_sandbox

TOOLS_PY = '''
from typing import Annotated
from pydantic import Field


def get_account(db, account_id: str) -> dict:
    """Look up an account.

    Args:
        account_id: The account id, e.g. A-100.
    """
    for a in db["accounts"]:
        if a["account_id"] == account_id:
            return a
    raise ValueError(f"no account {account_id}")


def deposit(db, account_id: str, amount: Annotated[float, Field(gt=0, description="Amount in USD.")],
            memo: str = "") -> dict:
    """Deposit money into an account."""
    acc = get_account(db, account_id)
    acc["balance"] += amount
    if acc["balance"] > 1000:
        raise ValueError("balance limit exceeded")
    return acc
'''

STATE = "accounts:\n  - {account_id: A-100, owner: Ann, balance: 100.0, status: active}\n"


def write_case(
    tmp_path: Path, extra: str = "", state: str = "state.yaml", message: str = "deposit 5"
) -> Path:
    (tmp_path / "bank_tools.py").write_text(TOOLS_PY)
    (tmp_path / "state.yaml").write_text(STATE)
    body = textwrap.dedent(
        f"""\
        id: ENV-1
        dimension: X
        title: deposit money
        input: {{message: "{message}"}}
        environment:
          state: {state}
          tools:
            - python: bank_tools
            - lookup: {{name: get_owner, description: Owner of an account., table: accounts, fields: [owner]}}
            - update: {{name: freeze_account, description: Freeze it., table: accounts, set: {{status: frozen}}, when: {{status: active}}}}
        judging:
          scoring: {{methods: [auto]}}
          checks:
            - tool_called: {{tool: deposit, args: {{amount: 5}}}}
        """
    )
    path = tmp_path / "case.yaml"
    path.write_text(body + extra)
    return path


async def test_python_tools_get_schemas_from_their_signatures(tmp_path):
    sb = open_sandbox(load_case(write_case(tmp_path)))
    assert sb.tool_names == ["get_account", "deposit", "get_owner", "freeze_account"]  # no travel tools
    deposit = next(t["function"] for t in sb.tool_schemas() if t["function"]["name"] == "deposit")
    assert deposit["description"] == "Deposit money into an account."
    params = deposit["parameters"]
    assert params["required"] == ["account_id", "amount"]  # memo has a default
    assert params["properties"]["amount"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": "Amount in USD.",
    }
    get = next(t["function"] for t in sb.tool_schemas() if t["function"]["name"] == "get_account")
    assert get["parameters"]["properties"]["account_id"]["description"] == "The account id, e.g. A-100."


async def test_writes_persist_within_a_conversation_and_not_across(tmp_path):
    case = load_case(write_case(tmp_path))
    sb = open_sandbox(case)
    e = await sb.call("deposit", {"account_id": "A-100", "amount": 5}, turn=1)
    assert not e.is_error and json.loads(e.result)["balance"] == 105.0
    e = await sb.call("deposit", {"account_id": "A-100", "amount": 5}, turn=2)
    assert json.loads(e.result)["balance"] == 110.0
    assert open_sandbox(case).state()["accounts"][0]["balance"] == 100.0  # the next conversation starts fresh


async def test_a_refused_call_is_an_error_and_rolls_the_state_back(tmp_path):
    sb = open_sandbox(load_case(write_case(tmp_path)))
    e = await sb.call("deposit", {"account_id": "A-100", "amount": 950}, turn=1)
    assert e.is_error and e.result == "Error: balance limit exceeded"
    assert sb.state()["accounts"][0]["balance"] == 100.0  # the in-place += was undone
    e = await sb.call("deposit", {"account_id": "A-100", "amount": -1}, turn=1)
    assert e.is_error and "amount: Input should be greater than 0" in e.result
    e = await sb.call("deposit", {"account_id": "A-100", "amount": 1, "note": "x"}, turn=1)
    assert e.is_error and "note" in e.result


async def test_declarative_lookup_and_update(tmp_path):
    sb = open_sandbox(load_case(write_case(tmp_path)))
    assert (await sb.call("get_owner", {"account_id": "a-100"}, turn=1)).result == '{"owner": "Ann"}'
    missing = await sb.call("get_owner", {"account_id": "Z-1"}, turn=1)
    assert missing.is_error and missing.result == "Error: no accounts record with account_id=Z-1"
    assert not (await sb.call("freeze_account", {"account_id": "A-100"}, turn=1)).is_error
    assert sb.state()["accounts"][0]["status"] == "frozen"
    again = await sb.call("freeze_account", {"account_id": "A-100"}, turn=1)
    assert again.is_error and "has status=frozen, needs active" in again.result


async def test_intercepts_apply_to_environment_tools_and_skip_the_write(tmp_path):
    extra = textwrap.dedent(
        """\
        tool_intercepts:
          - intercept_tool: deposit
            intercept_on_call_number: 1
            inject_tool_result: {is_error: true, content: "Error: core banking offline"}
        """
    )
    sb = open_sandbox(load_case(write_case(tmp_path, extra)))
    first = await sb.call("deposit", {"account_id": "A-100", "amount": 5}, turn=1)
    assert first.intercepted and first.result == "Error: core banking offline"
    assert sb.state()["accounts"][0]["balance"] == 100.0
    await sb.call("deposit", {"account_id": "A-100", "amount": 5}, turn=1)
    assert sb.state()["accounts"][0]["balance"] == 105.0


async def test_restore_rebuilds_the_state_of_a_branch(tmp_path):
    case = load_case(write_case(tmp_path))
    trace = [
        ToolEvent(
            turn=1, call_number=1, name="deposit", arguments={"account_id": "A-100", "amount": 5}, result="{}"
        ),
        ToolEvent(
            turn=1,
            call_number=2,
            name="deposit",
            arguments={"account_id": "A-100", "amount": 7},
            result="Error: injected",
            intercepted=True,
        ),
    ]
    sb = open_sandbox(case)
    sb.restore(trace)
    assert sb.state()["accounts"][0]["balance"] == 105.0  # the intercepted call never ran
    assert sb.calls["deposit"] == 2


def test_bad_environment_reports_file_line_and_field(tmp_path):
    path = write_case(tmp_path, state="nope.yaml")
    with pytest.raises(FileProblems) as exc:
        load_case(path)
    text = str(exc.value.problems[0])
    assert text.startswith(f"{path}:6: environment.state: ")
    assert "state file not found" in text and "nope.yaml" in text

    (tmp_path / "bank_tools.py").write_text("def bad(account_id: str):\n    return 1\n")
    body = path.read_text().replace("state: nope.yaml", "state: state.yaml")
    path.write_text(body)
    (tmp_path / "bank_tools.py").write_text("def bad(account_id: str):\n    return 1\n")
    with pytest.raises(FileProblems) as exc:
        load_case(path)
    text = str(exc.value.problems[0])
    assert (
        text.startswith(f"{path}:7: environment.tools: tools[0]: python tool 'bad'")
        and "the first parameter must be `db`" in text
    )


def test_checks_may_name_environment_tools_but_not_typos(tmp_path):
    path = write_case(tmp_path)
    path.write_text(path.read_text().replace("tool: deposit,", "tool: depositt,"))
    with pytest.raises(FileProblems) as exc:
        load_case(path)
    assert "unknown tool 'depositt'. Did you mean 'deposit'?" in str(exc.value.problems[0])


def test_english_case_gets_english_prompt_with_policy(tmp_path):
    path = write_case(tmp_path, "policy: policy.md\ncontext: {memory: [prefers email]}\n")
    (tmp_path / "policy.md").write_text("Verify the customer before any write. Use {json: braces} freely.\n")
    prompt = open_sandbox(load_case(path)).system_prompt()
    assert "Today is 2026-04-07 (Tuesday)." in prompt
    assert (
        "## Policy you must follow\nVerify the customer before any write. Use {json: braces} freely."
        in prompt
    )
    assert "## What you remember about the user\n- prefers email" in prompt
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in prompt)


def test_chinese_case_keeps_chinese_headers_and_custom_template(tmp_path):
    path = write_case(tmp_path, "policy: 先核实身份\n", message="帮我存 5 块")
    prompt = open_sandbox(load_case(path)).system_prompt()
    assert "## 必须遵守的业务规则\n先核实身份" in prompt and "星期二" in prompt
    custom = write_case(
        tmp_path,
        "system_prompt: 'You are Acme Bank support. Date {current_date}.{policy}'\npolicy: Be brief.\n",
    )
    prompt = open_sandbox(load_case(custom)).system_prompt()
    assert prompt == "You are Acme Bank support. Date 2026-04-07.\n## Policy you must follow\nBe brief.\n"


def test_a_case_changes_the_suite_state_with_state_updates(tmp_path):
    path = write_case(tmp_path)
    (tmp_path / "case2.yaml").write_text(
        "include: case.yaml\nid: ENV-2\nenvironment:\n  state_updates:\n"
        "    accounts: [{account_id: A-100, balance: 5.0}, {account_id: A-200, owner: Bo, balance: 1.0}]\n"
    )
    base, changed = load_case(path), load_case(tmp_path / "case2.yaml")
    assert [a["balance"] for a in changed.environment.state["accounts"]] == [5.0, 1.0]
    assert base.environment.state["accounts"][0]["balance"] == 100.0  # the suite file is untouched
