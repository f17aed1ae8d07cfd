"""Slot detection of typical agent questions, Chinese and English; and delivery signals."""

from __future__ import annotations

import pytest

from usersim.personas.schema import Goal
from usersim.simulator.signals import constraint_violations, delivered_items, role_flip
from usersim.simulator.slots import asked_slots


@pytest.mark.parametrize(
    "question, slots",
    [
        ("你打算玩几天？从哪个城市出发？预算大概多少？", ["duration", "origin", "budget"]),
        ("请告诉我出发日期和同行人数。", ["dates", "party_size"]),
        ("想去哪个城市？", ["destination"]),
        ("您是一个人去还是和朋友一起？", ["party_size"]),
        ("主要用来做什么？对品牌有偏好吗？", ["purpose", "brand"]),
        ("对重量有要求吗？需要轻薄便携的吗？", ["weight"]),
        ("想买在哪个区？几居室？", ["district", "bedrooms"]),
        ("有什么忌口或者过敏的吗？", ["diet"]),
        ("What's your budget? And how many people are travelling with you?", ["budget", "party_size"]),
        ("Which city will you depart from?", ["origin"]),
        ("When are you planning to travel, and how long will you stay?", ["dates", "duration"]),
        ("What will you mainly use the laptop for?", ["purpose"]),
        ("Do you have any dietary restrictions or allergies?", ["diet"]),
        ("为你找到以下航班，东航 MU523。", []),  # a statement asks nothing
    ],
)
def test_asked_slots(question, slots):
    assert asked_slots(question) == slots


def test_delivery_needs_a_stated_result_not_a_question_or_announcement():
    goal = Goal(
        description="x",
        required=["flights", "hotel"],
        deliverable_keywords={"flights": ["航班"], "hotel": ["酒店"]},
    )
    assert delivered_items(goal, "好的，我先帮你查航班。你想住什么样的酒店？") == {}
    assert delivered_items(goal, "I'll book the 航班 now.") == {}
    assert delivered_items(goal, "为你找到以下航班：\n1. MU523\n酒店：日航 ¥800") == {
        "flights": "航班",
        "hotel": "酒店",
    }
    # flights and hotels are results with numbers: a snippet that mentions 直飞 delivers nothing
    travel = Goal(description="x", required=["flights", "hotel"])
    assert delivered_items(travel, "上海直飞那霸每周仅部分日期有航班。晚一周酒店便宜一半。") == {}
    assert delivered_items(travel, "推荐航班：\n东航 MU523 07:10 起飞\n日航酒店 6 月 15 日入住") == {
        "flights": "起飞",
        "hotel": "入住",
    }
    short = Goal(description="x", required=["flights"], deliverable_keywords={"flights": ["CA"]})
    assert delivered_items(short, "Canon 相机") == {} and delivered_items(short, "国航 CA1234 08:00") == {
        "flights": "CA"
    }


def test_constraint_violations_skip_negations_restrictions_and_warnings():
    c = {"max_price": 3000, "exclude": ["海鲜"], "max_weight_kg": 1.5}
    assert constraint_violations(c, "这家无海鲜，考虑到你海鲜过敏。超出预算的 ¥4000 机型不推荐。") == []
    assert constraint_violations(c, "春秋 9C8515：¥1,070/人，2 人合计约 ¥4,580") == []  # a group total
    found = [
        v.describe() for v in constraint_violations(c, "推荐 A 款 ¥3500，重 1.8kg。附近的海鲜大排档也不错。")
    ]
    assert found == [
        "max_price: proposed 3500, limit 3000",
        "max_weight_kg: proposed 1.8kg, limit 1.5kg",
        "exclude: proposed 海鲜, limit no 海鲜",
    ]


def test_role_flip_phrases():
    assert role_flip("作为AI助手，我建议") == "作为AI助手"
    assert role_flip("How can I help you today?") == "How can I help you"
    assert role_flip("有什么可以帮您的吗") == "有什么可以帮您"
    assert role_flip("我想去大阪，你能帮我看看吗") is None


def test_a_request_for_details_is_not_a_delivery():
    goal = Goal(description="x", required=["model"], deliverable_keywords={"model": ["型号"]})
    assert delivered_items(goal, "笔记本电脑：可以稍后再试，或告诉我更具体的型号。") == {}
    assert delivered_items(goal, "推荐型号：联想小新 Pro 14，¥5499。") == {"model": "型号"}


# --- any persona fact (FactMatcher) --------------------------------------------------------------


def _support_persona():
    from usersim.personas.schema import Persona

    return Persona.model_validate(
        {
            "id": "cs",
            "name": "Sam",
            "language": "en",
            "identity": "customer",
            "goal": {"description": "cancel", "required": ["cancellation"]},
            "known_info": [
                {"key": "user_id", "value": "sam_1"},
                {"key": "email", "value": "s@x.com"},
                {"key": "home_address", "value": "1 Main St"},
                {"key": "payment_method_id", "value": "card_9", "description": "the card used to pay"},
            ],
            "unknown_info": ["the reason for the cancellation"],
        }
    )


@pytest.mark.parametrize(
    "text, asked",
    [
        ("What's the email address on file?", ["email"]),  # email, not the postal address
        ("And your home address?", ["home_address"]),
        ("Which card did you pay with?", ["payment_method_id"]),
        ("What's your user ID? Also, what's your email?", ["user_id", "email"]),  # in asking order
        ("What is the name of the hotel you stayed at?", ["unknown:"]),  # not the user's name; not known
        ("May I have your full name?", ["name"]),
        ("Why are you cancelling?", ["unknown:the reason for the cancellation"]),
        ("Do you want to cancel the whole reservation?", []),  # a yes/no about cancelling, not the reason
        ("Could you provide your passport number?", ["unknown:"]),  # information it does not have
        ("Your user ID is sam_1.", []),  # a statement asks nothing
    ],
)
def test_fact_matcher_finds_the_facts_a_reply_asks_about(text, asked):
    from usersim.simulator.slots import FactMatcher

    assert FactMatcher(_support_persona()).asked(text) == asked


@pytest.mark.parametrize(
    "word, text, found",
    [
        ("1628", "A total of $1,628.00 was charged.", True),
        ("$1,628", "total 1628 USD", True),
        ("4", "You have 14 bags.", False),  # a number is matched whole
        ("4", "You have 4 bags.", True),
        ("4", "Rated 4.5 stars.", False),
        ("refund of $320", "A refund of $320.00 is on its way.", True),
        ("G", "G1234 次高铁", True),  # short Latin codes still work
        ("华为 MateBook", "华为MateBook 14", True),
    ],
)
def test_deliverable_keywords_compare_numbers_by_value(word, text, found):
    from usersim.simulator.signals import keyword_in

    assert keyword_in(word, text.lower()) is found


def test_a_number_keyword_in_the_agents_question_delivers_nothing():
    goal = Goal(description="refund", required=["refund"], deliverable_keywords={"refund": ["320"]})
    assert delivered_items(goal, "Should I refund the $320 to your card?") == {}
    assert delivered_items(goal, "I refunded $320.00 to your card.") == {"refund": "320"}
