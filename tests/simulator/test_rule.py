"""The rule (agenda) simulator: answers, reveal policies, events, constraints, stops, determinism."""

from __future__ import annotations

from tests.simulator.helpers import converse, persona, user_texts, view
from usersim.core.messages import Message
from usersim.simulator.base import load_simulator
from usersim.simulator.phrasing import option_text, templates
from usersim.simulator.rule import RuleSimulator

U = lambda text: Message(role="user", content=text)
A = lambda text: Message(role="assistant", content=text)

FLIGHTS = "为你找到以下航班：\n1. 东航 MU523 6月15日 08:00 起飞 ¥2300/人"
HOTEL = "推荐酒店：难波日航酒店 ¥800/晚，6 月 15 日入住。"


async def test_turn_one_says_the_case_opening_verbatim():
    turn = await RuleSimulator().next_turn(view(persona(), [], 1, opening="我想暑假去日本玩"))
    assert turn.message == "我想暑假去日本玩" and turn.stop is None


async def test_answers_only_the_chinese_questions_asked():
    t = [U("帮我订去大阪的票"), A("好的！请问从哪个城市出发？一共几个人？")]
    turn = await RuleSimulator().next_turn(view(persona(), t, 2))
    assert "上海" in turn.message and "2 个人" in turn.message
    assert "6 月 15 号" not in turn.message  # when_asked: dates were not asked
    assert turn.meta["revealed"] == ["origin", "party_size"]


async def test_answers_english_questions_in_english():
    p = persona(
        language="en",
        known_info=[{"slot": "origin", "value": "Boston"}, {"slot": "dates", "value": "June 15"}],
        goal={"description": "book flights", "required": ["flights"]},
    )
    t = [U("I need flights to Osaka"), A("Sure. Where are you flying from, and what dates work for you?")]
    turn = await RuleSimulator().next_turn(view(p, t, 2))
    assert "Boston" in turn.message and "June 15" in turn.message


async def test_unknown_slot_is_not_invented_and_repeats_are_called_out():
    t = [U("帮我订去大阪的票"), A("预算大概多少？")]
    turn = await RuleSimulator().next_turn(view(persona(), t, 2))
    assert turn.meta["acts"] == ["unknown"]
    assert "预算" in turn.message and not any(ch.isdigit() for ch in turn.message)
    t += [U(turn.message), A("从哪里出发？"), U("上海"), A("你从哪里出发？")]
    turn = await RuleSimulator().next_turn(view(persona(), t, 4))
    assert "repeat" in turn.meta["acts"] and "上海" in turn.message


async def test_gradually_volunteers_one_fact_per_turn():
    p = persona(reveal_policy="gradually")
    t = [U("帮我订去大阪的票"), A("收到。")]
    turn2 = await RuleSimulator().next_turn(view(p, t, 2))
    assert turn2.meta["acts"].count("volunteer") == 1 and turn2.meta["revealed"] == ["origin"]
    t += [U(turn2.message), A("好的。")]
    turn3 = await RuleSimulator().next_turn(view(p, t, 3))
    assert turn3.meta["revealed"] == ["destination", "origin"]


async def test_all_at_once_tells_everything_at_the_first_chance():
    p = persona(reveal_policy="all_at_once")
    turn = await RuleSimulator().next_turn(view(p, [U("帮我订去大阪的票"), A("好的。")], 2))
    for value in ("上海", "大阪", "6 月 15 号", "2 个人"):
        assert value in turn.message
    no_opening = await RuleSimulator().next_turn(view(p, [], 1, opening=None))
    assert "订机票和酒店" in no_opening.message and "上海" in no_opening.message


async def test_change_fact_event_fires_at_its_turn_and_updates_answers():
    p = persona(events=[{"at_turn": 3, "kind": "change_fact", "slot": "party_size", "value": "3 个人"}])
    t = [U("帮我订去大阪的票"), A("几个人？")]
    turn2 = await RuleSimulator().next_turn(view(p, t, 2))
    assert "2 个人" in turn2.message and "change_fact" not in turn2.meta["acts"]
    t += [U(turn2.message), A("好的，我看看。")]
    turn3 = await RuleSimulator().next_turn(view(p, t, 3))
    assert turn3.meta["acts"][0] == "change_fact" and "3 个人" in turn3.message
    t += [U(turn3.message), A("一共几个人来着？")]
    turn4 = await RuleSimulator().next_turn(view(p, t, 4))
    assert "3 个人" in turn4.message and "2 个人" not in turn4.message


