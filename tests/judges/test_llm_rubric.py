import json
from unittest.mock import ANY

from tests.judges.helpers import bot, case, state, user
from tests.support.openai_stub import openai_stub, text  # noqa: F401  (fixture)
from usersim.judges.llm_rubric import C1_CRITERION, NO_MODEL, LLMRubricJudge
from usersim.llm.client import LLMCallError

T = [user("帮我看看暑假去东南亚的机票"), bot("请问您想去东南亚哪个城市？打算哪天出发？")]
CASE = case(
    methods=("llm_judge",),
    pass_criteria=["询问了具体目的地城市和日期窗口，未盲目调用 search_flights"],
    fail_criteria=["自行假设目的地（如曼谷）开始搜索"],
    expected_behavior=["应该先收集信息"],
)


class Scripted:
    """A scripted `complete`: replies in order, records the conversations it was sent."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    async def __call__(self, messages):
        self.calls.append(messages)
        item = self.replies.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)


def result(i, verdict, reason="因为…", turn=1, quote=""):
    ev = [] if turn is None else [{"turn": turn, "quote": quote}]
    return {"criterion_id": i, "evidence": ev, "reasoning": reason, "verdict": verdict}


def both(v1, v2, **kw):
    """Answers for CASE's two criteria (the pass criterion and the fail criterion as a failure event)."""
    return {"results": [result(1, v1, **kw), result(2, v2, **kw)]}


async def judge(j, c=CASE, t=T, **kw):
    return await j(transcript=t, case=c, state=state(t, **kw))


async def test_no_model_means_unjudged_never_pass():
    out = await judge(LLMRubricJudge(None))
    assert [(v.verdict, v.reason, v.criterion) for v in out] == [
        ("unjudged", NO_MODEL, CASE.judging.pass_criteria[0]),
        ("unjudged", NO_MODEL, CASE.judging.fail_criteria[0]),
    ]


async def test_pass_verdict_with_reason_and_evidence():
    fake = Scripted(both("pass", "pass", reason="问了城市和日期", quote="请问您想去东南亚哪个城市"))
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert [(v.verdict, v.reason, v.evidence_turn) for v in out] == [("pass", "问了城市和日期", 1)] * 2
    assert out[0].details["evidence"] == [
        {"turn": 1, "quote": "请问您想去东南亚哪个城市", "quote_found": True}
    ]
    prompt = fake.calls[0][0]["content"]
    # polarity: the pass criterion is a requirement, the fail criterion a failure event
    assert "1. [REQUIREMENT — must hold" in prompt and "询问了具体目的地城市和日期窗口" in prompt
    assert "2. [FAILURE EVENT — must NOT happen: verdict pass if it did not happen" in prompt
    assert "自行假设目的地" in prompt and "[1] ASSISTANT:" in prompt
    assert [v.details["polarity"] for v in out] == ["requirement", "failure"]


async def test_malformed_output_is_repaired():
    fake = Scripted("Sure! The verdict is pass.", "```json\n" + json.dumps(both("fail", "pass")) + "\n```")
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert out[0].verdict == "fail"
    repair = fake.calls[1][-1]["content"]
    assert "could not be used: the reply contains no JSON object" in repair


async def test_persistently_malformed_output_is_an_error_naming_the_model():
    fake = Scripted("nope", '{"results": [{"criterion_id": 1, "verdict": "maybe"}]}', "{bad json")
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert out[0].verdict == "error"
    assert out[0].reason.startswith(
        "judge model openai:judge-m returned malformed output 3 times; last problem: "
    )


async def test_partial_output_asks_for_the_missing_once_then_marks_error():
    c = case(methods=("llm_judge",), rubric=["criterion one", "criterion two"])
    fake = Scripted({"results": [result(1, "pass")]}, {"results": [result(1, "pass")]})
    out = await judge(LLMRubricJudge("openai:judge-m", fake), c)
    assert [v.verdict for v in out] == ["pass", "error"]
    assert out[1].reason == "judge model openai:judge-m gave no verdict for this criterion after repair"
    assert "results missing for criterion id(s) [2]" in fake.calls[1][-1]["content"]
    assert len(fake.calls) == 2  # one repair, then error
    fake = Scripted(
        {"results": [result(1, "pass")]},
        {"results": [result(1, "pass"), result(2, "inconclusive", "看不出")]},
    )
    out = await judge(LLMRubricJudge("openai:judge-m", fake), c)
    assert [(v.verdict, v.reason) for v in out] == [("pass", "因为…"), ("inconclusive", "看不出")]


