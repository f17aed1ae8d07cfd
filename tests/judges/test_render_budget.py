"""The evidence budget: transcripts rendered for a judge within a token budget, filler first,
relied-on tool results and the assistant's replies whole, every shortening marked and counted;
judge SPEC options."""

from __future__ import annotations

import json

import pytest

from tests.judges.helpers import bot, tool, user
from usersim.cases.tokens import count_tokens
from usersim.judges.llm import parse_judge_spec
from usersim.judges.render import relied_on, render_for_judge

FLIGHTS = json.dumps(
    {
        "outbound": [{"flight_no": "9C8571", "price_per_person": 800}],
        "return": [{"flight_no": "9C8572", "price_per_person": 820, "baggage_fee_per_piece": 250}],
        "notes": "含税 " * 200,
    },
    ensure_ascii=False,
)
NOISE = json.dumps({"weather": [{"day": d, "text": "多云转晴 " * 30} for d in range(10)]}, ensure_ascii=False)
REPLY = "回程 9C8572 每人 820 元，加行李 250 元。" + "详细说明。" * 300 + "结论：选春秋。END"


def transcript(filler_turns: int = 20):
    history = []
    for i in range(filler_turns):
        history += [user(f"闲聊 {i}：" + "今天天气不错，" * 80), bot(f"好的 {i}。" + "是的，" * 80)]
    live = [
        user("查北京到曼谷的往返机票"),
        bot("", ("search_flights", {"origin": "北京"})),
        tool("search_flights", FLIGHTS),
        bot("", ("get_weather", {"city": "曼谷"})),
        tool("get_weather", NOISE),
        bot(REPLY),
    ]
    return history + live, len(history)


def test_nothing_shortened_when_it_fits():
    t, h = transcript(2)
    r = render_for_judge(t, h, budget=100_000)
    assert r.shortened == [] and r.left_out == 0 and "shortened by usersim" not in r.text
    assert FLIGHTS in r.text and REPLY in r.text and r.notice() == ""
    assert "[0] USER (replayed history): 闲聊 0" in r.text


def test_filler_goes_first_relied_on_tool_result_and_replies_stay_whole():
    t, h = transcript(20)
    assert relied_on(t, h + 2) and not relied_on(t, h + 4)
    full = render_for_judge(t, h, budget=10**6).tokens
    budget = full // 2
    r = render_for_judge(t, h, budget=budget)
    assert r.tokens <= budget * 1.03
    kinds = {s.kind for s in r.shortened}
    assert kinds == {"history"}  # the filler alone was enough
    assert FLIGHTS in r.text and REPLY in r.text and NOISE in r.text
    assert r.left_out >= full - budget - 50
    assert r.notice().startswith(f"NOTE: to fit your context, {len(r.shortened)} message(s) were shortened")
    assert "…[shortened by usersim:" in r.text


def test_unrelied_tool_result_goes_before_user_and_relied_on_ones():
    t, h = transcript(0)
    full = render_for_judge(t, h, budget=10**6).tokens
    r = render_for_judge(t, h, budget=full - count_tokens(NOISE) // 2)
    assert {s.kind for s in r.shortened} == {"tool_result"}
    assert {s.turn for s in r.shortened if s.kind == "tool_result"} == {h + 4}  # the weather, not the flights
    assert FLIGHTS in r.text and REPLY in r.text


def test_last_resort_shortens_replies_but_stays_within_budget():
    t, h = transcript(5)
    r = render_for_judge(t, h, budget=600)
    assert r.tokens <= 600 * 1.1
    assert "assistant" in {s.kind for s in r.shortened}
    assert "END" in r.text  # the tail of a shortened reply is kept


@pytest.mark.parametrize(
    ("spec", "model", "context", "max_tokens"),
    [
        ("openai:gpt-4o-mini", "gpt-4o-mini", 32_000, None),
        ("openai:qwen2.5:7b?context=8k", "qwen2.5:7b", 8_000, None),
        ("openai:m?context=1.5k&max_tokens=500", "m", 1_500, 500),
        ("openai:m?context=16000", "m", 16_000, None),
    ],
)
def test_judge_spec_options_configure_usersim_only(spec, model, context, max_tokens):
    s = parse_judge_spec(spec)
    assert (s.model, s.context, s.max_tokens) == (model, context, max_tokens)


def test_bad_judge_spec_options_name_the_spec():
    with pytest.raises(ValueError, match=r"Unknown option 'ctx' in judge spec 'openai:m\?ctx=8k'"):
        parse_judge_spec("openai:m?ctx=8k")
    with pytest.raises(ValueError, match="must be a number"):
        parse_judge_spec("openai:m?temperature=hot")


def test_a_prompt_whose_bytes_fit_is_rendered_whole_without_counting(monkeypatch):
    """No token is shorter than a byte: a prompt whose UTF-8 bytes fit the room needs no tokenizer."""
    import usersim.judges.render as render

    t, h = transcript(2)
    counted = render_for_judge(t, h, budget=10**6)

    def no_count(text: str) -> int:
        raise AssertionError("counted a prompt that fits by its bytes")

    monkeypatch.setattr(render, "_tokens", no_count)
    build = lambda text, notice: f"judge this:\n{text}\n{notice}"  # noqa: E731
    need = len(build(counted.text, "").encode())
    prompt, whole = render.render_in_full(t, h, room=need, build=build)
    assert whole.text == counted.text and prompt == build(counted.text, "")
    assert whole.tokens is None and whole.shortened == [] and whole.left_out == 0
    assert whole.summary() == {"counted": False, "room_tokens": need, "bytes": len(counted.text.encode())}
    # a byte more than the room: it may not fit, so it is left to the counted rendering
    assert render.render_in_full(t, h, room=need - 1, build=build) is None
    # Chinese is three bytes a character: the bound is loose, never short
    assert count_tokens(counted.text) <= len(counted.text.encode())
