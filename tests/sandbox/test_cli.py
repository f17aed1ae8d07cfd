"""`usersim tools list|call` (the click group usersim.cli mounts as `tools`)."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from tests.sandbox.seed_intercepts import SEED_INTERCEPTS as SEED
from usersim.cli.tools import tools


def _run(*args: str):
    return CliRunner().invoke(tools, list(args[1:]) if args[0] == "tools" else list(args))


def test_tools_list_json_has_every_tool_schema():
    res = _run("tools", "list", "--json")
    assert res.exit_code == 0
    names = {t["function"]["name"] for t in json.loads(res.output)}
    assert {
        "search_flights",
        "search_hotels",
        "maps_weather",
        "compute_google_maps_routes",
        "load_skill",
        "beike_search_community_detail",
        "taobao_search_products",
        "zhihu_get_article_detail",
    } <= names


def test_tools_list_text_shows_optional_arguments():
    res = _run("tools", "list")
    assert (
        "search_flights(origin, destination, departure_date, return_date?, passengers?, cabin_class?)"
        in res.output
    )


def _case_file(tmp_path, intercept: str) -> str:
    path = tmp_path / "case.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "id": "CLI-EP-01",
                "dimension": "C2",
                "title": "cli",
                "input": {"message": "x"},
                "judging": {"scoring": {"methods": ["auto"]}},
                "tool_intercepts": [json.loads(intercept)],
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    return str(path)


def test_call_answers_as_the_nth_call_of_the_case(tmp_path):
    case = _case_file(tmp_path, SEED["C2-EP-01"])
    args = json.dumps(
        {"origin": "上海", "destination": "新加坡", "departure_date": "2026-05-10"}, ensure_ascii=False
    )
    first = json.loads(_run("tools", "call", "search_flights", "--args", args, "--case", case).output)
    second = json.loads(
        _run("tools", "call", "search_flights", "--args", args, "--case", case, "--call-number", "2").output
    )
    assert first["intercepted"] and first["is_error"] and "HTTP 429" in first["result"]
    assert not second["intercepted"] and not second["is_error"] and json.loads(second["result"])["outbound"]
    assert set(first) >= {"name", "arguments", "result", "is_error", "intercepted"}
    assert first["arguments"]["destination"] == "新加坡"


def test_call_without_case_uses_the_plain_tools():
    res = _run("tools", "call", "maps_weather", "--args", '{"city": "北京", "date": "2026-04-08"}')
    out = json.loads(res.output)
    assert res.exit_code == 0 and not out["is_error"] and json.loads(out["result"])["city"] == "北京"


def test_call_errors_are_actionable(tmp_path):
    bad_json = _run("tools", "call", "maps_weather", "--args", "{city: 北京}")
    assert bad_json.exit_code == 2 and "--args" in bad_json.output and "not valid JSON" in bad_json.output
    unknown_case = _run("tools", "call", "maps_weather", "--args", "{}", "--case", "C9-NOPE-99")
    assert unknown_case.exit_code == 1 and "Unknown case 'C9-NOPE-99'" in unknown_case.output
    unknown_tool = json.loads(_run("tools", "call", "maps_wether", "--args", "{}").output)
    assert unknown_tool["is_error"] and "Did you mean 'maps_weather'?" in unknown_tool["result"]


def test_call_finds_a_bundled_case_by_id():
    from usersim.cases.loader import find_case

    try:
        find_case("C2-SR-01")
    except KeyError:
        import pytest

        pytest.skip("bundled case C2-SR-01 not present in this build")
    out = json.loads(
        _run("tools", "call", "maps_weather", "--args", '{"city": "故宫"}', "--case", "C2-SR-01").output
    )
    assert out["intercepted"] and out["is_error"] and out["case"] == "C2-SR-01"
    fixed = json.loads(
        _run("tools", "call", "maps_weather", "--args", '{"city": "北京"}', "--case", "C2-SR-01").output
    )
    assert not fixed["intercepted"] and not fixed["is_error"]
