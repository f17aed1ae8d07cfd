"""Context strategies and flaws change behaviour exactly where they should."""

from __future__ import annotations

import pytest

from tests.adapters.ref_support import answer, fake_tools
from usersim.adapters.base import AgentError, load_agent

FILLER = [
    ("京都的寺庙门票贵吗？", "大多 400-600 日元。"),
    ("当地交通怎么解决？", "公交一日券很方便。"),
    ("需要提前办签证吗？", "需要，建议提前 3-4 周申请。"),
    ("有什么必买的纪念品？", "抹茶点心、生八桥。"),
    ("当地货币怎么换？", "便利店 ATM 可以取日元。"),
]
ALLERGY = ("我打算五一去京都玩，我对海鲜过敏，这个要注意一下", "好的，已记下您对海鲜过敏。")
ASK = "帮我推荐一下当地的美食餐厅"


def excluded(tools) -> list[str]:
    return next(a.get("exclude", []) for n, a in tools.calls if n == "search_restaurants")


async def test_full_history_keeps_the_early_allergy():
    new, tools = await answer("reference", ALLERGY, *FILLER, ASK)
    assert excluded(tools) == ["海鲜"]
    assert "海鲜大咖" not in new[-1].content and "已避开海鲜" in new[-1].content


async def test_window_loses_facts_older_than_n_turns_and_keeps_newer_ones():
    # the allergy is in turn 1 of 7: window-3 cannot see it, window-7 can
    ask = "帮我推荐一下京都当地的美食餐厅"
    _, tools = await answer("reference:window-3", ALLERGY, *FILLER, ask)
    assert excluded(tools) == []
    _, tools = await answer("reference:window-7", ALLERGY, *FILLER, ask)
    assert excluded(tools) == ["海鲜"]
    # a fact said 2 turns ago is inside window-3
    _, tools = await answer("reference:window-3", *FILLER[:4], ALLERGY, FILLER[4], ask)
    assert excluded(tools) == ["海鲜"]


async def test_window_also_loses_the_destination():
    new, tools = await answer("reference:window-2", ALLERGY, *FILLER, ASK)
    assert tools.calls == [] and "目的地" in new[-1].content  # Kyoto scrolled out: it must ask


async def test_profile_injection_keeps_constraints_outside_the_window():
    _, tools = await answer("reference:window-2,profile", ALLERGY, *FILLER, ASK)
    assert excluded(tools) == ["海鲜"]
    assert tools.calls[0][1]["city"] == "京都"


async def test_summary_keeps_fact_sentences_from_older_turns():
    _, tools = await answer("reference:summary-2", ALLERGY, *FILLER, ASK)
    assert excluded(tools) == ["海鲜"]


async def test_summary_is_bounded_and_drops_the_oldest_facts_first():
    many = [(f"顺便说下，我第 {i} 天想去 {i} 号景点", "好的。") for i in range(1, 10)]
    _, tools = await answer("reference:summary-2", ALLERGY, *many, "帮我推荐一下京都当地的美食餐厅")
    assert excluded(tools) == []  # 9 newer fact sentences pushed the allergy out of the 8-sentence summary


async def test_flaw_forget_constraints_ignores_budget_weight_and_brands():
    history = [("想买一台笔记本电脑", "请问用途、预算和品牌偏好？")]
    msg = "平时写代码，预算 6000 以内，不要苹果，1.5kg 以内"
    good, good_tools = await answer("reference", *history, msg)
    bad, bad_tools = await answer("reference:flaw=forget-constraints", *history, msg)
    assert good_tools.calls[0][1]["max_price"] == 6000 and "max_price" not in bad_tools.calls[0][1]
    assert "ThinkPad X1 Carbon" not in good[-1].content and "ThinkPad X1 Carbon" in bad[-1].content


async def test_flaw_no_clarify_assumes_instead_of_asking():
    new, tools = await answer("reference:flaw=no-clarify", "帮我订机票")
    assert [n for n, _ in tools.calls] == ["search_flights"]
    assert tools.calls[0][1]["origin"] and tools.calls[0][1]["destination"]


