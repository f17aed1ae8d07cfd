import pytest

from tests.judges.helpers import bot, case, state, user
from usersim.judges.checks import check_registry, run_check, validate_check


def error_of(spec) -> str:
    with pytest.raises(ValueError) as exc:
        validate_check(spec)
    return str(exc.value)


def test_every_vocabulary_check_is_registered():
    assert check_registry.names() == sorted(
        [
            "tool_called",
            "final_state",
            "tool_not_called",
            "tool_order",
            "asked_clarification",
            "keywords",
            "count",
            "constraint",
            "estimates",
            "memory_recall",
            "graded",
            "step_completion",
            "skill_triggered",
            "skill_not_triggered",
            "stop_reason",
            "turns",
            "no_leak",
            "no_unauthorized_action",
        ]
    )


def test_unknown_check_suggests_the_closest_name():
    msg = error_of({"tool_caled": {"tool": "search_flights"}})
    assert msg.startswith(
        "Unknown check 'tool_caled'. Did you mean 'tool_called'? Available: asked_clarification"
    )


def test_bad_params_name_check_and_field():
    assert (
        error_of({"tool_called": {"tool": "search_flights", "arg": {}}})
        == "tool_called.arg: unknown field 'arg'. Did you mean 'args'? Fields: allow_error, args, min_calls, or_each_of, spans, tool"
    )
    assert error_of({"tool_called": {"tool": "search_flights", "min_calls": 0}}).startswith(
        "tool_called.min_calls: Input should be greater"
    )
    assert "unknown matcher 'lt'. Did you mean 'lte'?" in error_of(
        {"tool_called": {"tool": "search_flights", "args": {"p": {"lt": 3}}}}
    )
    ambiguous = error_of({"tool_called": {"tool": "search_flights", "args": {"p": ["a", "b"]}}})
    assert "{equals: [...]} (exactly this list)" in ambiguous
    assert "{any_of: [...]} (one of these values)" in ambiguous
    assert "is not a date" in error_of(
        {"tool_called": {"tool": "search_flights", "args": {"d": {"date_between": ["上海", "明天"]}}}}
    )
    assert error_of({"stop_reason": {"in": ["goal_mt"]}}).startswith(
        "stop_reason.in.0: 'goal_mt' is not allowed. Did you mean 'goal_met'?"
    )
    assert error_of({"count": {"scope": "final"}}) == "count: give min, max or exactly"
    assert "pattern is not a valid regex" in error_of({"count": {"pattern": "(", "min": 1}})
    assert error_of({"keywords": {"any": ["a"], "scope": "last"}}).startswith(
        "keywords.scope: 'last' is not allowed"
    )
    assert "op '<=' needs a number" in error_of(
        {"constraint": {"catalog": "products", "field": "price", "op": "<=", "value": "cheap"}}
    )


def test_nested_step_checks_are_validated():
    msg = error_of({"step_completion": {"steps": [{"name": "a", "check": {"keywrds": {"any": ["x"]}}}]}})
    assert "Unknown check 'keywrds'. Did you mean 'keywords'?" in msg
    assert msg.startswith("step_completion.steps.0.check:")


def test_not_a_one_key_mapping():
    assert error_of({"keywords": {"any": ["a"]}, "turns": {"max": 3}}).startswith(
        "a check is a one-key mapping"
    )


def test_valid_specs_pass():
    for spec in (
        {"tool_called": {"tool": "search_flights", "args": {"origin": "上海", "passengers": {"gte": 2}}}},
        {"skill_not_triggered": None},
        {"turns": {"max": 20}},
        {"memory_recall": {"facts": [{"expected": "张三"}]}},
    ):
        validate_check(spec)


async def test_run_check_turns_a_bad_spec_into_an_error_verdict():
    t = [user("…"), bot("…")]
    v = await run_check({"keywordz": {"any": ["a"]}}, transcript=t, case=case(), state=state(t))
    assert v.verdict == "error" and v.reason.startswith("invalid check: Unknown check 'keywordz'")


def test_yaml_numbers_in_keyword_lists_are_words():
    validate_check({"keywords": {"any": ["室内", 798]}})  # YAML reads `- 798` as an int
    validate_check({"memory_recall": {"facts": [{"expected": 100}]}})  # seed 003: 刚才计算的结果是 100


def test_misspelt_tool_names_are_rejected_when_the_sandbox_is_present(monkeypatch):
    from usersim.judges.checks import tools as tools_mod

    monkeypatch.setattr(tools_mod, "known_tools", lambda: {"search_flights", "web_search", "load_skill"})
    assert error_of({"tool_called": {"tool": "search_flight"}}) == (
        "tool_called.tool: unknown tool 'search_flight'. Did you mean 'search_flights'? "
        "Tools: load_skill, search_flights, web_search"
    )
    assert error_of({"tool_order": {"tools": ["web_search", "search_flight"]}}).startswith(
        "tool_order.tools: unknown tool"
    )
    validate_check({"tool_not_called": {"tool": ["search_flights", "web_search"]}})
    monkeypatch.setattr(tools_mod, "known_tools", set)  # no sandbox in this build: names are not checked
    validate_check({"tool_called": {"tool": "anything"}})


async def test_a_crashing_check_becomes_an_error_verdict(monkeypatch):
    from usersim.judges.checks import registry

    def boom(params, ctx):
        raise KeyError("surprise")

    monkeypatch.setattr(registry.check_registry.get("turns"), "fn", boom)
    t = [user("…"), bot("…")]
    v = await run_check({"turns": {"max": 3}}, transcript=t, case=case(), state=state(t))
    assert v.verdict == "error" and v.reason == "check crashed: KeyError: 'surprise'"
