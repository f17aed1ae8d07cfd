"""An LLM judge's evidence quote must occur in the transcript (whitespace normalised): a false one
gets one repair request naming it, then the criterion's verdict is `error` (issue #22)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.judges.helpers import bot, case, state, user
from tests.judges.test_llm_rubric import C1, Scripted, c1_answer, result
from usersim.judges.llm_rubric import LLMRubricJudge, quote_found, transcript_corpus

T = [
    user("帮我看看暑假去东南亚的机票"),
    bot("请问您想去东南亚哪个城市？\n打算哪天出发？", ("search_flights", {"origin": "上海"})),
]
CASE = case(methods=("llm_judge",), rubric=["问了目的地", "没有自行假设目的地"])
QUOTES = yaml.safe_load((Path(__file__).parent / "data" / "evidence_quotes.yaml").read_text(encoding="utf-8"))
TRUE, FALSE = "请问您想去东南亚哪个城市", "我已为您搜索曼谷的航班"


@pytest.mark.parametrize("row", QUOTES, ids=[r["quote"] for r in QUOTES])
def test_quote_lookup(row):
    assert quote_found(row["quote"], transcript_corpus(T)) is row["found"], row["why"]


async def _judge(fake, c=CASE):
    return await LLMRubricJudge("openai:judge-m", fake)(transcript=T, case=c, state=state(T))


async def test_true_quotes_are_taken_without_a_repair():
    fake = Scripted(
        {"results": [result(1, "pass", quote=TRUE), result(2, "pass", quote="请问您想去 东南亚")]}
    )
    out = await _judge(fake)
    assert [v.verdict for v in out] == ["pass", "pass"] and len(fake.calls) == 1


async def test_a_false_quote_is_repaired_once_naming_it():
    fake = Scripted(
        {"results": [result(1, "pass", quote=TRUE), result(2, "fail", quote=FALSE)]},
        {"results": [result(1, "pass", quote=TRUE), result(2, "pass", reason="没有搜索", quote=TRUE)]},
    )
    out = await _judge(fake)
    assert [(v.verdict, v.reason) for v in out] == [("pass", "因为…"), ("pass", "没有搜索")]
    repair = fake.calls[1][-1]["content"]
    assert (
        f"evidence quote not found in transcript (quote the messages word for word, or leave the quote empty): criterion 2: '{FALSE}'"
        in repair
    )
    assert TRUE not in repair.split("could not be used:")[1]  # only the false quote is named
    assert len(fake.calls) == 2


async def test_a_false_quote_after_the_repair_is_an_error():
    answer = {"results": [result(1, "pass", quote=TRUE), result(2, "fail", quote=FALSE)]}
    fake = Scripted(answer, answer)
    out = await _judge(fake)
    assert out[0].verdict == "pass"
    assert out[1].verdict == "error"
    assert (
        out[1].reason
        == f"evidence quote not found in transcript: '{FALSE}' (judge model openai:judge-m, after repair)"
    )
    assert len(fake.calls) == 2  # one repair, never a third ask


async def test_an_empty_quote_is_not_checked():
    fake = Scripted({"results": [result(1, "pass"), result(2, "pass", turn=None)]})
    assert [v.verdict for v in await _judge(fake)] == ["pass", "pass"] and len(fake.calls) == 1


async def test_c1_false_quote_is_repaired_then_an_error():
    bad = c1_answer()
    bad["results"][0]["evidence"] = [{"turn": 1, "quote": "已加载 flight-selection 技能"}]
    fake = Scripted({"results": [result(1, "pass", quote=TRUE)]}, bad, bad)
    crit, c1 = await _judge(fake, C1)
    assert crit.verdict == "pass"
    assert c1.verdict == "error" and "evidence quote not found in transcript" in c1.reason
    assert "已加载 flight-selection 技能" in c1.reason
