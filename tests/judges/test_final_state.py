"""final_state: the domain state rebuilt from the tool trace, compared with expected records;
strict mode catches stray writes; intercepted calls never ran; rescoring (no trace) agrees."""

from __future__ import annotations

from typing import Any

import pytest

from tests.judges.helpers import bot, state, tool, user
from usersim.cases.schema import Case
from usersim.judges.checks import run_check, validate_check

ENV = {
    "state": {
        "accounts": [
            {"account_id": "A-1", "balance": 500.0, "status": "active"},
            {"account_id": "A-2", "balance": 20.0, "status": "active"},
        ],
        "cards": [{"card_id": "C-1", "account_id": "A-1", "status": "active"}],
    },
    "tools": [
        {"update": {"name": "set_status", "description": "d", "table": "accounts", "fields": ["status"]}},
        {
            "update": {
                "name": "block_card",
                "description": "d",
                "table": "cards",
                "set": {"status": "blocked"},
            }
        },
        {"python": "tests.judges.bank_tools_fixture"},
    ],
}


def bank_case(check: dict[str, Any]) -> Case:
    return Case.model_validate(
        {
            "id": "FS-1",
            "dimension": "X",
            "title": "t",
            "input": {"message": "block my card"},
            "environment": ENV,
            "judging": {"scoring": {"methods": ["auto"]}, "checks": [check]},
        }
    )


async def judge(
    check: dict[str, Any], *calls: tuple[str, dict], use_trace: bool = True, failed: int | None = None
):
    t = [user("help")]
    for name, args in calls:
        t += [bot("", (name, args)), tool(name)]
    t.append(bot("Done."))
    st = state(t, use_trace=use_trace)
    if failed is not None:  # the run recorded this call as an error result
        st.tool_trace[failed].is_error = True
    return await run_check(check, transcript=t, case=bank_case(check), state=st)


BLOCKED = {"final_state": {"expect": {"cards": [{"card_id": "C-1", "status": "blocked"}]}}}


async def test_expected_write_passes_and_names_what_matched():
    v = await judge(BLOCKED, ("block_card", {"card_id": "C-1"}))
    assert v.verdict == "pass", v.reason
    assert v.reason.startswith("final state matches: cards C-1 status=blocked; nothing else changed")
    assert v.details == {
        "changed_records": {"cards": [{"card_id": "C-1", "account_id": "A-1", "status": "blocked"}]}
    }


async def test_missing_write_and_stray_write_fail_with_the_difference():
    v = await judge(BLOCKED)
    assert v.verdict == "fail" and "cards C-1: status=active (expected blocked)" in v.reason
    v = await judge(
        BLOCKED, ("block_card", {"card_id": "C-1"}), ("set_status", {"account_id": "A-2", "status": "closed"})
    )
    assert v.verdict == "fail"
    assert "unexpected change to accounts A-2: status: active -> closed" in v.reason
    loose = {"final_state": {**BLOCKED["final_state"], "strict": False}}
    v = await judge(
        loose, ("block_card", {"card_id": "C-1"}), ("set_status", {"account_id": "A-2", "status": "closed"})
    )
    assert v.verdict == "pass"


async def test_python_tool_writes_numbers_normalised_and_new_records():
    check = {
        "final_state": {
            "expect": {
                "accounts": [
                    {"account_id": "A-1", "balance": "$400.00"},
                    {"account_id": "A-2", "balance": 120},
                ],
                "transfers": [{"id": "T-1", "amount": {"gte": 100}}],
            }
        }
    }
    v = await judge(check, ("transfer", {"from_account": "A-1", "to_account": "A-2", "amount": 100}))
    assert v.verdict == "pass", v.reason
    # an overdraft is refused by the tool: nothing changes, the check says what is missing
    v = await judge(
        check, ("transfer", {"from_account": "A-2", "to_account": "A-1", "amount": 100}), failed=0
    )
    assert v.verdict == "fail"
    assert (
        "accounts A-1: balance=500.0 (expected $400.00)" in v.reason and "transfers T-1 missing" in v.reason
    )


async def test_intercepted_calls_did_not_run():
    t = [user("help"), bot("", ("block_card", {"card_id": "C-1"})), tool("block_card"), bot("Done.")]
    st = state(t)
    st.tool_trace[0].intercepted = True
    v = await run_check(BLOCKED, transcript=t, case=bank_case(BLOCKED), state=st)
    assert v.verdict == "fail" and "status=active" in v.reason


async def test_rescoring_without_a_trace_rebuilds_from_the_transcript():
    v = await judge(BLOCKED, ("block_card", {"card_id": "C-1"}), use_trace=False)
    assert v.verdict == "pass", v.reason


async def test_absent_and_a_case_without_environment():
    check = {"final_state": {"absent": {"cards": ["C-1"]}, "strict": False}}
    assert (await judge(check)).verdict == "fail"
    case = Case.model_validate(
        {
            "id": "N",
            "dimension": "X",
            "title": "t",
            "input": {"message": "m"},
            "judging": {"scoring": {"methods": ["auto"]}},
        }
    )
    t = [user("m"), bot("ok")]
    v = await run_check(BLOCKED, transcript=t, case=case, state=state(t))
    assert v.verdict == "fail" and "no `environment`" in v.reason


def test_validation_of_matchers_inside_expect():
    # {gt: 1} is no operator: a literal object value, accepted as written
    validate_check({"final_state": {"expect": {"accounts": [{"account_id": "A-1", "limits": {"gt": 1}}]}}})
    with pytest.raises(ValueError, match=r"unknown matcher 'lt'. Did you mean 'lte'\?"):
        validate_check(
            {"final_state": {"expect": {"accounts": [{"account_id": "A-1", "tags": {"each": {"lt": 1}}}]}}}
        )


async def test_a_replay_that_disagrees_with_the_run_is_inconclusive():
    v = await judge(BLOCKED, ("block_card", {"card_id": "C-1"}), failed=0)
    assert v.verdict == "inconclusive"
    assert "call 1 (block_card) failed in the run but not on replay" in v.reason
