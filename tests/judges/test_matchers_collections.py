"""Argument matchers for lists and objects (equals / unordered / subset / each), number and
currency normalisation, and the validator's advice for a bare list."""

from __future__ import annotations

import pytest

from tests.judges.helpers import bot, case, state, tool, user
from usersim.judges.checks import run_check, validate_check
from usersim.judges.checks.matchers import match
from usersim.judges.checks.normalize import find_number, numbers_in, statements

ITEMS = [{"item_id": "I-1", "qty": 2}, {"item_id": "I-2", "qty": 1}]


def m(matcher, actual) -> bool:
    validate_check({"tool_called": {"tool": "web_search", "args": {"p": matcher}}})
    return match(matcher, True, actual, None)


def test_equals_is_exact_for_lists_and_objects():
    assert m({"equals": ITEMS}, [{"item_id": "i-1", "qty": "2"}, {"item_id": "I-2", "qty": 1.0}])
    assert not m({"equals": ITEMS}, list(reversed(ITEMS)))  # order matters
    assert not m({"equals": ITEMS}, ITEMS[:1])
    assert not m({"equals": {"item_id": "I-1"}}, {"item_id": "I-1", "qty": 2})  # same keys required
    assert not m({"equals": ["a"]}, "['a']")  # never a substring of the Python repr
    assert m({"contains": "shirt"}, ITEMS + [{"item_id": "blue shirt"}])  # a value inside an object
    assert not m({"contains": "item_id"}, ITEMS)  # a key name is not a hit
    assert not m({"contains": "'qty'"}, ITEMS)


def test_unordered_subset_each():
    assert m({"unordered": list(reversed(ITEMS))}, ITEMS)
    assert not m({"unordered": [ITEMS[0], ITEMS[0]]}, ITEMS)  # a multiset: duplicates count
    assert m({"subset": ["I-2"]}, ["I-1", "I-2", "I-3"])
    assert not m({"subset": ["I-4"]}, ["I-1", "I-2"])
    assert m({"subset": {"qty": 2}}, ITEMS[0])
    assert m({"each": {"contains": "shirt"}}, ["blue shirt", "red Shirt"])
    assert not m({"each": {"contains": "shirt"}}, ["blue shirt", "hat"])
    assert not m({"each": {"gte": 1}}, [])  # an empty list proves nothing


def test_any_of_accepts_literal_objects_the_validator_suggests():
    with pytest.raises(ValueError) as exc:
        validate_check({"tool_called": {"tool": "web_search", "args": {"p": ITEMS}}})
    assert "{equals: [...]} (exactly this list)" in str(exc.value)
    # the advice works: any_of over objects (not operators) is valid and matches one of them
    assert m({"any_of": ITEMS}, {"item_id": "I-2", "qty": 1})
    assert not m({"any_of": ITEMS}, {"item_id": "I-3", "qty": 1})


def test_numbers_and_currency_normalise():
    assert m(1628, "$1,628.00") and m("1628", "USD 1628") and m("$1,628.00", 1628)
    # exact: a number never matches prose holding it ("4 bags" was a match while plain values matched
    # numbers inside text; that is {contains: ...} now)
    assert not m("4", "14 bags") and not m("4", "4 bags") and m({"contains": "4 bags"}, "4 bags")
    assert m("two", 2) and m("两个人", "2")
    assert numbers_in("refund $1,628.00 for 14 bags") == [1628.0, 14.0]
    assert find_number("1628", "The total is $1,628.00.") == "1,628.00"
    assert find_number("4", "you have 14 bags") is None


def test_statements_drop_the_agents_questions():
    text = "Your balance is $1,200.50. Shall I transfer 300 dollars? Done!"
    assert statements(text) == "Your balance is $1,200.50. Done!"


async def test_tool_called_with_list_argument():
    spec = {"tool_called": {"tool": "web_search", "args": {"items": {"unordered": ["I-2", "I-1"]}}}}
    t = [user("x"), bot("", ("web_search", {"items": ["I-1", "I-2"]})), tool("web_search"), bot("ok")]
    v = await run_check(spec, transcript=t, case=case(checks=[spec]), state=state(t))
    assert v.verdict == "pass", v.reason
    t = [user("x"), bot("", ("web_search", {"items": ["I-1"]})), tool("web_search"), bot("ok")]
    v = await run_check(spec, transcript=t, case=case(checks=[spec]), state=state(t))
    assert v.verdict == "fail" and 'expected unordered ["I-2", "I-1"]' in v.reason


async def test_keywords_compare_numbers_by_value():
    spec = {"keywords": {"all": ["1628"], "none": ["4"], "scope": "assistant"}}
    t = [user("x"), bot("Your refund of $1,628.00 covers 14 bags.")]
    v = await run_check(spec, transcript=t, case=case(checks=[spec]), state=state(t))
    assert v.verdict == "pass", v.reason  # 1628 found as $1,628.00; "4" is not in "14"
    t = [user("x"), bot("Refund: 4 bags, 1,628 dollars.")]
    v = await run_check(spec, transcript=t, case=case(checks=[spec]), state=state(t))
    assert v.verdict == "fail" and "forbidden present: 4" in v.reason


async def test_deliverables_count_in_statements_not_questions():
    from usersim.judges.completion import TaskCompletionJudge
    from usersim.personas.schema import Persona

    persona = Persona.model_validate(
        {
            "id": "p",
            "name": "Sam",
            "language": "en",
            "identity": "a customer",
            "goal": {
                "description": "get the card blocked",
                "required": ["block"],
                "deliverable_keywords": {"block": ["blocked"]},
            },
        }
    )
    asked = [user("my card is gone"), bot("Do you want the card blocked?")]
    said = [*asked, user("yes"), bot("Your card ending 4242 is now blocked.")]
    for t, want in ((asked, "fail"), (said, "pass")):
        c = case(mode="organic")
        v = (
            await TaskCompletionJudge()(
                transcript=t, case=c, state=state(t, stop="goal_met", persona=persona)
            )
        )[0]
        assert v.verdict == want, v.reason