async def test_flaw_give_up_on_error_stops_without_fallback_or_partial_results():
    tools = fake_tools(search_hotels="Error: Hotel search service temporarily unavailable (HTTP 503).")
    new, tools = await answer(
        "reference:flaw=give-up-on-error",
        "帮我规划 5 月 10 号到 14 号从上海去京都的旅行，两个人，5 天",
        tools=tools,
    )
    assert [n for n, _ in tools.calls] == ["search_flights", "search_hotels"]
    assert new[-1].content.startswith("抱歉") and "MU729" not in new[-1].content


async def test_flaw_ignore_history_asks_again_for_what_was_said():
    history = ("帮我订机票", "好的，请问出发地、目的地和大概时间是？")
    new, tools = await answer("reference:flaw=ignore-history", history, "两个人")
    assert tools.calls == [] or all(n != "search_flights" for n, _ in tools.calls)
    good, good_tools = await answer("reference", ("帮我订机票，上海到东京，下周五", "请问几位？"), "两个人")
    assert good_tools.calls[0][1]["passengers"] == 2
    bad, bad_tools = await answer(
        "reference:flaw=ignore-history", ("帮我订机票，上海到东京，下周五", "请问几位？"), "两个人"
    )
    assert bad_tools.calls == [] or bad_tools.calls[0][0] != "search_flights"


def test_flaws_combine_with_context_options_and_describe_reports_them():
    d = load_agent("reference:window-10,flaw=no-clarify,flaw=give-up-on-error").describe()
    assert d == {
        "agent": "reference",
        "context_strategy": "window",
        "window_turns": 10,
        "profile_injection": False,
        "external_memory": False,
        "temperature": 0,
        "flaws": ["no-clarify", "give-up-on-error"],
    }
    assert load_agent("reference").describe()["context_strategy"] == "full"
    assert load_agent("reference:profile").describe()["profile_injection"] is True
    assert load_agent("reference:summary").describe()["context_strategy"] == "summary"


def test_unknown_reference_option_suggests_the_right_one():
    with pytest.raises(AgentError, match="Unknown option 'flaw=no-clarfy'.*Did you mean 'flaw=no-clarify'"):
        load_agent("reference:flaw=no-clarfy")
    with pytest.raises(AgentError, match="Did you mean 'window-N'"):
        load_agent("reference:windw-N")


IDENTITY = ("我叫张三，在北京工作，做测试工程师的。下个月想去大阪玩。", "你好张三！")
RECALL = "对了，你还记得我叫什么名字吗？在哪里工作？做什么的？"


async def test_recall_of_who_the_user_is_decays_with_the_window_unless_profiled():
    new, tools = await answer("reference", IDENTITY, *FILLER, RECALL)
    assert tools.calls == [] and new[-1].content == "记得：你叫张三，在北京工作，是测试工程师。"
    forgot, _ = await answer("reference:window-3", IDENTITY, *FILLER, RECALL)
    assert "张三" not in forgot[-1].content and "看不到了" in forgot[-1].content  # admits it, never invents
    kept, _ = await answer("reference:window-3,profile", IDENTITY, *FILLER, RECALL)
    assert kept[-1].content == "记得：你叫张三，在北京工作，是测试工程师。"


async def test_unresolvable_pointer_is_asked_about_and_a_resolvable_one_is_resolved():
    new, tools = await answer(
        "reference", ("最近工作太累了，想出去放松一下。", "辛苦了！想去哪里？"), "帮我把它订了吧。"
    )
    assert tools.calls == [] and "具体指什么" in new[-1].content
    new, _ = await answer(
        "reference",
        ("我有一份销售数据，包含 2024 年全年的销售额。", "好的。"),
        ("计算 2+3 等于几？", "等于 5。"),
        "能分析一下它吗？",
    )
    assert "销售数据" in new[-1].content
