"""Turn-taking: a conversation computes alone and waits on the network with the others."""

from __future__ import annotations

import asyncio

from usersim.core.turns import Turns, away, away_unless


async def _conversation(turns: Turns, name: str, log: list[str]) -> None:
    async with turns.conversation():
        log.append(f"{name} computes")
        await asyncio.sleep(0)  # a yield mid-computation (as langgraph's tasks do): no one cuts in
        log.append(f"{name} sends")
        async with away():
            log.append(f"{name} waits")
            await asyncio.sleep(0.02)
        log.append(f"{name} reads")


async def test_conversations_compute_one_at_a_time_and_wait_together():
    turns, log = Turns(), []
    await asyncio.gather(*(_conversation(turns, n, log) for n in "AB"))
    # A computes to its request before B starts; B computes while A waits; both wait at once
    assert log[:5] == ["A computes", "A sends", "A waits", "B computes", "B sends"]
    assert log.index("B waits") < log.index("A reads")
    assert sorted(log[-2:]) == ["A reads", "B reads"]


async def test_waits_inside_one_conversation_give_the_turn_once_and_take_it_back_once():
    turns, log = Turns(), []

    async def judge(i: int) -> None:
        async with away():
            await asyncio.sleep(0.01 * i)

    async def two_judges() -> None:
        async with turns.conversation():
            await asyncio.gather(judge(1), judge(2))  # two model calls under way at once
            log.append("judged")
            assert turns._lock.locked()  # it has the turn again before it goes on

    async def other() -> None:
        await asyncio.sleep(0.005)  # while both judges wait
        async with turns.conversation():
            log.append("other computed")

    await asyncio.gather(two_judges(), other())
    assert log == ["other computed", "judged"]
    assert not turns._lock.locked()


async def test_away_outside_a_conversation_and_cooperative_components_do_nothing():
    async with away():  # no run, no turn to give
        pass

    class Own:
        cooperative = True

    class Users:
        pass

    turns = Turns()
    async with turns.conversation():
        async with away_unless(Own()):
            assert turns._lock.locked()  # keeps the turn
        async with away_unless(Users()):
            assert not turns._lock.locked()  # steps aside: it may wait on anything
        assert turns._lock.locked()


async def test_a_wait_left_behind_by_an_ended_conversation_does_not_keep_the_turn():
    # gather() raises at the first failure and leaves the other model call running: when that call
    # returns after its conversation ended, it must not take the turn (nobody would give it back)
    turns, log = Turns(), []

    async def slow_call() -> None:
        async with away():
            await asyncio.sleep(0.03)

    async def failing_call() -> None:
        async with away():
            await asyncio.sleep(0.01)
        raise RuntimeError("judge crashed")

    async def conversation() -> None:
        async with turns.conversation():
            try:
                await asyncio.gather(failing_call(), slow_call())
            except RuntimeError:
                log.append("ended early")

    await conversation()
    await asyncio.sleep(0.05)  # the slow call comes back now
    assert log == ["ended early"]
    assert not turns._lock.locked()
    await asyncio.wait_for(_conversation(turns, "next", log), 1)  # the next one gets its turn
