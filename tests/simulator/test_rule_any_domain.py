"""The rule simulator outside travel/shopping: any known_info fact answered when asked (key, aliases,
description, multilingual paraphrases), "I don't know" for unknown_info, no raw keys, reveal policies
in sentences, conditional events (agent_says / agent_calls), determinism."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from tests.simulator.helpers import converse, user_texts
from usersim.core.messages import Message, ToolCall
from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator

U = lambda text: Message(role="user", content=text)  # noqa: E731
A = lambda text, *tools: Message(  # noqa: E731
    role="assistant", content=text, tool_calls=[ToolCall(name=t) for t in tools]
)


def airline(**over) -> Persona:
    data = {
        "id": "anya",
        "name": "Anya Garcia",
        "language": "en",
        "identity": "An airline customer who wants to cancel a trip.",
        "opening_message": "Hi, I need to cancel a reservation.",
        "goal": {
            "description": "cancel reservation 3RK2T9",
            "required": ["cancellation"],
            "deliverable_keywords": {"cancellation": ["has been cancelled"]},
        },
        "known_info": [
            {"key": "user_id", "value": "anya_garcia_5901"},
            {"key": "reservation_id", "value": "3RK2T9", "aliases": ["booking code"]},
            {"key": "email", "value": "anya@example.com"},
            {"key": "membership_level", "value": "gold", "description": "frequent flyer tier"},
            {"key": "zip_code", "value": "94105"},
        ],
        "unknown_info": ["the reason for the cancellation", "travel insurance: yes, bought at booking"],
    }
    data.update(over)
    return Persona.model_validate(data)


def shopper(**over) -> Persona:
    data = {
        "id": "li",
        "name": "李华（上班族）",
        "language": "zh",
        "identity": "网购用户",
        "opening_message": "我要退货",
        "goal": {
            "description": "退货退款",
            "required": ["退款"],
            "deliverable_keywords": {"退款": ["已退款"]},
        },
        "known_info": [
            {"key": "order_id", "value": "#W2378156"},
            {"key": "email", "value": "li@example.com"},
            {"key": "member_level", "value": "金卡", "description": "会员等级"},
        ],
        "unknown_info": ["退款到账时间: 3 个工作日"],
    }
    data.update(over)
    return Persona.model_validate(data)


def at(p: Persona, transcript: list[Message], turn: int, seed: int = 0) -> SimulatorView:
    return SimulatorView(case_id="CS-1", persona=p, transcript=transcript, turn=turn, max_turns=10, seed=seed)


async def reply_to(p: Persona, agent_text: str, *tools: str) -> tuple[str, list[str]]:
    turn = await RuleSimulator().next_turn(at(p, [U("hi"), A(agent_text, *tools)], 2))
    return turn.message or "", turn.meta["acts"]


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("Could you please provide your user ID?", "anya_garcia_5901"),
        ("What is the reservation ID you want to cancel?", "3RK2T9"),
        ("Can you give me the booking code?", "3RK2T9"),  # a declared alias
        ("What's the email on the account?", "anya@example.com"),
        ("What is your membership tier?", "gold"),  # description words
        ("What's your zip code?", "94105"),
        ("And your postal code?", "94105"),  # paraphrase table
    ],
)
async def test_english_questions_about_any_fact_get_that_fact(question, value):
    message, acts = await reply_to(airline(), question)
    assert value in message and acts == ["answer"]
    assert "_" not in message.replace("anya_garcia_5901", "")  # no raw key such as user_id / zip_code


async def test_the_user_id_answer_is_a_sentence_that_names_it():
    message, _ = await reply_to(airline(), "Could you please provide your user ID?")
    assert re.search(r"my user ID is anya_garcia_5901", message, re.IGNORECASE)


@pytest.mark.parametrize(
    "question", ["What's your name?", "May I have your full name?", "Who am I speaking with?"]
)
async def test_name_questions_in_english_get_the_persona_name(question):
    message, acts = await reply_to(airline(), question)
    assert "Anya Garcia" in message and acts == ["answer"]


@pytest.mark.parametrize(
    ("question", "value"),
    [
        ("请提供您的订单号。", "#W2378156"),
        ("您的邮箱是多少？", "li@example.com"),
        ("您的会员等级是什么？", "金卡"),
        ("您怎么称呼？", "李华"),
    ],
)
async def test_chinese_questions_about_any_fact(question, value):
    message, acts = await reply_to(shopper(), question)
    assert value in message and acts == ["answer"]
    assert "order_id" not in message and "member_level" not in message
    assert "（" not in message  # the name without the persona's note


async def test_two_facts_asked_in_one_sentence_are_both_answered():
    message, acts = await reply_to(airline(), "Could you please provide your user ID and reservation ID?")
    assert "anya_garcia_5901" in message and "3RK2T9" in message and acts == ["answer", "answer"]


@pytest.mark.parametrize(
    ("persona", "question", "said"),
    [
        (airline(), "Why do you want to cancel?", "I don't know"),  # unknown_info topic
        (airline(), "Do you have travel insurance?", "I don't know"),
        (airline(), "Could you provide your phone number?", "I don't know"),  # information it lacks
        (shopper(), "您知道退款到账时间吗？", "这个我不清楚"),
        (shopper(), "请问您的手机号是多少？", "这个我不清楚"),
    ],
)
async def test_unknown_information_gets_i_dont_know_not_you_suggest(persona, question, said):
    for seed in range(6):  # every wording says it does not know
        turn = await RuleSimulator().next_turn(at(persona, [U("hi"), A(question)], 2, seed=seed))
        assert turn.meta["acts"] == ["dont_know"]
        assert ("know" in turn.message) if persona.language == "en" else ("不" in turn.message)
        assert "suggest" not in turn.message and "推荐" not in turn.message
    if said == "I don't know":
        assert "yes, bought at booking" not in turn.message  # a hidden truth is never said


@pytest.mark.parametrize("policy", ["gradually", "all_at_once", "upfront"])
async def test_volunteered_facts_are_sentences_never_raw_keys(policy):
    p = airline(reveal_policy=policy, opening_message=None, stop_rules={"patience_turns": 10})
    transcript, _ = await converse(RuleSimulator(), p, lambda turn, msg: "OK.", opening=None, max_turns=6)
    text = " ".join(user_texts(transcript))
    assert "？" not in text  # English punctuation in English
    for key in ("user_id", "reservation_id", "membership_level", "zip_code", "email:"):
        assert key not in text
    assert "my user ID is anya_garcia_5901" in text
    assert "my zip code is 94105" in text


async def test_upfront_is_accepted_as_all_at_once():
    assert airline(reveal_policy="upfront").reveal_policy == "all_at_once"


async def test_chinese_volunteered_fact_names_it_by_its_description():
    p = shopper(reveal_policy="gradually", stop_rules={"patience_turns": 10})
    turns = []
    transcript: list[Message] = [U("我要退货"), A("好的。")]
    for turn in (2, 3, 4):
        t = await RuleSimulator().next_turn(at(p, transcript, turn))
        turns.append(t.message or "")
        transcript += [U(t.message or ""), A("好的。")]
    text = "".join(turns)
    assert "我的订单号是#W2378156" in text and "我的会员等级是金卡" in text and "member_level" not in text


async def test_same_seed_same_words_other_seed_may_differ():
    p = airline(reveal_policy="gradually")
    agent = [
        "Could you please provide your user ID?",
        "Thanks. What's your email?",
        "Why do you want to cancel?",
    ]
    a, _ = await converse(RuleSimulator(), p, agent, seed=3, opening=None)
    b, _ = await converse(RuleSimulator(), p, agent, seed=3, opening=None)
    assert user_texts(a) == user_texts(b)
    others = set()
    for seed in range(8):
        c, _ = await converse(RuleSimulator(), p, agent, seed=seed, opening=None)
        others.add(tuple(user_texts(c)))
    assert len(others) > 1  # wording varies by seed, decisions do not
    assert all("anya_garcia_5901" in texts[1] for texts in others)


# --- conditional events ---------------------------------------------------------------------


def with_events(*events) -> Persona:
    return airline(events=list(events))


async def test_agent_says_event_fires_once_on_the_next_turn():
    p = with_events(
        {
            "when": {"agent_says": ["travel credit"]},
            "kind": "say",
            "text": "I'd rather have a refund to my card.",
        }
    )
    t = [U("hi"), A("I can offer you a Travel Credit instead.")]
    turn2 = await RuleSimulator().next_turn(at(p, t, 2))
    assert turn2.message.startswith("I'd rather have a refund to my card.")
    assert "events.0 (say): agent said 'travel credit'" in turn2.reason
    t += [U(turn2.message), A("Again: a travel credit is possible.")]
    turn3 = await RuleSimulator().next_turn(at(p, t, 3))
    assert "refund to my card" not in turn3.message  # once only


async def test_agent_says_event_does_not_fire_without_the_phrase():
    p = with_events({"when": {"agent_says": ["travel credit"]}, "kind": "say", "text": "Refund please."})
    message, _ = await reply_to(p, "Let me look up your reservation.")
    assert "Refund please." not in message


async def test_agent_calls_event_fires_after_that_tool_call_only():
    p = with_events(
        {
            "when": {"agent_calls": "cancel_reservation"},
            "kind": "say",
            "text": "Wait, will I get the money back?",
        }
    )
    quiet, _ = await reply_to(p, "Checking.", "get_reservation_details")
    fired, _ = await reply_to(p, "Done.", "get_reservation_details", "cancel_reservation")
    assert "money back" not in quiet and fired.startswith("Wait, will I get the money back?")


async def test_agent_calls_event_sees_tool_calls_of_a_silent_assistant_message():
    p = with_events({"when": {"agent_calls": ["cancel_reservation"]}, "kind": "say", "text": "Hold on!"})
    t = [U("hi"), A("", "cancel_reservation"), A("It has been processed.")]
    turn = await RuleSimulator().next_turn(at(p, t, 2))
    assert turn.message.startswith("Hold on!")


async def test_conditional_event_changes_a_requirement():
    p = with_events(
        {
            "when": {"agent_says": ["has been cancelled"]},
            "kind": "add_required",
            "slot": "refund",
            "text": "And please confirm the refund.",
        }
    )
    p = p.model_copy(
        update={
            "goal": p.goal.model_copy(
                update={
                    "deliverable_keywords": {
                        "cancellation": ["has been cancelled"],
                        "refund": ["refund of $"],
                    }
                }
            )
        }
    )
    agent = ["Your reservation 3RK2T9 has been cancelled.", "A refund of $320 goes to your card in 5 days."]
    transcript, last = await converse(RuleSimulator(), p, agent, opening=None)
    users = user_texts(transcript)
    assert "And please confirm the refund." in users[1]  # not goal_met after the cancellation alone
    assert last.stop == "goal_met" and set(last.meta["delivered"]) == {"cancellation", "refund"}


async def test_conditional_change_fact_updates_later_answers():
    p = with_events(
        {
            "when": {"agent_says": ["not eligible"]},
            "kind": "change_fact",
            "slot": "email",
            "value": "anya.g@work.com",
        }
    )
    t = [U("hi"), A("That fare is not eligible for a refund.")]
    turn2 = await RuleSimulator().next_turn(at(p, t, 2))
    assert "anya.g@work.com" in turn2.message and "email" in turn2.message and "email:" not in turn2.message
    t += [U(turn2.message), A("What's your email?")]
    turn3 = await RuleSimulator().next_turn(at(p, t, 3))
    assert "anya.g@work.com" in turn3.message and "anya@example.com" not in turn3.message


def test_event_needs_exactly_one_trigger():
    with pytest.raises(ValidationError, match="exactly one of `at_turn"):
        with_events({"kind": "say", "text": "x"})
    with pytest.raises(ValidationError, match="exactly one of `at_turn"):
        with_events({"at_turn": 2, "when": {"agent_says": ["x"]}, "kind": "say", "text": "x"})
    with pytest.raises(ValidationError, match="agent_says"):
        with_events({"when": {}, "kind": "say", "text": "x"})


async def test_scripted_turn_events_still_fire_at_their_turn():
    p = with_events({"at_turn": 3, "kind": "say", "text": "Also, I'm in a hurry."})
    transcript, _ = await converse(RuleSimulator(), p, ["Hello.", "Hmm.", "Hmm."], opening=None, max_turns=3)
    users = user_texts(transcript)
    assert "in a hurry" not in users[1] and users[2].startswith("Also, I'm in a hurry.")


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_typos_never_touch_the_facts(language):
    values = (
        ["Garcia Street 14", "anya_garcia_5901"] if language == "en" else ["住在浦东的老房子", "#W2378156"]
    )
    p = airline(
        language=language,
        traits={"typo_prone": True},
        reveal_policy="all_at_once",
        opening_message=None,
        known_info=[{"key": "address", "value": values[0]}, {"key": "user_id", "value": values[1]}],
    )
    for seed in range(10):
        turn = await RuleSimulator().next_turn(at(p, [], 1, seed=seed))
        assert values[0] in turn.message and values[1] in turn.message


async def test_a_pending_item_is_asked_for_in_words_not_its_key():
    """Without words for the item the user restates its goal (never "What about card blocked?");
    with goal.labels it names the item in its own words."""
    p = airline(goal={"description": "block my card", "required": ["card_blocked"]}, opening_message=None)
    labelled = airline(
        goal={
            "description": "block my card",
            "required": ["card_blocked"],
            "labels": {"card_blocked": "blocking my card"},
        },
        opening_message=None,
    )
    for seed in range(6):
        turn = await RuleSimulator().next_turn(at(p, [U("hi"), A("Okay.")], 2, seed=seed))
        assert turn.meta["acts"] == ["continue"]
        assert "block my card" in turn.message
        assert "card blocked" not in turn.message and "card_blocked" not in turn.message
        named = await RuleSimulator().next_turn(at(labelled, [U("hi"), A("Okay.")], 2, seed=seed))
        assert "blocking my card" in named.message and "card_blocked" not in named.message
