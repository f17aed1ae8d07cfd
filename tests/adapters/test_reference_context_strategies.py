"""The two strategies that keep what the window drops: key-information extraction and external
memory — what each keeps, what each loses, what it costs."""

from __future__ import annotations

import pytest

from tests.adapters.ref_support import answer
from tests.adapters.test_reference_context import ALLERGY, ASK, FILLER, IDENTITY, RECALL, excluded
from usersim.adapters.base import AgentError, AgentInput, load_agent
from usersim.adapters.reference.context import ContextConfig, build_view, split_turns
from usersim.adapters.reference.memory import MemoryStore, key_sentences
from usersim.cases.schema import Case
from usersim.core.messages import Message

SMALL_TALK = [
    ("今天天气怎么样？", "晴。"),
    ("推荐一本好书。", "《活着》。"),
    ("什么是区块链？", "一种账本。"),
]


def convo(*turns, last: str) -> list[Message]:
    out = [Message(role="system", content="当前日期：2026-04-07")]
    for u, a in turns:
        out += [Message(role="user", content=u), Message(role="assistant", content=a)]
    return out + [Message(role="user", content=last)]


async def test_key_info_keeps_constraints_and_identity_from_beyond_its_window():
    _, tools = await answer("reference:key-info", ALLERGY, *FILLER, ASK)
    assert excluded(tools) == ["海鲜"]
    new, _ = await answer("reference:key-info", IDENTITY, *FILLER, RECALL)
    assert new[-1].content == "记得：你叫张三，在北京工作，是测试工程师。"


def test_key_info_keeps_fact_sentences_and_drops_small_talk():
    msgs = convo(
        ("我叫张三，在北京工作，做测试工程师的。", "你好！"),
        *SMALL_TALK,
        ("预算 6000 以内，不要苹果。", "好。"),
        last="推荐电脑",
    )
    view = build_view(msgs, ContextConfig(key_info=1))
    assert view.summary == ["我叫张三，在北京工作，做测试工程师的。", "预算 6000 以内，不要苹果。"]
    assert [t[0].content for t in view.turns] == ["推荐电脑"]
    assert "推荐一本好书。" not in view.visible_user_messages()


def test_external_memory_store_is_written_once_per_turn_and_searched_by_relevance():
    store = MemoryStore()
    _, turns = split_turns(convo(IDENTITY, *FILLER, last=RECALL))
    store.sync(turns[:3])
    assert [e.turn for e in store.entries] == [1, 2, 3]
    store.sync(turns[:-1])  # later steps write only the new turns
    assert [e.turn for e in store.entries] == [1, 2, 3, 4, 5, 6]
    hits = store.search("我是在哪里工作来着？", 3)
    assert [e.turn for e in hits] == [1]  # only the turn that shares words with the question
    assert store.search("能分析一下它吗？", 3) == []  # a pronoun shares nothing: nothing retrieved


async def test_external_memory_recalls_the_relevant_turn_but_not_a_pronouns_referent():
    new, _ = await answer("reference:external-memory", IDENTITY, *FILLER, RECALL)
    assert new[-1].content == "记得：你叫张三，在北京工作，是测试工程师。"
    kept, _ = await answer(
        "reference:external-memory",
        ("我有一份销售数据，包含 2024 年全年的销售额。", "好的。"),
        *SMALL_TALK,
        "能分析一下它吗？",
    )
    full, _ = await answer(
        "reference",
        ("我有一份销售数据，包含 2024 年全年的销售额。", "好的。"),
        *SMALL_TALK,
        "能分析一下它吗？",
    )
    assert "销售数据" in full[-1].content and "销售数据" not in kept[-1].content


async def test_the_store_lives_with_the_conversation_and_the_token_cost_is_what_the_view_keeps():
    agent = load_agent("reference:external-memory")
    case = Case.model_validate(
        {
            "id": "X",
            "dimension": "MT",
            "title": "t",
            "input": {"message": "hi"},
            "judging": {"scoring": {"methods": ["auto"]}},
        }
    )

    async def no_tool(name, args):
        raise AssertionError("no tools here")

    msgs = convo(IDENTITY, *FILLER, last=RECALL)
    reply = await agent.respond(AgentInput(messages=msgs, tools=[], case=case, run_tool=no_tool, seed=7))
    assert len(agent.stores.get(("X", 7)).entries) == 6 and agent.stores.get(("X", 8)).entries == []
    full = await load_agent("reference").respond(
        AgentInput(messages=msgs, tools=[], case=case, run_tool=no_tool)
    )
    assert 0 < reply.usage.prompt_tokens < full.usage.prompt_tokens


def test_describe_states_profile_injection_and_external_memory():
    d = load_agent("reference:key-info").describe()
    assert (d["context_strategy"], d["window_turns"], d["profile_injection"], d["external_memory"]) == (
        "key_info",
        1,
        True,
        False,
    )
    d = load_agent("reference:external-memory-5").describe()
    assert (d["context_strategy"], d["window_turns"], d["external_memory"], d["memory_top_k"]) == (
        "external_memory",
        2,
        True,
        5,
    )
    d = load_agent("reference:window-4,external-memory").describe()
    assert (d["context_strategy"], d["window_turns"], d["external_memory"]) == ("window", 4, True)


def test_strategies_that_exclude_each_other_are_refused():
    with pytest.raises(
        AgentError, match="choose one of window-N, summary, key-info, not window-N and key-info"
    ):
        load_agent("reference:window-4,key-info")
    with pytest.raises(AgentError, match="Did you mean 'key-info'"):
        load_agent("reference:key-inf")


def test_key_sentences_are_bounded_newest_kept():
    _, turns = split_turns(convo(*[(f"第 {i} 天预算 {i}00 元", "好。") for i in range(1, 20)], last="汇总"))
    from datetime import date

    kept = key_sentences(turns[:-1], date(2026, 4, 7))
    assert len(kept) == 12 and kept[-1] == "第 19 天预算 1900 元" and kept[0] == "第 8 天预算 800 元"