async def test_add_constraint_event_makes_later_proposals_rejected():
    p = persona(
        events=[
            {
                "at_turn": 3,
                "kind": "add_constraint",
                "slot": "max_price",
                "value": "2000",
                "text": "预算降到 2000 了",
            }
        ],
        stop_rules={"patience_turns": 5},
    )
    t = [U("帮我订去大阪的票"), A("好的。"), U("嗯"), A(FLIGHTS)]
    turn3 = await RuleSimulator().next_turn(view(p, t, 3))
    assert "预算降到 2000 了" in turn3.message
    assert turn3.meta["constraints"]["max_price"] == 2000.0
    # the same ¥2300 flight, proposed after the budget change, is rejected and not counted
    t2 = [U("帮我订去大阪的票"), A("好的。"), U("嗯"), A("请稍等。"), U(turn3.message), A(FLIGHTS)]
    turn4 = await RuleSimulator().next_turn(view(p, t2, 4))
    assert turn4.meta["acts"][0] == "reject" and "2000" in turn4.message
    assert "flights" not in turn4.meta["delivered"]


async def test_proposal_over_budget_is_rejected_not_accepted():
    t = [U("帮我订去大阪的票"), A("为你找到航班：\n1. 全日空 NH920 ¥4500/人")]
    turn = await RuleSimulator().next_turn(view(persona(), t, 2))
    assert turn.meta["acts"][0] == "reject" and "3000" in turn.message and "4500" in turn.message
    assert turn.meta["delivered"] == {} and turn.stop is None


async def test_confirmation_is_not_delivery_goal_met_only_after_all_items():
    agent = ["好的，已确认，我会帮你订机票和酒店。", FLIGHTS, HOTEL]
    transcript, last = await converse(RuleSimulator(), persona(), agent)
    users = user_texts(transcript)
    hotel_label = templates("zh")["item_labels"]["hotel"]
    assert last.stop == "goal_met" and len(users) == 3  # stops right after the hotel arrives
    assert "机票" in users[1]  # after mere confirmation: asks for the first pending item
    assert hotel_label in users[2]  # after flights: pushes the hotel
    assert "flights (agent reply in turn 2)" in last.reason and "hotel (agent reply in turn 3)" in last.reason


async def test_gives_up_after_patience_unhelpful_turns():
    p = persona(stop_rules={"patience_turns": 2})
    transcript, last = await converse(RuleSimulator(), p, ["嗯嗯。"] * 10)
    assert last.stop == "gave_up"
    assert len(user_texts(transcript)) == 2  # turn 2 (1 unhelpful) spoke, turn 3 (2 unhelpful) gave up
    assert "2 consecutive unhelpful agent turns (patience 2)" in last.reason
    assert "still missing: flights, hotel" in last.reason


async def test_same_seed_same_conversation_byte_for_byte():
    p = persona(reveal_policy="gradually", traits={"verbosity": "high", "typo_prone": True})
    agent = ["从哪里出发？", "几号走？", "好的。", FLIGHTS, "嗯。", HOTEL]
    runs = [await converse(load_simulator("rule"), p, agent, seed=s) for s in (5, 5, 6, 7, 8)]
    dumps = [repr([m.model_dump() for m in t]) for t, _ in runs]
    assert dumps[0] == dumps[1]
    assert len(set(dumps[1:])) > 1  # other seeds choose other wording


async def test_traits_shape_phrasing():
    t = [U("帮我订去大阪的票"), A("从哪里出发？几个人？")]
    terse = await RuleSimulator().next_turn(view(persona(traits={"verbosity": "low"}), t, 2))
    assert terse.message == "上海，2 个人"
    verbose = await RuleSimulator().next_turn(view(persona(traits={"verbosity": "high"}), t, 2))
    assert any(option_text(f) in verbose.message for f in templates("zh")["fillers"])
    typo = await RuleSimulator().next_turn(
        view(persona(traits={"verbosity": "low", "typo_prone": True}), [U("x"), A("你在哪里出发？")], 2)
    )
    assert typo.message == "上海"  # no typo-able characters: unchanged, still deterministic