async def test_call_failure_is_an_error_verdict():
    fake = Scripted(LLMCallError("judge model 'm' at http://x", 500, "boom"), LLMCallError("x", 500, "boom"))
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert out[0].verdict == "error" and out[0].reason.startswith("judge model openai:judge-m call failed:")


C1 = case(
    methods=("llm_judge",),
    dimension="C1",
    pass_criteria=["触发了 flight-selection"],
    skills={"skill_enabled": True, "active_skills": ["flight-selection"]},
)


def c1_answer(**scores):
    dims = {"trigger": 1, "process": 2, "constraints": 1, "output_contract": 0, "anti_pattern": 0, **scores}
    return {
        "results": [
            {
                "criterion_id": d,
                "evidence": [{"turn": 1, "quote": "请问"}],
                "reasoning": f"{d} 理由",
                "score": v,
            }
            for d, v in dims.items()
        ]
    }


async def test_c1_rubric_reports_zero_to_five_and_never_decides():
    fake = Scripted({"results": [result(1, "pass")]}, c1_answer())
    out = await judge(LLMRubricJudge("openai:judge-m", fake), C1)
    crit, c1 = out
    assert crit.verdict == "pass" and crit.counts_toward_status  # the case's own criterion decides
    assert c1.criterion == C1_CRITERION and c1.score == 0.8 and c1.details["total"] == 4
    assert not c1.counts_toward_status and c1.verdict == "inconclusive"  # no invented pass line
    assert c1.reason.startswith(
        "C1 rubric 4/5 (trigger 1/1, process 2/2, constraints 1/1, output_contract 0/1, anti_pattern 0/-1)"
    )
    low = c1_answer(process=1, anti_pattern=-1)
    fake = Scripted({"results": [result(1, "pass")]}, low)
    out = await judge(LLMRubricJudge("openai:judge-m", fake), C1)
    assert out[-1].details["total"] == 2 and out[-1].score == 0.4 and not out[-1].counts_toward_status
    prompt = fake.calls[1][0]["content"]
    assert prompt.index('"evidence"') < prompt.index('"reasoning"') < prompt.index('"score"')
    out = await judge(LLMRubricJudge(None), C1)
    assert [v.criterion for v in out] == ["触发了 flight-selection", C1_CRITERION]
    assert {v.verdict for v in out} == {"unjudged"}


async def test_c1_duplicated_dimension_is_repaired_once_then_error():
    dup = c1_answer()
    dup["results"].append({**dup["results"][0], "score": 0})
    fake = Scripted({"results": [result(1, "pass")]}, dup, dup)
    out = await judge(LLMRubricJudge("openai:judge-m", fake), C1)
    assert out[-1].verdict == "error" and "more than once" in out[-1].reason
    assert "total" not in (out[-1].details or {})


async def test_c1_rubric_not_used_for_group_a():
    fake = Scripted({"results": [result(1, "pass")]})
    out = await judge(LLMRubricJudge("openai:judge-m", fake), C1, variant={"group": "A"})
    assert [v.criterion for v in out] == ["触发了 flight-selection"]


async def test_judge_over_real_http(openai_stub):  # noqa: F811
    openai_stub.script(text(json.dumps(both("pass", "pass", reason="问了城市和日期"), ensure_ascii=False)))
    out = await judge(LLMRubricJudge("openai:stub-judge?context=16k&max_tokens=900"))
    assert [(v.verdict, v.reason) for v in out] == [("pass", "问了城市和日期")] * 2
    body = openai_stub.requests[0]
    # spec options configure usersim and never reach the endpoint inside the model name
    assert body["model"] == "stub-judge" and body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 900 and body["temperature"] == 0
    # the prompt fits the room by its bytes: sent whole, no tokenizer loaded to count it
    room = int(16000 * 0.96) - 900
    assert out[0].details["transcript"] == {"counted": False, "room_tokens": room, "bytes": ANY}
    assert len(body["messages"][-1]["content"].encode()) <= room


