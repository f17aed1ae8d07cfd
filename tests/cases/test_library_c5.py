"""The C5 case files (seed 000): complete, valid, faithful to the seed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.cases.schema import Case

C5_DIR = Path(__file__).resolve().parents[2] / "usersim" / "cases" / "c5"
SEED_IDS = {
    "C5-EI-01",
    "C5-EI-02",
    "C5-EI-03",
    "C5-MI-01",
    "C5-MI-02",
    "C5-MI-03",
    "C5-LI-01",
    "C5-LI-02",
    "C5-LI-03",
    "C5-LT-01",
    "C5-LT-02",
    "C5-LT-03",
    "C5-LC-01",
    "C5-LC-02",
    "C5-LS-01",
    "C5-LS-02",
}


def _load() -> dict[str, Case]:
    out = {}
    for p in sorted(C5_DIR.glob("*.yaml")):
        case = Case.model_validate(yaml.safe_load(p.read_text(encoding="utf-8")))
        assert p.stem == case.id, f"{p.name} holds {case.id}"
        out[case.id] = case
    return out


CASES = _load()


def test_every_seed_case_is_transcribed_once():
    assert set(CASES) == SEED_IDS


@pytest.mark.parametrize("cid", sorted(SEED_IDS))
def test_common_fields(cid):
    c = CASES[cid]
    assert (c.dimension, c.category, c.source, c.mode) == (
        "C5",
        cid.split("-")[1],
        "000_2f157b7a99b49195.txt",
        "static",
    )
    # every C5 case says skill_enabled: false; LS-01/02 contradict it (their criteria need the skill)
    # and take the reading that lets the criterion be met, saying so in their notes
    if cid in ("C5-LS-01", "C5-LS-02"):
        assert c.skills.skill_enabled and "itinerary-planning" in c.skills.active_skills
        assert "skill_enabled: false" in (c.notes or "") and "种子自相矛盾" in (c.notes or "")
    else:
        assert c.skills.skill_enabled is False
    assert c.long_context is not None and c.long_context.seed_length == "32k"
    assert c.input.history[0].role == "user" and c.input.message
    assert c.judging.pass_criteria and c.judging.fail_criteria and c.judging.expected_behavior
    methods = c.judging.scoring.methods
    # auto criteria become checks; LLM-judge criteria become rubric lines
    assert bool(c.judging.checks) == ("auto" in methods)
    assert bool(c.judging.rubric) == ("llm_judge" in methods)


@pytest.mark.parametrize("cid", sorted(SEED_IDS))
def test_key_info_points_at_the_message_that_says_it(cid):
    c = CASES[cid]
    for fact in c.long_context.key_info:
        text = c.input.history[fact.turn].content
        assert any(k in text for k in fact.keywords), (fact.fact, text)


def test_current_messages_verbatim():
    assert CASES["C5-EI-01"].input.message == "帮我推荐一下当地有什么美食"
    assert CASES["C5-LT-01"].input.message == "好了，帮我查机票"
    assert CASES["C5-LI-03"].input.message == "那个东西还有白色的吗"
    assert (
        CASES["C5-LS-01"].input.message
        == "好的机票定了，那帮我排一下每天的行程吧，去清水寺、金阁寺、岚山、伏见稻荷"
    )


def test_history_verbatim_including_multiline_plans():
    h = CASES["C5-EI-01"].input.history
    assert h[2].content == "我不吃海鲜，对海鲜过敏，这个要注意一下"
    plan = next(m.content for m in h if m.content.startswith("五一京都 4 天推荐安排"))
    assert plan.splitlines()[1] == "  Day 1：抵达京都，傍晚游祇园花见小路，感受京都夜晚氛围"
    assert len(CASES["C5-LS-01"].input.history) == 19  # 9 exchanges + the user's closing request


def test_scoring_methods_and_notes():
    s = {cid: CASES[cid].judging.scoring for cid in ("C5-EI-01", "C5-EI-03", "C5-MI-03", "C5-LT-03")}
    assert (s["C5-EI-01"].methods, s["C5-EI-01"].note) == (
        ["auto", "llm_judge"],
        "自动（关键词检测）+ LLM-judge",
    )
    assert (s["C5-EI-03"].methods, s["C5-EI-03"].note) == (["auto"], "自动（检查工具参数）")
    assert (s["C5-MI-03"].methods, s["C5-MI-03"].note) == (
        ["llm_judge"],
        "LLM-judge（检查三条信息的利用情况）",
    )
    assert s["C5-LT-03"].methods == ["auto", "llm_judge"]


def test_auto_criteria_checks():
    assert {"tool_called": {"tool": "search_flights", "args": {"origin": {"place": "上海"}}}} in CASES[
        "C5-EI-03"
    ].judging.checks
    lt01 = CASES["C5-LT-01"].judging.checks[0]["tool_called"]
    assert lt01["args"]["origin"] == {"place": "深圳"}
    assert (lt01["args"]["departure_date"], lt01["args"]["return_date"]) == ("2026-06-15", "2026-06-20")
    lc01 = [c["constraint"] for c in CASES["C5-LC-01"].judging.checks]
    assert {(c["field"], c["op"]) for c in lc01} == {
        ("brand", "not_in"),
        ("price", "<="),
        ("weight_kg", "<="),
    }
    # EI-01: no seafood OR an allergy warning -> two steps, either one passes
    step = CASES["C5-EI-01"].judging.checks[0]["step_completion"]
    assert step["threshold"] == 0.5 and len(step["steps"]) == 2


def test_gradient_spec_follows_the_seed_table():
    mi01 = CASES["C5-MI-01"].long_context.lengths
    assert {k: (v.position, v.turn_range) for k, v in mi01.items()} == {
        "4k": ("middle", (4, 5)),
        "16k": ("middle", (10, 12)),
        "32k": ("middle", (14, 16)),
    }
    assert CASES["C5-LS-01"].long_context.lengths["32k"].turn_range == (27, 28)
    # scattered constraints (early + mid + late) carry their own positions
    lc01 = CASES["C5-LC-01"].long_context
    assert lc01.lengths == {} and [k.position for k in lc01.key_info] == ["beginning", "middle", "end"]