async def test_a_repeated_agent_reply_counts_as_unhelpful_even_if_it_asks():
    p = persona(stop_rules={"patience_turns": 2})
    stuck = "可以稍后再试，或告诉我更具体的型号。"
    transcript, last = await converse(RuleSimulator(), p, [stuck] * 10)
    assert (
        last.stop == "gave_up" and len(user_texts(transcript)) == 3
    )  # 1st ask helpful, 2 repeats exhaust patience


async def test_particles_are_not_doubled():
    p = persona(known_info=[{"slot": "budget", "value": "8000 以内吧"}])
    for seed in range(6):
        turn = await RuleSimulator().next_turn(view(p, [U("x"), A("预算多少？")], 2, seed=seed))
        assert "吧吧" not in turn.message


async def test_go_ahead_questions_get_a_yes_or_doubt_from_indecisive_users():
    t = [U("帮我订去大阪的票"), A(FLIGHTS + "\n需要我帮你预订吗？")]
    yes = await RuleSimulator().next_turn(view(persona(), t, 2))
    assert yes.meta["acts"] == ["confirm", "continue"] and yes.meta["delivered"] == {"flights": 1}
    assert any(option_text(c) in yes.message for c in templates("zh")["confirm"])
    unsure = await RuleSimulator().next_turn(view(persona(traits={"decisiveness": "low"}), t, 2))
    assert "hesitate" in unsure.meta["acts"] and "confirm" not in unsure.meta["acts"]


async def test_indecisive_user_does_not_stop_on_the_turn_they_doubt():
    p = persona(traits={"decisiveness": "low"})
    t = [U("帮我订去大阪的票"), A(FLIGHTS + "\n" + HOTEL + "\n需要我帮你预订吗？")]
    doubt = await RuleSimulator().next_turn(view(p, t, 2))
    assert doubt.stop is None and doubt.meta["acts"] == ["hesitate"]
    t += [U(doubt.message), A("好的，都按上面的来。")]
    assert (await RuleSimulator().next_turn(view(p, t, 3))).stop == "goal_met"


async def test_indecisive_user_plays_out_scripted_change_before_accepting():
    """A hesitant user with a budget change still to come does not close the deal early; after the
    change, earlier proposals no longer count and the agent must deliver again."""
    p = persona(
        traits={"decisiveness": "low"},
        events=[
            {
                "at_turn": 4,
                "kind": "change_fact",
                "slot": "budget",
                "value": "2000 以内",
                "text": "预算改成 2000 以内吧。",
            }
        ],
    )
    both = FLIGHTS + "\n" + HOTEL
    transcript, last = await converse(RuleSimulator(), p, lambda turn, msg: both)
    users = user_texts(transcript)
    assert (
        "预算改成 2000 以内吧" in users[3]
    )  # turn 4: the event fired although everything was delivered at turn 1
    assert last.stop == "goal_met"
    assert "(agent reply in turn 4)" in last.reason  # re-delivered after the change, not the turn-1 proposal
    decisive = persona(traits={"decisiveness": "high"}, events=p.events)
    transcript, last = await converse(RuleSimulator(), decisive, lambda turn, msg: both)
    assert last.stop == "goal_met" and len(user_texts(transcript)) == 1  # a decisive user accepts at once


async def test_a_scripted_change_is_said_before_giving_up():
    p = persona(
        stop_rules={"patience_turns": 2},
        events=[
            {
                "at_turn": 3,
                "kind": "change_fact",
                "slot": "dates",
                "value": "6 月 20 号",
                "text": "日期改成 6 月 20 号吧。",
            }
        ],
    )
    transcript, last = await converse(RuleSimulator(), p, ["嗯嗯。"] * 10)
    users = user_texts(transcript)
    assert (
        len(users) == 3 and "日期改成 6 月 20 号吧" in users[2]
    )  # turn 3 states the change, though patience ran out
    assert last.stop == "gave_up"
