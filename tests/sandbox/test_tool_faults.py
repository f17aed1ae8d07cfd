"""A python tool's deliberate refusal reaches the agent as an error result; any other exception is
the test author's bug and is raised as CaseError (usersim.cases.toolcode), never shown to the agent.
Either way the state is rolled back."""

from __future__ import annotations

import pytest

from usersim.cases.environment import Environment, EnvState
from usersim.core.errors import CaseError

TOOLS = "tests/data/tool_faults/faulty_tools.py"
REFUSALS = {  # how -> the error result the agent gets
    "tool_error": "Error: the warehouse is closed",
    "named_tool_error": "Error: ToolError: the warehouse is on strike",
    "value_error": "Error: no item I-7",
    "permission": "Error: only managers may do that",
    "own_class": "Error: OutOfStock: I-7 is out of stock",
    "unknown_id": "Error: 'I-7'",
}
BUGS = {  # how -> the CaseError message after "<file>:act: "
    "column_typo": "KeyError: 'prize'",
    "type_error": "TypeError: unsupported operand type(s) for +: 'float' and 'str'",
    "attribute": "AttributeError: 'dict' object has no attribute 'name'",
    "index": "IndexError: list index out of range",
    "zero": "ZeroDivisionError: division by zero",
    "assert": "AssertionError: ids start with X",
}


@pytest.fixture
def env() -> EnvState:
    environment = Environment.model_validate(
        {"state": {"items": [{"item_id": "I-1", "price": 2.5}]}, "tools": [{"python": TOOLS}]}
    )
    return EnvState(environment)


@pytest.mark.parametrize("how", sorted(REFUSALS))
def test_a_refusal_is_an_error_result_for_the_agent(env, how):
    assert env.call("act", {"how": how, "item_id": "I-7"}) == (REFUSALS[how], True)
    assert env.tables == {"items": [{"item_id": "I-1", "price": 2.5}]}


@pytest.mark.parametrize("how", sorted(BUGS))
def test_a_bug_is_a_case_error_with_the_tools_traceback(env, how):
    with pytest.raises(CaseError) as info:
        env.call("act", {"how": how, "item_id": "I-7"})
    err = info.value
    assert err.where == f"{TOOLS}:act"
    assert str(err) == f"{TOOLS}:act: {BUGS[how]}"
    first = err.traceback.splitlines()[1]
    assert first.strip().startswith('File "') and "faulty_tools.py" in first, err.traceback
    assert env.tables == {"items": [{"item_id": "I-1", "price": 2.5}]}


def test_a_call_that_succeeds_is_unchanged(env):
    result, is_error = env.call("act", {"how": "nothing"})
    assert (result, is_error) == ('{"ok": true}', False)
    assert env.tables["items"][0]["touched"] is True
