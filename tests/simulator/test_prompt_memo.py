"""The LLM simulator's system prompt is built once per persona and what it depends on: turn after
turn it is the very text a fresh build gives, and it changes exactly when an input does (an event
falls due, a shard of the goal is revealed, another goal or opening, another persona)."""

from __future__ import annotations

from tests.simulator.helpers import persona, view
from usersim.core.messages import Message
from usersim.simulator import llm_prompt
from usersim.simulator.llm_prompt import system_prompt

DATES_CHANGE = {"kind": "change_fact", "slot": "dates", "value": "6 月 20 号", "at_turn": 3}


def _fresh(v, **kw) -> str:
    """The prompt built without the memo."""
    llm_prompt._PROMPTS.table().clear()
    return system_prompt(v, **kw)


def _talk(turns: int) -> list[Message]:
    out: list[Message] = []
    for i in range(turns):
        out += [Message(role="user", content=f"第 {i} 句"), Message(role="assistant", content="好的")]
    return out


def test_the_same_prompt_every_turn_without_events_is_what_a_fresh_build_gives():
    p = persona()
    built = [system_prompt(view(p, _talk(t - 1), t)) for t in range(1, 6)]
    assert len(set(built)) == 1
    assert built[0] == _fresh(view(p, _talk(3), 4))


def test_an_event_falling_due_changes_the_prompt_from_its_turn_on():
    p = persona(events=[DATES_CHANGE])
    prompts = {t: system_prompt(view(p, _talk(t - 1), t)) for t in range(1, 6)}
    assert "6 月 15 号" in prompts[2] and "6 月 20 号" not in prompts[2]
    assert "6 月 20 号" in prompts[3] and "6 月 20 号" in prompts[5]
    for t, text in prompts.items():  # each one as a build without the memo gives it
        assert text == _fresh(view(p, _talk(t - 1), t))


def test_sharded_goals_the_goal_the_opening_and_the_persona_each_give_their_own_prompt():
    p = persona()
    v1, v2 = view(p, _talk(0), 1), view(p, _talk(1), 2)
    assert system_prompt(v1, sharded=True) != system_prompt(v2, sharded=True)  # a new shard on turn 2
    assert system_prompt(v2, sharded=True) == _fresh(v2, sharded=True)
    other_opening = view(p, _talk(1), 2, opening="帮我订去大阪的票，每晚不超过500元")  # a stated need
    assert system_prompt(other_opening) != system_prompt(v2)
    assert system_prompt(other_opening) == _fresh(other_opening)
    goal = v2.model_copy(update={"goal": "只订酒店"})
    assert "只订酒店" in system_prompt(goal) and "只订酒店" not in system_prompt(v2)
    q = persona(identity="北京的大学生")  # equal in all but identity, another object
    assert "北京的大学生" in system_prompt(view(q, _talk(1), 2))
    assert "北京的大学生" not in system_prompt(v2)
