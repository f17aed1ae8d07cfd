"""The persona library: every file valid and lint-clean, the seeds' organic personas present,
and every persona reachable (goal_met) by an agent that delivers, and patient only so long."""

from __future__ import annotations

import pytest

from tests.simulator.helpers import converse
from usersim.personas.loader import LIBRARY_DIR, library_ids, load_persona
from usersim.simulator.persona_lint import lint_paths
from usersim.simulator.rule import RuleSimulator
from usersim.simulator.signals import item_keywords

IDS = library_ids()


def test_library_is_lint_clean_and_broad():
    assert [str(p) for p in lint_paths([LIBRARY_DIR])] == []
    assert len(IDS) >= 12
    tags = {t for pid in IDS for t in load_persona(pid).tags}
    assert {
        "travel",
        "shopping",
        "housing",
        "food",
        "health",
        "english",
        "impatient",
        "terse",
        "verbose",
        "contradicting",
        "typo_prone",
        "non_native",
    } <= tags


def test_seed_organic_personas_match_the_cases():
    trip = load_persona("japan-first-trip")
    assert trip.opening_message == "我想暑假去日本玩" and trip.goal.required == [
        "flights",
        "itinerary",
        "hotel",
    ]
    assert trip.traits.clarity == "low" and trip.reveal_policy == "gradually"
    laptop = load_persona("vague-laptop-buyer")
    assert laptop.opening_message == "想买个笔记本电脑" and laptop.goal.required == ["model", "channel"]
    assert {e.kind for e in laptop.events} >= {"hesitate", "change_fact"}  # hesitates and changes budget


@pytest.mark.parametrize("pid", IDS)
async def test_every_persona_is_satisfiable_and_gives_up_on_a_useless_agent(pid):
    p = load_persona(pid)
    delivery = "\n".join(
        f"{i + 1}. {item_keywords(p.goal, item)[0]}：方案 A{i + 1} 已为你选好。"
        for i, item in enumerate(p.goal.required)
    )
    # deliver at turn 2 and again later (events such as hesitate may postpone the stop)
    transcript, last = await converse(
        RuleSimulator(),
        p,
        lambda turn, _msg: delivery,
        opening=p.opening_message,
        max_turns=p.max_turns or 10,
    )
    assert last.stop == "goal_met", (pid, [m.content for m in transcript])
    _, idle = await converse(RuleSimulator(), p, ["嗯嗯。"] * 30, opening=p.opening_message, max_turns=30)
    assert idle.stop == "gave_up" and "still missing" in idle.reason
