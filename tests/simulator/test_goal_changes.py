"""A change of mind (drop_required / add_required) changes what the rule user asks for from the
turn it is said: it never asks again for what it dropped, never loops, and stops once the goal in
force is delivered (issue 23: "What about data pack?" until it gave up)."""

from __future__ import annotations

import pytest

from tests.simulator.helpers import view
from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.rule import RuleSimulator

U = lambda text: Message(role="user", content=text)
A = lambda text: Message(role="assistant", content=text)

PERSONA = Persona.model_validate(
    {
        "id": "t",
        "name": "T",
        "language": "en",
        "identity": "a customer changing their mobile plan",
        "opening_message": "I need a data pack and a roaming add-on.",
        "goal": {
            "description": "data pack and roaming",
            "required": ["data_pack", "roaming"],
            "deliverable_keywords": {
                "data_pack": ["data pack is active"],
                "roaming": ["roaming is active"],
                "sim_swap": ["new sim is on its way"],
            },
        },
        "events": [
            {
                "at_turn": 2,
                "kind": "drop_required",
                "slot": "data_pack",
                "text": "Actually, forget the data pack.",
            },
            {
                "at_turn": 3,
                "kind": "add_required",
                "slot": "sim_swap",
                "text": "Oh, and I need a new SIM too.",
            },
        ],
    }
)


async def converse(replies: list[str], seed: int) -> list[tuple[str, str | None]]:
    t = [U(PERSONA.opening_message)]
    said = []
    for turn, reply in enumerate(replies, start=2):
        t.append(A(reply))
        r = await RuleSimulator().next_turn(
            view(PERSONA, t, turn, seed=seed, opening=PERSONA.opening_message)
        )
        said.append((r.message or "", r.stop))
        if r.stop:
            break
        t.append(U(r.message or ""))
    return said


@pytest.mark.parametrize("seed", range(6))
async def test_a_dropped_item_is_never_asked_for_again_and_the_new_goal_ends_it(seed):
    replies = [
        "Sure, what can I do?",
        "Hmm.",
        "Okay.",
        "OK, roaming is active on your line.",
        "Done, your new SIM is on its way.",
    ]
    said = await converse(replies, seed)
    after_drop = [m for m, _ in said]
    assert "forget the data pack" in after_drop[0]
    assert not any("data pack" in m.replace("forget the data pack", "") for m in after_drop), after_drop
    assert any("roaming" in m for m in after_drop[1:3])  # what is still wanted, in words
    assert said[-1][1] == "goal_met"  # roaming and the SIM delivered: the goal in force is met


LATE_GOAL = Persona.model_validate(
    {
        "id": "late",
        "name": "L",
        "language": "zh",
        "identity": "先闲聊，第三轮才说要退票的用户",
        "opening_message": "你好，我想问点事",
        "goal": {
            "description": "退掉明天的机票",
            "deliverable_keywords": {"refund": ["已退票", "退款已提交"]},
        },
        "events": [{"at_turn": 3, "kind": "add_required", "slot": "refund", "text": "帮我把明天的机票退了"}],
    }
)


@pytest.mark.parametrize("seed", range(4))
async def test_nothing_required_yet_is_never_goal_met(seed):
    """A goal with nothing required (yet) is not met by the agent's first reply: the user goes on
    until something required was delivered."""
    t = [U(LATE_GOAL.opening_message)]
    stops = []
    for turn, reply in enumerate(
        ["您好，请问有什么可以帮您？", "好的，您说。", "已退票，退款已提交。"], start=2
    ):
        t.append(A(reply))
        r = await RuleSimulator().next_turn(
            view(LATE_GOAL, t, turn, seed=seed, opening=LATE_GOAL.opening_message)
        )
        stops.append(r.stop)
        if r.stop:
            break
        t.append(U(r.message or ""))
    assert stops[:2] == [None, None], stops
    assert stops[-1] == "goal_met"
