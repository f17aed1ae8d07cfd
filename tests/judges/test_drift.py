import json

from tests.judges.helpers import bot, case, state, user
from usersim.judges.drift import DriftJudge, keywords, overall

# Seed 003's drift path: 电动车 -> 新能源补贴 -> 补贴政策 -> 政策对比 (the agent wanders off on its own).
DRIFTING = [
    user("统计 2024 年华东区电动车销量"),
    bot("2024 年华东区电动车销量约 320 万辆，其中上海、江苏、浙江占比最高。"),
    user("这些车主要靠什么卖得好？"),
    bot("华东区电动车销量增长主要受新能源补贴推动，补贴降低了购车成本。"),
    user("继续说说"),
    bot("新能源补贴政策经历了多轮调整：2016 年起补贴逐年退坡，各地地方补贴标准不同。"),
    user("嗯"),
    bot("对比欧美的政策，美国的税收抵免和欧洲的碳排放法规各有侧重，德国曾提供环保奖金。"),
]


async def run(t, c=None, judge=None):
    return (await (judge or DriftJudge())(transcript=t, case=c or case(), state=state(t)))[0]


def test_keywords_drop_function_words():
    assert keywords("帮我搜一下6月中旬从上海飞大阪的机票") == {
        "6",
        "月中",
        "中旬",
        "上海",
        "海飞",
        "飞大",
        "大阪",
        "机票",
    }


async def test_agent_initiated_drift_curve():
    v = await run(DRIFTING)
    assert [(p["turn"], p["anchoring"], p["kind"]) for p in v.details["curve"]] == [
        (1, 100, "anchored"),
        (2, 100, "anchored"),
        (3, 0, "off_topic"),
        (4, 0, "off_topic"),
    ]
    assert v.details["overall"] == 0 and v.score == 0.0
    assert (
        v.reason
        == "drift score 0 (lexical); per turn: t1=100, t2=100, t3=0, t4=0; agent-initiated drift (主动扩展) in turn(s) 3, 4"
    )
    assert v.counts_toward_status is False  # informational without a case threshold
    assert v.evidence_turn == 5


async def test_pulled_back_scores_70():
    t = DRIFTING[:6] + [
        user("回到刚才的销量，浙江呢？"),
        bot("2024 年浙江电动车销量增长最快，华东区占比第一。"),
    ]
    v = await run(t)
    assert [p["anchoring"] for p in v.details["curve"]] == [100, 100, 0, 100]
    assert v.details["overall"] == 70 and v.verdict == "pass"


async def test_user_driven_switch_is_not_agent_drift():
    t = DRIFTING[:2] + [
        user("对了，明天北京天气怎么样"),
        bot("明天北京晴，气温 12-24℃。"),
        user("好的，回到刚才的销量"),
        bot("2024 年华东区电动车销量中，浙江增长最快。"),
    ]
    v = await run(t)
    kinds = [p["kind"] for p in v.details["curve"]]
    assert kinds == ["anchored", "user_switch", "anchored"]
    assert v.details["overall"] == 100
    assert v.reason.endswith(
        "user switched topic in turn(s) 2 (not counted as drift; the anchor moves to the new topic)"
    )
    assert v.details["user_switch_turns"] == [2] and v.details["agent_drift_turns"] == []
    assert v.details["curve"][2]["back_to_earlier_topic"] is True  # 回到刚才的销量: the intent again


async def test_an_explicit_switch_resets_the_anchor():
    # after the user switches to the weather, a reply that wanders back to EV sales on its own is
    # drift from the CURRENT topic (a union of old and new topics would have called it anchored)
    t = DRIFTING[:2] + [
        user("对了，明天北京天气怎么样"),
        bot("明天北京晴，气温 12-24℃。"),
        user("后天呢？"),
        bot("华东区电动车销量方面，2024 年上海增长最快。"),
    ]
    v = await run(t)
    assert [(p["anchoring"], p["kind"]) for p in v.details["curve"]] == [
        (100, "anchored"),
        (100, "user_switch"),
        (0, "off_topic"),
    ]
    assert v.details["user_switch_turns"] == [2] and v.details["agent_drift_turns"] == [3]
    assert v.details["overall"] == 0


