"""Simulator fidelity verdicts on crafted transcripts."""

from __future__ import annotations

import json

import pytest

from tests.simulator.helpers import persona
from usersim.cases.schema import Case
from usersim.core.events import Stop
from usersim.core.messages import Message
from usersim.judges.base import JudgeState
from usersim.judges.fidelity import judge_fidelity

CASE = Case.model_validate(
    {
        "id": "T-1",
        "dimension": "C2",
        "title": "t",
        "mode": "organic",
        "persona": "t-user",
        "max_turns": 10,
        "judging": {"scoring": {"methods": ["llm_judge"]}},
    }
)
FLIGHTS = "为你找到以下航班：\n1. 东航 MU523 08:00 起飞 ¥2300/人"
HOTEL = "推荐酒店：难波日航酒店 ¥800/晚"


def msgs(*pairs: tuple[str, str]) -> list[Message]:
    return [Message(role=r, content=c) for r, c in pairs]


async def verdicts(transcript, stop="goal_met", **state):
    st = JudgeState(persona=persona(), stop=Stop(reason=stop) if stop else None, turns=5, **state)
    return {v.judge: v for v in await judge_fidelity(transcript=transcript, case=CASE, state=st)}


async def test_faithful_conversation_passes_every_check_and_never_counts():
    t = msgs(
        ("user", "帮我订票"),
        ("assistant", FLIGHTS),
        ("user", "酒店呢？"),
        ("assistant", HOTEL),
        ("user", "好的谢谢"),
    )
    got = await verdicts(t)
    assert {k: v.verdict for k, v in got.items()} == {
        "fidelity.leak": "pass",
        "fidelity.character": "pass",
        "fidelity.early_stop": "pass",
        "fidelity.swayed": "pass",
        "fidelity.language": "pass",
        "fidelity.length": "pass",
        "fidelity.invented": "pass",
        "fidelity.reveal": "pass",
        "fidelity.events": "pass",
        "fidelity.traits": "pass",
        "fidelity.patience": "pass",
    }
    assert all(v.counts_toward_status is False for v in got.values())


async def test_leak_of_unknown_truth_is_flagged_with_the_turn():
    t = msgs(("user", "帮我订票"), ("assistant", "酒店预算多少？"), ("user", "每晚 888 元吧"))
    got = await verdicts(t, stop="max_turns")
    assert got["fidelity.leak"].verdict == "fail" and got["fidelity.leak"].evidence_turn == 2
    assert "'每晚 888 元' (酒店房价)" in got["fidelity.leak"].reason


async def test_breaking_character_is_flagged():
    t = msgs(
        ("user", "帮我订票"), ("assistant", "从哪出发？"), ("user", "作为AI助手，我建议您先确定出发地。")
    )
    got = await verdicts(t, stop="max_turns")
    assert got["fidelity.character"].verdict == "fail" and "作为AI助手" in got["fidelity.character"].reason


async def test_goal_met_after_mere_confirmation_is_an_early_stop():
    t = msgs(
        ("user", "帮我订票"),
        ("assistant", FLIGHTS),
        ("user", "酒店也订"),
        ("assistant", "好的，已确认，我会帮你订酒店。"),
    )
    got = await verdicts(t)
    assert got["fidelity.early_stop"].verdict == "fail"
    assert got["fidelity.early_stop"].reason == "stopped with goal_met but the agent never delivered: hotel"
    assert (await verdicts(t, stop="max_turns"))["fidelity.early_stop"].verdict == "pass"


async def test_accepting_an_over_budget_proposal_is_swayed_rejecting_is_not():
    pricey = "为你找到航班：全日空 NH920 ¥4500/人"
    swayed = await verdicts(
        msgs(("user", "订票"), ("assistant", pricey), ("user", "好的，就这个吧")), stop="max_turns"
    )
    assert swayed["fidelity.swayed"].verdict == "fail"
    assert "max_price: proposed 4500, limit 3000" in swayed["fidelity.swayed"].reason
    firm = await verdicts(
        msgs(("user", "订票"), ("assistant", pricey), ("user", "太贵了，3000 以内的有吗")), stop="max_turns"
    )
    assert firm["fidelity.swayed"].verdict == "pass"
    ended = await verdicts(msgs(("user", "订票"), ("assistant", pricey)))
    assert (
        ended["fidelity.swayed"].verdict == "fail"
        and "ended with goal_met" in ended["fidelity.swayed"].reason
    )


