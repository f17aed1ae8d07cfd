"""Plain argument values are exact typed equality; substring (`contains:`) and place equivalence
(`place:`) only when a case asks for them (issue #22). The table is data: tests/judges/data/matchers_exact.yaml."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml

from tests.judges.helpers import bot, case, state, tool, user
from usersim.judges.checks import run_check, validate_check
from usersim.judges.checks.matchers import match

ROWS = yaml.safe_load((Path(__file__).parent / "data" / "matchers_exact.yaml").read_text(encoding="utf-8"))
TODAY = date(2026, 4, 7)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['matcher']}~{r['actual']}" for r in ROWS])
def test_matcher_decides_as_the_table_says(row):
    validate_check({"tool_called": {"tool": "search_flights", "args": {"p": row["matcher"]}}})
    today = date.fromisoformat(row["today"]) if "today" in row else TODAY
    assert match(row["matcher"], True, row["actual"], today) is row["match"], row["why"]


def test_the_table_covers_both_decisions_for_each_kind():
    kinds = {"place": 0, "contains": 0}
    for r in ROWS:
        if isinstance(r["matcher"], dict):
            kinds[next(iter(r["matcher"]))] = kinds.get(next(iter(r["matcher"])), 0) + 1
    assert kinds["place"] >= 10 and kinds["contains"] >= 3
    assert sum(r["match"] for r in ROWS) > 20 and sum(not r["match"] for r in ROWS) > 20


def test_place_needs_a_known_place():
    with pytest.raises(ValueError) as exc:
        validate_check({"tool_called": {"tool": "search_flights", "args": {"origin": {"place": "Atlantis"}}}})
    assert "args.origin: place needs a city, airport or sight the place data knows" in str(exc.value)
    assert "'Atlantis'" in str(exc.value) and "{contains: ...}" in str(exc.value)


async def _run(spec, transcript):
    return await run_check(spec, transcript=transcript, case=case(checks=[spec]), state=state(transcript))


async def test_a_wrong_reservation_id_fails_and_names_the_argument():
    spec = {"tool_called": {"tool": "search_flights", "args": {"origin": "3RK2T9"}}}
    t = [
        user("取消 3RK2T9"),
        bot("", ("search_flights", {"origin": "3RK2T9X"})),
        tool("search_flights"),
        bot("好"),
    ]
    v = await _run(spec, t)
    assert v.verdict == "fail"
    assert "mismatched: origin=3RK2T9X (expected 3RK2T9)" in v.reason


async def test_plain_city_against_an_airport_fails_and_place_passes():
    t = [user("上海出发"), bot("", ("search_flights", {"origin": "SHA"})), tool("search_flights"), bot("好")]
    plain = await _run({"tool_called": {"tool": "search_flights", "args": {"origin": "PVG"}}}, t)
    assert plain.verdict == "fail" and "origin=SHA (expected PVG)" in plain.reason
    place = await _run(
        {"tool_called": {"tool": "search_flights", "args": {"origin": {"place": "Shanghai"}}}}, t
    )
    assert place.verdict == "pass", place.reason
