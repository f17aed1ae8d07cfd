import json

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


def result(i, verdict, reason="因为…", turn=1):
    return {"criterion_id": i, "criterion": "c", "verdict": verdict, "reason": reason, "evidence_turn": turn}


async def judge(j, c=CASE, t=T, **kw):
    return await j(transcript=t, case=c, state=state(t, **kw))


async def test_no_model_means_unjudged_never_pass():
    out = await judge(LLMRubricJudge(None))
    assert [(v.verdict, v.reason, v.criterion) for v in out] == [
        ("unjudged", NO_MODEL, CASE.judging.pass_criteria[0])
    ]


async def test_pass_verdict_with_reason_and_evidence():
    fake = Scripted({"results": [result(1, "pass", "问了城市和日期", 1)]})
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert [(v.verdict, v.reason, v.evidence_turn) for v in out] == [("pass", "问了城市和日期", 1)]
    prompt = fake.calls[0][0]["content"]
    assert (
        "1. 询问了具体目的地城市和日期窗口" in prompt
        and "- 自行假设目的地" in prompt
        and "[1] ASSISTANT:" in prompt
    )


async def test_malformed_output_is_repaired():
    fake = Scripted(
        "Sure! The verdict is pass.", "```json\n" + json.dumps({"results": [result(1, "fail")]}) + "\n```"
    )
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


async def test_partial_output_asks_for_the_missing_then_marks_error():
    c = case(methods=("llm_judge",), rubric=["criterion one", "criterion two"])
    fake = Scripted(
        {"results": [result(1, "pass")]}, {"results": [result(1, "pass")]}, {"results": [result(1, "pass")]}
    )
    out = await judge(LLMRubricJudge("openai:judge-m", fake), c)
    assert [v.verdict for v in out] == ["pass", "error"]
    assert out[1].reason == "judge model openai:judge-m gave no verdict for this criterion after repair"
    assert "results missing for criterion id(s) [2]" in fake.calls[1][-1]["content"]
    fake = Scripted(
        {"results": [result(1, "pass")]},
        {"results": [result(1, "pass"), result(2, "inconclusive", "看不出")]},
    )
    out = await judge(LLMRubricJudge("openai:judge-m", fake), c)
    assert [(v.verdict, v.reason) for v in out] == [("pass", "因为…"), ("inconclusive", "看不出")]


async def test_call_failure_is_an_error_verdict():
    fake = Scripted(LLMCallError("judge model 'm' at http://x", 500, "boom"))
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert out[0].verdict == "error" and out[0].reason.startswith("judge model openai:judge-m call failed:")


C1 = case(
    methods=("llm_judge",),
    dimension="C1",
    pass_criteria=["触发了 flight-selection"],
    skills={"skill_enabled": True, "active_skills": ["flight-selection"]},
)


async def test_c1_rubric_scores_zero_to_five():
    rubric = {
        "trigger": 1,
        "process": 2,
        "constraints": 1,
        "output_contract": 0,
        "anti_pattern": 0,
        "reason": "缺搜索范围说明",
    }
    fake = Scripted({"results": [result(1, "pass")]}, rubric)
    out = await judge(LLMRubricJudge("openai:judge-m", fake), C1)
    c1 = out[-1]
    assert c1.criterion == C1_CRITERION and c1.verdict == "pass" and c1.score == 0.8
    assert c1.reason.startswith(
        "C1 rubric 4/5 (trigger 1/1, process 2/2, constraints 1/1, output contract 0/1, anti-pattern 0)"
    )
    low = dict(rubric, process=1, anti_pattern=-1)
    out = await judge(LLMRubricJudge("openai:judge-m", Scripted({"results": [result(1, "pass")]}, low)), C1)
    assert out[-1].verdict == "fail" and out[-1].score == 0.4
    out = await judge(LLMRubricJudge(None), C1)
    assert [v.criterion for v in out] == ["触发了 flight-selection", C1_CRITERION]
    assert {v.verdict for v in out} == {"unjudged"}


async def test_c1_rubric_not_used_for_group_a():
    fake = Scripted({"results": [result(1, "pass")]})
    out = await judge(LLMRubricJudge("openai:judge-m", fake), C1, variant={"group": "A"})
    assert [v.criterion for v in out] == ["触发了 flight-selection"]


async def test_judge_over_real_http(openai_stub):  # noqa: F811
    openai_stub.script(
        text(json.dumps({"results": [result(1, "pass", "问了城市和日期", 1)]}, ensure_ascii=False))
    )
    out = await judge(LLMRubricJudge("openai:stub-judge"))
    assert [(v.verdict, v.reason) for v in out] == [("pass", "问了城市和日期")]
    body = openai_stub.requests[0]
    assert body["model"] == "stub-judge" and body["response_format"] == {"type": "json_object"}


async def test_out_of_range_evidence_turn_is_dropped():
    fake = Scripted({"results": [result(1, "pass", "ok", 42)]})
    out = await judge(LLMRubricJudge("openai:judge-m", fake))
    assert out[0].verdict == "pass" and out[0].evidence_turn is None


async def test_usage_is_counted_over_http(openai_stub):  # noqa: F811
    openai_stub.script(
        text(json.dumps({"results": [result(1, "fail")]}), prompt_tokens=120, completion_tokens=30)
    )
    j = LLMRubricJudge("openai:stub-judge")
    await judge(j)
    assert (j.usage.calls, j.usage.prompt_tokens, j.usage.completion_tokens) == (1, 120, 30)


def test_skill_text_found_by_folder_or_frontmatter(tmp_path, monkeypatch):
    from usersim import sandbox
    from usersim.judges import llm_rubric

    skills = tmp_path / "skills"
    (skills / "flight-selection").mkdir(parents=True)
    (skills / "flight-selection" / "SKILL.md").write_text(
        "---\nname: flight-selection\n---\n# 机票", encoding="utf-8"
    )
    (skills / "other.md").write_text(
        "---\nname: itinerary-planning\ndescription: x\n---\n# 行程", encoding="utf-8"
    )
    monkeypatch.setattr(sandbox, "__file__", str(tmp_path / "__init__.py"))
    assert llm_rubric._skill_text("flight-selection").endswith("# 机票")
    assert llm_rubric._skill_text("itinerary-planning").endswith("# 行程")
    assert llm_rubric._skill_text("nope") == "(skill nope: specification not available)"