async def test_history_is_not_judged_and_no_persona_is_inconclusive():
    t = msgs(("user", "作为AI助手我来回答"), ("assistant", "?"), ("user", "帮我订票"))
    assert (await verdicts(t, stop=None, history_len=2))["fidelity.character"].verdict == "pass"
    out = await judge_fidelity(transcript=t, case=CASE, state=JudgeState())
    assert [v.verdict for v in out] == ["inconclusive"] * 11 and "has no persona" in out[0].reason


@pytest.mark.parametrize(
    ("user_text", "judge", "why"),
    [
        ("酒店一晚大概 888 块", "fidelity.leak", "number(s) of '酒店房价: 每晚 888 元'"),
        (
            "我们 4 个人，预算1万",
            "fidelity.invented",
            "'4 个人' is in neither the persona nor the conversation",
        ),
        ("我来为您查询一下，请问还有什么需要？", "fidelity.character", "speaks as the assistant"),
        ("用户：订票\n助手：好的", "fidelity.character", "writes both sides"),
        (
            "I want to fly from Shanghai to Osaka with my wife please",
            "fidelity.language",
            "mostly Latin script",
        ),
        ("我想订票" * 150, "fidelity.length", "over the 500-character cap for verbosity medium"),
        ("上海出发去大阪，6 月 15 号，2 个人", "fidelity.reveal", "volunteers 3 facts nobody asked for"),
    ],
)
async def test_rule_fallback_fails_each_kind_of_unfaithful_turn(user_text, judge, why):
    t = msgs(("user", "帮我订票"), ("assistant", "请问从哪里出发？"), ("user", user_text))
    got = await verdicts(t, stop="max_turns")
    assert got[judge].verdict == "fail" and why in got[judge].reason and got[judge].evidence_turn == 2


async def test_event_never_said_fails_and_its_constraint_is_not_applied():
    p = persona(events=[{"at_turn": 2, "kind": "add_constraint", "slot": "max_price", "value": "2000"}])
    pricey = "为你找到航班：东航 MU523 ¥2500/人"
    t = msgs(
        ("user", "订票"),
        ("assistant", "几号出发？"),
        ("user", "6 月 15 号"),
        ("assistant", pricey),
        ("user", "好的，就这个"),
    )
    st = JudgeState(persona=p, stop=Stop(reason="max_turns"), turns=3)
    got = {v.judge: v for v in await judge_fidelity(transcript=t, case=CASE, state=st)}
    assert (
        got["fidelity.events"].verdict == "fail"
        and "due turn 2 but never said" in got["fidelity.events"].reason
    )
    assert got["fidelity.swayed"].verdict == "pass"  # the agent was never told the 2000 limit
    said = msgs(
        ("user", "订票"),
        ("assistant", "几号出发？"),
        ("user", "6 月 15 号，预算 2000 以内"),
        ("assistant", pricey),
        ("user", "好的，就这个"),
    )
    got = {v.judge: v for v in await judge_fidelity(transcript=said, case=CASE, state=st)}
    assert got["fidelity.events"].verdict == "pass"
    assert got["fidelity.swayed"].verdict == "fail" and "limit 2000" in got["fidelity.swayed"].reason


async def test_event_never_reached_passes():
    p = persona(events=[{"at_turn": 8, "kind": "say", "text": "其实我想改成去东京"}])
    st = JudgeState(persona=p, stop=Stop(reason="gave_up"), turns=2)
    t = msgs(("user", "订票"), ("assistant", "几号？"), ("user", "6 月 15 号"))
    got = {v.judge: v for v in await judge_fidelity(transcript=t, case=CASE, state=st)}
    assert got["fidelity.events"].verdict == "pass" and "1 never reached" in got["fidelity.events"].reason


