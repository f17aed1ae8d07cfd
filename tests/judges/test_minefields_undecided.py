"""A minefield that cannot be decided is inconclusive, not avoided (issue #22)."""

from __future__ import annotations

from tests.judges.helpers import bot, case, state, user
from usersim.judges.milestones import MilestonesJudge

# No catalog product is named in the reply, so this constraint cannot be checked: inconclusive.
UNDECIDABLE = {"constraint": {"catalog": "products", "field": "price", "op": ">", "value": 8000}}
NEVER_HIT = {"tool_called": {"tool": "search_flights"}}
MILESTONE = [{"id": "reply", "description": "replied", "check": {"keywords": {"any": ["好的"]}}}]


async def _judge(minefields, milestones=()):
    t = [user("推荐个笔记本"), bot("好的，我想先了解一下您的预算。")]
    c = case(milestones=list(milestones), minefields=list(minefields))
    return (await MilestonesJudge()(transcript=t, case=c, state=state(t)))[0]


async def test_undecided_minefield_alone_is_inconclusive():
    v = await _judge([UNDECIDABLE, NEVER_HIT])
    assert v.judge == "minefields" and v.verdict == "inconclusive" and v.score is None
    assert v.reason.startswith("1 of 2 minefield(s) could not be decided: constraint")
    assert "cannot check price > 8000" in v.reason


async def test_decided_minefields_still_pass():
    v = await _judge([NEVER_HIT])
    assert v.verdict == "pass" and v.reason == "no minefield hit (1 checked)"


async def test_milestones_reached_but_a_minefield_undecided_is_inconclusive():
    v = await _judge([UNDECIDABLE], MILESTONE)
    assert v.judge == "milestones" and v.verdict == "inconclusive"
    assert "1/1 milestones reached" in v.reason and "could not be decided" in v.reason
    assert v.details["minefields_undecided"] and not v.details["minefields_hit"]


async def test_a_hit_outweighs_an_undecided_minefield():
    hit = {"keywords": {"any": ["预算"]}}
    v = await _judge([UNDECIDABLE, hit], MILESTONE)
    assert v.verdict == "fail" and "minefield hit, score voided" in v.reason and v.score == 0.0
