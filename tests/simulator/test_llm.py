"""The LLM simulator with a scripted fake model (and once over HTTP against the OpenAI stub)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.simulator.helpers import persona, view
from usersim.core.events import Usage
from usersim.core.messages import Message
from usersim.simulator.base import SimulatorError, load_simulator
from usersim.simulator.llm import LLMSimulator
from usersim.simulator.llm_prompt import build_messages

FLIGHTS = "为你找到以下航班：\n1. 东航 MU523 6月15日 08:00 起飞 ¥2300/人"


class ScriptedModel:
    """Answers each call with the next scripted content; records the messages it was sent."""

    def __init__(self, *contents: str) -> None:
        self.contents = list(contents)
        self.calls: list[list[dict[str, Any]]] = []

    async def __call__(self, *, model: str, messages: list[dict[str, Any]], **kw: Any) -> tuple[dict, Usage]:
        self.calls.append(messages)
        assert kw["role"] == "simulator" and kw["response_format"] == {"type": "json_object"}
        return {"role": "assistant", "content": self.contents.pop(0)}, Usage(
            calls=1, prompt_tokens=10, completion_tokens=5
        )


def reply(message: str, action: str = "continue", reason: str = "") -> str:
    return json.dumps({"message": message, "action": action, "reason": reason}, ensure_ascii=False)


def convo(*pairs: tuple[str, str]) -> list[Message]:
    return [Message(role=r, content=c) for r, c in pairs]


T2 = convo(("user", "帮我订去大阪的票"), ("assistant", "好的，从哪里出发？"))


async def test_opening_turn_is_verbatim_without_a_model_call():
    model = ScriptedModel()
    turn = await LLMSimulator("openai:m", complete=model).next_turn(
        view(persona(), [], 1, opening="我想暑假去日本玩")
    )
    assert turn.message == "我想暑假去日本玩" and model.calls == []


async def test_prompt_flips_roles_and_never_carries_unknown_truths():
    p = persona(events=[{"at_turn": 2, "kind": "change_fact", "slot": "dates", "value": "6 月 20 号"}])
    msgs = build_messages(view(p, T2, 2))
    # the agent speaks as `user`; the last message is this turn's note (per-call, after the chat)
    assert [m["role"] for m in msgs] == ["system", "assistant", "user", "system"]
    assert msgs[2]["content"] == "好的，从哪里出发？" and "turn 2 of" in msgs[3]["content"]
    system = msgs[0]["content"]
    assert "上海" in system and "6 月 20 号" in system and "6 月 15 号" not in system  # event applied
    assert "签证政策" in system and "酒店房价" in system  # topics the user does not know...
    assert "888" not in json.dumps(msgs, ensure_ascii=False)  # ...but never the hidden truth
    assert "max_price = 3000" in system


async def test_sent_prompts_never_contain_unknown_truths_or_tool_results():
    model = ScriptedModel(reply("从上海出发"))
    t = T2[:1] + [Message(role="assistant", content="好的，从哪里出发？")]
    await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), t, 2))
    sent = json.dumps(model.calls, ensure_ascii=False)
    assert "888" not in sent and '"tool"' not in sent


async def test_role_flip_and_empty_replies_are_regenerated():
    model = ScriptedModel(reply("作为AI助手，我可以帮您查询航班。"), "", reply("从上海出发，两个人"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), T2, 2))
    assert turn.message == "从上海出发，两个人" and turn.stop is None
    assert turn.meta["attempts"] == 3
    assert (
        turn.meta["problems"][0].startswith("broke character") and turn.meta["problems"][1] == "empty output"
    )
    assert "broke character" in model.calls[1][-1]["content"]  # the problem is fed back
    assert turn.usage is not None and turn.usage.calls == 3


async def test_leak_of_unknown_truth_is_regenerated():
    model = ScriptedModel(reply("酒店每晚 888 元就行"), reply("酒店价格我不清楚，你帮我查查"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), T2, 2))
    assert "888" not in turn.message and "unknown_info" in turn.meta["problems"][0]
    assert "888" not in json.dumps(model.calls[1], ensure_ascii=False)  # the bad reply is not echoed back


async def test_repeated_bad_outputs_raise_simulator_error():
    model = ScriptedModel(reply("How can I help you today?"), "", reply("", "continue"))
    sim = LLMSimulator("openai:m", complete=model, max_attempts=3)
    with pytest.raises(
        SimulatorError, match=r"produced no valid turn in 3 attempts \(turn 2\): broke character"
    ):
        await sim.next_turn(view(persona(), T2, 2))


async def test_a_stop_after_an_unrecognised_delivery_stands_and_nothing_is_injected():
    # the agent delivered in words the keyword heuristic does not know: the model's stop stands
    t = convo(
        ("user", "帮我订去大阪的票"), ("assistant", "订好了：MU523 早上八点，难波日航两晚，确认单已发邮箱。")
    )
    model = ScriptedModel(reply("好的谢谢", "stop", "both booked"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), t, 2))
    assert turn.stop == "goal_met" and turn.message == "好的谢谢" and turn.closing
    assert len(model.calls) == 1  # never refused, never re-asked
    (event,) = turn.events
    assert event.kind == "stop_accepted" and "left to the task-completion judge" in event.detail


async def test_plain_text_stop_token_ends_with_the_text_before_it():
    t = convo(("user", "帮我订"), ("assistant", FLIGHTS))
    model = ScriptedModel("好的，就这样吧，谢谢！###STOP###")
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), t, 2))
    assert turn.stop == "goal_met" and turn.message == "好的，就这样吧，谢谢！" and "###" not in turn.message


@pytest.mark.parametrize(
    ("content", "stop", "message"),
    [
        ("我要找人工客服 ###TRANSFER###", "transfer", "我要找人工客服"),
        ("那算了 ###OUT-OF-SCOPE###", "out_of_scope", "那算了"),
        (reply("谢谢 ###STOP###"), "goal_met", "谢谢"),  # a token inside JSON counts too
        (reply("转人工吧", "transfer"), "transfer", "转人工吧"),
    ],
)
async def test_stop_tokens_and_actions(content, stop, message):
    t = convo(("user", "帮我订"), ("assistant", FLIGHTS))
    turn = await LLMSimulator("openai:m", complete=ScriptedModel(content)).next_turn(view(persona(), t, 2))
    assert (turn.stop, turn.message) == (stop, message)


async def test_a_stop_before_the_agent_spoke_is_regenerated_not_replaced():
    model = ScriptedModel(reply("", "stop"), reply("我想订去大阪的机票"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), [], 1, opening=None))
    assert turn.stop is None and turn.message == "我想订去大阪的机票"  # the model's own words
    assert [e.kind for e in turn.events] == ["stop_refused", "retry"]
    assert "before the assistant said anything" in turn.events[0].detail


@pytest.mark.parametrize(
    ("bad", "guard"),
    [
        ("我来为您查询一下航班，请问您想什么时候出发？", "character"),
        ("Here are some great options for your trip to Osaka, let me know!", "character"),
        ("用户：帮我订票\n助手：好的", "character"),
        ("I would like to book flights from Shanghai to Osaka for two people please", "language"),
        ("我要订票" * 200, "length"),
        ("我们 4 个人，预算1万", "invented"),
        ("酒店一晚 888 块左右吧", "leak"),
    ],
)
async def test_guards_regenerate_and_are_recorded(bad, guard):
    model = ScriptedModel(reply(bad), reply("从上海出发，两个人"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), T2, 2))
    assert turn.message == "从上海出发，两个人"
    assert turn.events[0].kind == "guard" and turn.events[0].detail.startswith(f"attempt 1: {guard}:")
    assert "888" not in json.dumps([e.model_dump() for e in turn.events], ensure_ascii=False)


async def test_parroting_the_agent_is_regenerated():
    t = convo(("user", "帮我订"), ("assistant", "请问您从哪个城市出发，计划哪天出发，几个人同行？"))
    model = ScriptedModel(
        reply("请问您从哪个城市出发，计划哪天出发，几个人同行？"), reply("上海，6 月 15 号")
    )
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), t, 2))
    assert turn.message == "上海，6 月 15 号" and "parroted" in turn.events[0].detail


async def test_give_up_early_is_accepted_and_records_patience_used():
    model = ScriptedModel(reply("算了", "give_up", "not helpful"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), T2, 2))
    assert turn.stop == "gave_up"
    (event,) = turn.events
    assert (
        event.kind == "give_up"
        and "after 1 agent reply (persona patience 3, before it ran out)" in event.detail
    )


async def test_events_are_reminded_until_said():
    p = persona(events=[{"at_turn": 2, "kind": "add_constraint", "slot": "max_price", "value": "2000"}])
    model = ScriptedModel(reply("从上海出发"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(p, T2, 2))
    assert "max_price: 2000" in model.calls[0][-1]["content"]  # this turn's note
    assert [e.kind for e in turn.events] == ["event_reminded"]
    t3 = T2 + convo(("user", "从上海出发"), ("assistant", "好的，几号出发？"))
    model = ScriptedModel(reply("6 月 15 号，另外预算改成 2000 以内"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(p, t3, 3))
    assert "Since turn 2 (you have not said it yet)" in model.calls[0][-1]["content"]
    assert [e.kind for e in turn.events] == ["event_said"] and "(due turn 2)" in turn.events[0].detail


async def test_stop_accepted_once_everything_was_delivered():
    t = convo(
        ("user", "帮我订"),
        ("assistant", FLIGHTS),
        ("user", "酒店呢"),
        ("assistant", "推荐酒店：难波日航 ¥800/晚"),
    )
    model = ScriptedModel(reply("好的谢谢", "stop", "all delivered"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), t, 3))
    assert turn.stop == "goal_met" and turn.reason == "all delivered"


async def test_give_up_is_a_gave_up_stop():
    model = ScriptedModel(reply("算了", "give_up", "agent keeps ignoring me"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), T2, 2))
    assert turn.stop == "gave_up" and turn.message == "算了"


def test_spec_needs_a_model_name():
    with pytest.raises(ValueError, match="needs a model name, e.g. openai:gpt-4o-mini"):
        load_simulator("openai:")
    assert load_simulator("openai:qwen-plus").model == "qwen-plus"


async def test_against_the_local_openai_stub(monkeypatch, tmp_path):
    stub_mod = pytest.importorskip("tests.support.openai_stub")
    monkeypatch.setenv("USERSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with stub_mod.OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        stub.script(
            stub_mod.text(reply("As an AI assistant, I can help.")), stub_mod.text(reply("从上海出发"))
        )
        turn = await load_simulator("openai:stub-model").next_turn(view(persona(), T2, 2))
        assert turn.message == "从上海出发"
        first = stub.requests[0]
        # the agent's reply (as `user`), then this turn's note from the harness
        assert first["model"] == "stub-model" and [m["role"] for m in first["messages"][-2:]] == [
            "user",
            "system",
        ]
        assert "888" not in json.dumps(stub.requests, ensure_ascii=False)
        from usersim.llm.client import aclose_clients

        await aclose_clients()


def test_spec_options_and_their_errors(monkeypatch):
    monkeypatch.setenv("SIM_KEY", "sk-sim")
    sim = load_simulator(
        "openai:qwen-plus?temperature=0.2&attempts=5&base_url=http://h/v1&api_key_env=SIM_KEY"
    )
    assert (sim.model, sim.temperature, sim.max_attempts, sim.base_url, sim.api_key) == (
        "qwen-plus",
        0.2,
        5,
        "http://h/v1",
        "sk-sim",
    )
    with pytest.raises(
        ValueError, match="Unknown option 'temprature' in simulator SPEC .* Did you mean 'temperature'?"
    ):
        load_simulator("openai:m?temprature=1")
    with pytest.raises(ValueError, match="attempts and max_tokens must be integers"):
        load_simulator("openai:m?attempts=many")


async def test_sharded_reveal_gives_one_more_requirement_per_turn_and_limits_tokens():
    p = persona(goal={"description": "订机票、酒店和行程", "required": ["flights", "hotel", "itinerary"]})
    model = ScriptedModel(reply("我想订去大阪的机票"), reply("酒店也要"))
    sim = LLMSimulator("openai:m?reveal=sharded&max_tokens=300", complete=model)
    await sim.next_turn(view(p, [], 1, opening=None))
    first = model.calls[0][0]["content"]
    assert (
        "You want: 机票." in first
        and "do not stop yet" in first
        and "酒店" not in first.split("## What you know")[0]
    )
    await sim.next_turn(view(p, T2, 2))
    second = model.calls[1][0]["content"]
    assert "You want: 机票, 酒店." in second and "行程" not in second.split("## What you know")[0]
    with pytest.raises(ValueError, match="reveal full or sharded"):
        load_simulator("openai:m?reveal=all")


async def test_max_tokens_and_timeout_reach_the_call():
    seen = {}

    async def complete(**kw):
        seen.update(kw)
        return {"content": reply("上海")}, Usage(calls=1)

    await LLMSimulator("openai:m?timeout=20", complete=complete).next_turn(view(persona(), T2, 2))
    assert seen["max_tokens"] == 600 and seen["timeout"] == 20.0


async def test_json_cut_short_is_regenerated_not_sent_as_text():
    model = ScriptedModel('{"message": "从上海出发，两个', reply("从上海出发"))
    turn = await LLMSimulator("openai:m", complete=model).next_turn(view(persona(), T2, 2))
    assert turn.message == "从上海出发" and turn.events[0].detail.startswith("attempt 1: unparsable JSON")