async def test_nonexistent_evidence_turn_is_repaired_once_then_error():
    fake = Scripted(both("pass", "pass", turn=42), both("pass", "pass", turn=42))
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert [v.verdict for v in out] == ["error", "error"]
    assert "cites turn(s) [42] that do not exist" in out[0].reason
    assert (
        "evidence cites turns that do not exist in the transcript (valid: 0..1)"
        in fake.calls[1][-1]["content"]
    )
    fake = Scripted(both("pass", "pass", turn=42), both("pass", "fail", turn=1))
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert [(v.verdict, v.evidence_turn) for v in out] == [("pass", 1), ("fail", 1)]


async def test_duplicate_criterion_id_is_an_error_never_last_wins():
    dup = {"results": [result(1, "pass"), result(2, "pass"), result(2, "fail")]}
    fake = Scripted(dup, dup)
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert [v.verdict for v in out] == ["pass", "error"]
    assert "answered this criterion 2 times (pass, fail)" in out[1].reason
    assert "criterion id(s) [2] answered more than once" in fake.calls[1][-1]["content"]


async def test_extra_criterion_id_after_repair_is_an_error():
    extra = {"results": [result(1, "pass"), result(2, "pass"), result(3, "pass")]}
    out = await judge(LLMRubricJudge("openai:judge-m", Scripted(extra, extra)))
    assert [v.verdict for v in out] == ["error", "error"] and "[3] that do not exist" in out[0].reason


async def test_samples_majority_and_split():
    fake = Scripted(both("pass", "pass"), both("fail", "pass"), both("pass", "pass"))
    out = await judge(LLMRubricJudge("openai:judge-m", fake, samples=3))
    assert out[0].verdict == "pass" and out[0].details["votes"] == {"pass": 2, "fail": 1}
    assert out[0].details["agreement"] == 0.6667 and "agreement 2/3" in out[0].reason
    assert out[1].details["agreement"] == 1.0
    fake = Scripted(both("pass", "pass"), both("fail", "pass"))
    out = await judge(LLMRubricJudge("openai:judge-m", fake, samples=2))
    assert out[0].verdict == "inconclusive" and out[0].reason.startswith("no majority among 2 judge votes")


async def test_ensemble_reports_per_model_agreement():
    fake = Scripted(both("pass", "pass"), both("pass", "fail"))
    out = await judge(LLMRubricJudge("openai:m1,openai:m2", fake))
    assert out[0].verdict == "pass" and out[1].verdict == "inconclusive"
    assert out[1].details["per_model"] == {
        "openai:m1": {"majority": "pass", "agreement": 1.0, "votes": {"pass": 1}},
        "openai:m2": {"majority": "fail", "agreement": 1.0, "votes": {"fail": 1}},
    }


async def test_usage_is_counted_over_http(openai_stub):  # noqa: F811
    openai_stub.script(text(json.dumps(both("fail", "pass")), prompt_tokens=120, completion_tokens=30))
    j = LLMRubricJudge("openai:stub-judge")
    await judge(j)
    assert (j.usage.calls, j.usage.prompt_tokens, j.usage.completion_tokens) == (1, 120, 30)


def test_skill_text_found_by_folder_or_frontmatter(tmp_path, monkeypatch):
    from usersim.judges import llm_rubric

    skills = tmp_path / "skills"
    (skills / "flight-selection").mkdir(parents=True)
    (skills / "flight-selection" / "SKILL.md").write_text(
        "---\nname: flight-selection\n---\n# 机票", encoding="utf-8"
    )
    (skills / "other.md").write_text(
        "---\nname: itinerary-planning\ndescription: x\n---\n# 行程", encoding="utf-8"
    )
    monkeypatch.setattr(llm_rubric, "SKILLS_DIR", skills)
    assert llm_rubric._skill_text("flight-selection").endswith("# 机票")
    assert llm_rubric._skill_text("itinerary-planning").endswith("# 行程")
    assert llm_rubric._skill_text("nope") == "(skill nope: specification not available)"
