from tests.judges.helpers import bot, case, state, tool, user
from usersim.judges.checks import run_check
from usersim.judges.checks.clarification import extract_questions

CL01 = {
    "asked_clarification": {
        "min_questions": 3,
        "before_tools": ["search_flights"],
        "about": [["出发", "从哪"], ["目的地", "去哪"], ["时间", "日期", "哪天"]],
    }
}


async def run(spec, transcript, **kw):
    return await run_check(
        spec, transcript=transcript, case=case(checks=[spec]), state=state(transcript, **kw)
    )


def test_question_extraction_counts_enumerated_items():
    assert extract_questions("好的！请问您的出发地、目的地和出行时间是？") == [
        "请问您的出发地",
        "目的地",
        "出行时间是",
    ]
    assert extract_questions(
        "想了解几个信息：\n- 主要用途是什么？\n- 预算大概多少？\n\n另外，您有品牌偏好吗"
    ) == ["主要用途是什么", "预算大概多少", "另外，您有品牌偏好吗"]
    assert extract_questions("请告诉我：\n1. 出发城市\n2. 目的地\n3. 出行日期") == [
        "出发城市",
        "目的地",
        "出行日期",
    ]
    assert extract_questions("想去国内还是国外？大概几天？从哪里出发？") == [
        "想去国内还是国外",
        "大概几天",
        "从哪里出发",
    ]
    assert extract_questions("好的，我来帮你搜索。") == []
    # options listed under a question are not further questions
    assert extract_questions("您想去国内还是国外？\n1. 国内：三亚、厦门\n2. 国外：普吉岛") == [
        "您想去国内还是国外"
    ]


async def test_asked_clarification_passes_when_all_asked_before_search():
    t = [user("帮我订机票"), bot("好的，请问您从哪里出发、目的地是哪里、打算哪天出发？")]
    v = await run(CL01, t)
    assert v.verdict == "pass"
    assert v.reason.startswith("first turn asked 3 distinct question(s)")
    assert "asked about 出发/从哪, 目的地/去哪, 时间/日期/哪天" in v.reason


async def test_asked_clarification_fails_when_search_comes_first():
    t = [
        user("帮我订机票"),
        bot("", ("search_flights", {"origin": "北京"})),
        tool("search_flights"),
        bot("帮你查了北京出发的航班。还需要知道目的地吗？"),
    ]
    v = await run(CL01, t)
    assert v.verdict == "fail"
    assert v.reason.startswith("first turn asked 0 distinct question(s) before search_flights was called")
    assert "search_flights was called before asking" in v.reason


async def test_asked_clarification_missing_topic_and_too_many():
    spec = {"asked_clarification": {"min_questions": 1, "max_questions": 2, "about": [["用途"], ["预算"]]}}
    t = [user("想买一台笔记本电脑"), bot("您喜欢什么颜色？屏幕要多大？重量有要求吗？")]
    v = await run(spec, t)
    assert v.verdict == "fail"
    assert "more than the maximum 2" in v.reason
    assert "did not ask about 用途, 预算" in v.reason


async def test_keywords_any_all_none_and_synonyms():
    spec = {"keywords": {"all": ["京都", "住宿"], "none": ["东京"], "synonyms": {"住宿": ["酒店", "民宿"]}}}
    ok = [user("住哪里比较方便"), bot("京都站附近的酒店交通最方便。")]
    v = await run(spec, ok)
    assert v.verdict == "pass"
    assert v.reason == "in final reply: found all-of 京都, 住宿; none of 东京 present"
    bad = [user("等等，是京都不是东京"), bot("好的，这是东京和京都的酒店。")]
    v = await run(spec, bad)
    assert v.verdict == "fail"
    assert v.reason == "in final reply: forbidden present: 东京; found all-of 京都, 住宿"
    none_any = {"keywords": {"any": ["天气", "气温"], "scope": "assistant"}}
    v = await run(none_any, [user("明天北京天气怎么样"), bot("厦门行程第二天去鼓浪屿。")])
    assert v.verdict == "fail" and v.reason == "in the assistant replies: none of 天气, 气温 present"


async def test_count_list_items_and_pattern():
    spec = {"count": {"exactly": 5}}
    four = "推荐：\n1. 杭州\n2. 苏州\n3. 南京\n4. 厦门"
    v = await run(spec, [user("推荐 5 个适合周末游的城市"), bot(four)])
    assert (
        v.verdict == "fail"
        and v.reason == "4 list items (1. 杭州, 2. 苏州, 3. 南京, 4. 厦门); required exactly 5"
    )
    v = await run(spec, [user("…"), bot(four + "\n5. 青岛")])
    assert v.verdict == "pass" and v.reason.startswith("5 list items")
    pat = {"count": {"pattern": "Day ?\\d", "min": 3}}
    v = await run(pat, [user("…"), bot("Day1 岚山 Day2 东山 Day1 再提一次")])
    assert (
        v.verdict == "fail"
        and v.reason == "2 distinct matches of /Day ?\\d/ (Day1, Day2); required at least 3"
    )


def test_question_marks_inside_quoted_list_titles_are_not_questions_to_the_user():
    reply = (
        "日本旅行概览：\n- 端午去厦门太贵？错峰出行攻略：晚一周酒店便宜一半。\n"
        "还需要确认几个信息：\n1. 出发地：从哪个城市出发？\n- 预算大概多少？"
    )
    assert extract_questions(reply) == ["出发地：从哪个城市出发", "预算大概多少"]