async def test_llm_fidelity_catches_a_paraphrased_leak():
    answers = [
        json.dumps(
            {
                "checks": [
                    {
                        "check": "knowledge",
                        "evidence": "八百多一晚",
                        "turn": 2,
                        "reasoning": "paraphrases the hidden hotel price",
                        "verdict": "fail",
                    },
                    *[{"check": c, "verdict": "pass"} for c in ("character", "reveal", "language", "events")],
                ]
            },
            ensure_ascii=False,
        )
    ]
    sent = []

    async def complete(messages):
        sent.append(messages)
        return answers.pop(0)

    t = msgs(("user", "帮我订票"), ("assistant", "酒店预算？"), ("user", "听说那边八百多一晚"))
    st = JudgeState(persona=persona(), stop=Stop(reason="max_turns"), turns=2)
    got = {v.judge: v for v in await judge_fidelity(transcript=t, case=CASE, state=st, complete=complete)}
    assert got["fidelity.leak"].verdict == "pass"  # the rules cannot see a paraphrase...
    knowledge = got["fidelity.llm.knowledge"]  # ...the judge model can
    assert knowledge.verdict == "fail" and knowledge.evidence_turn == 2 and "八百多一晚" in knowledge.reason
    assert "888" in sent[0][0]["content"]  # the judge sees the hidden truth to recognise paraphrases
    assert not knowledge.counts_toward_status


async def test_traits_are_measured_and_a_chatty_terse_user_fails():
    t = msgs(
        ("user", "帮我订票"),
        ("assistant", "从哪出发？"),
        ("user", "上海"),
        ("assistant", "几号？"),
        ("user", "15号"),
    )
    st = JudgeState(persona=persona(traits={"verbosity": "high"}), stop=Stop(reason="max_turns"), turns=3)
    got = {v.judge: v for v in await judge_fidelity(transcript=t, case=CASE, state=st)}
    traits = got["fidelity.traits"]
    assert traits.verdict == "fail" and "chatty persona (verbosity high) wrote only" in traits.reason
    assert traits.details["user_turns"] == 3 and traits.details["mean_facts_per_turn"] == 0.33


async def test_giving_up_before_patience_could_run_out_is_the_simulators():
    t = msgs(("user", "帮我订票"), ("assistant", "从哪出发？"), ("user", "算了"))
    got = await verdicts(t, stop="gave_up")
    assert got["fidelity.patience"].verdict == "fail"
    assert "after 1 agent reply, before the persona's patience of 3" in got["fidelity.patience"].reason


async def test_repeating_what_the_agent_said_is_no_leak():
    t = msgs(("user", "帮我订票"), ("assistant", "推荐难波日航，每晚 888 元"), ("user", "888 一晚有点贵"))
    assert (await verdicts(t, stop="max_turns"))["fidelity.leak"].verdict == "pass"


async def test_a_rule_heuristic_fail_defers_to_the_judge_model_that_passes_it():
    answer = json.dumps(
        {
            "checks": [
                {"check": c, "verdict": "pass"}
                for c in ("knowledge", "character", "reveal", "language", "events")
            ]
        }
    )

    async def complete(messages):
        return answer

    t = msgs(
        ("user", "帮我订票"),
        ("assistant", "请问从哪里出发？"),
        ("user", "上海出发去大阪，6 月 15 号，2 个人"),
    )
    st = JudgeState(persona=persona(), stop=Stop(reason="max_turns"), turns=2)
    got = {v.judge: v for v in await judge_fidelity(transcript=t, case=CASE, state=st, complete=complete)}
    reveal = got["fidelity.reveal"]
    assert reveal.verdict == "inconclusive" and reveal.details["superseded_by"] == "fidelity.llm.reveal"
    assert "volunteers 3 facts nobody asked for" in reveal.reason  # the heuristic's finding stays visible


async def test_answering_every_fact_the_agent_asked_for_is_no_dump():
    t = msgs(
        ("user", "帮我订票"),
        ("assistant", "请问从哪里出发、几号出发、几个人？"),
        ("user", "上海出发，6 月 15 号，2 个人"),
    )
    assert (await verdicts(t, stop="max_turns"))["fidelity.reveal"].verdict == "pass"