async def test_switch_announced_without_a_subject_takes_the_next_message_as_the_topic():
    t = DRIFTING[:2] + [
        user("换个话题吧"),
        bot("好的，您想聊什么？"),
        user("明天北京天气怎么样"),
        bot("明天北京晴，气温 12-24℃，天气不错。"),
    ]
    v = await run(t)
    assert [(p["anchoring"], p["kind"]) for p in v.details["curve"]] == [
        (100, "anchored"),
        (100, "user_switch"),
        (100, "anchored"),  # on the new topic, not drift from 电动车销量
    ]
    assert v.details["overall"] == 100 and v.details["passive_drift_turns"] == []


async def test_passive_drift_is_drift_and_reported_apart_from_agent_drift():
    # 被动漂移: the user's follow-ups leave the intent without announcing a switch; the agent follows
    t = DRIFTING[:2] + [
        user("新能源补贴政策怎么样"),
        bot("新能源补贴政策经历了多轮调整，2016 年起逐年退坡。"),
        user("欧美国家有什么类似做法"),
        bot("美国有税收抵免，欧洲有碳排放法规，德国曾提供环保奖金。"),
    ]
    v = await run(t)
    assert [(p["anchoring"], p["kind"]) for p in v.details["curve"]] == [
        (100, "anchored"),
        (0, "passive_drift"),
        (0, "passive_drift"),
    ]
    assert v.details["passive_drift_turns"] == [2, 3]
    assert v.details["user_switch_turns"] == [] and v.details["agent_drift_turns"] == []
    assert v.details["overall"] == 0 and v.verdict == "fail"
    assert (
        "passive drift (被动漂移: the reply followed the user's unannounced detour) in turn(s) 2, 3"
        in v.reason
    )
    assert "user switched topic" not in v.reason and "主动扩展" not in v.reason


async def test_agent_that_keeps_the_intent_through_a_user_detour_is_anchored():
    t = DRIFTING[:2] + [
        user("新能源补贴政策怎么样"),
        bot("补贴推动了 2024 年华东区电动车销量增长，统计口径不变。"),
    ]
    v = await run(t)
    assert [p["kind"] for p in v.details["curve"]] == ["anchored", "anchored"]
    assert v.details["overall"] == 100


async def test_case_threshold_makes_drift_count():
    c = case(tags=["drift-threshold:70"])
    v = await run(DRIFTING, c)
    assert v.counts_toward_status is True and v.verdict == "fail"
    assert v.criterion == "semantic drift (threshold 70)"


def test_overall_scale():
    pts = lambda *xs: [{"anchoring": x} for x in xs]
    assert overall(pts(100, 100)) == 100
    assert overall(pts(100, 30, 100)) == 70
    assert overall(pts(100, 70)) == 70
    assert overall(pts(100, 100, 30)) == 30
    assert overall(pts(100, 0)) == 0


async def test_llm_drift_with_scripted_model_and_fallback():
    answers = [
        json.dumps(
            {
                "turns": [
                    {"turn": 1, "anchoring": 100, "kind": "anchored"},
                    {"turn": 2, "anchoring": 70, "kind": "expansion", "reason": "扩展到补贴"},
                    {"turn": 3, "anchoring": 30, "kind": "expansion"},
                    {"turn": 4, "anchoring": 30, "kind": "passive_drift"},
                ]
            }
        )
    ]

    async def complete(messages):
        return answers.pop(0)

    v = await run(DRIFTING, judge=DriftJudge("openai:j", complete))
    assert v.details["mode"] == "llm" and v.details["overall"] == 30
    assert v.details["curve"][1]["reason"] == "扩展到补贴"
    assert v.details["agent_drift_turns"] == [2, 3] and v.details["passive_drift_turns"] == [4]

    async def broken(messages):
        return "not json"

    v = await run(DRIFTING, judge=DriftJudge("openai:j", broken))
    assert v.details["mode"] == "lexical"
    assert (
        "LLM drift judge failed, lexical fallback: judge model openai:j returned malformed output" in v.reason
    )


async def test_history_only_case_measures_the_reply_to_the_last_history_message():
    t = DRIFTING[:3] + [bot("华东区电动车卖得好主要因为充电桩密集。")]
    v = (await DriftJudge()(transcript=t, case=case(), state=state(t, history_len=3)))[0]
    assert [(p["turn"], p["message_index"], p["anchoring"]) for p in v.details["curve"]] == [(1, 3, 100)]
