"""Issue 17 acceptance through the CLI (in process) with the scripted judge server over real HTTP:
judge samples with majority and agreement, inconclusive on a split, cached samples per index,
duplicate criterion ids as errors, whole tool results in the judge prompt, the evidence budget,
and the evidence -> reasoning -> verdict order in every prompt."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from tests.support.cli import usersim
from tests.support.openai_stub import OpenAIStub
from usersim.cases.tokens import count_tokens

CASE_YAML = """\
id: T-JUDGE-01
dimension: B1
title: 判定样本
mode: static
input:
  message: 帮我订机票
context:
  current_date: "2026-04-07"
judging:
  rubric:
    - 回复复述了用户的请求
  scoring:
    methods: [llm_judge]
"""
ECHO = "python:tests.integration.toy_agents:echo_agent"


def records(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def judge_answer(body: dict, verdict: str, *, dup: bool = False) -> dict:
    """An answer for every criterion listed in the rubric prompt, citing the last message."""
    text = body["messages"][0]["content"]
    ids = [int(i) for i in re.findall(r"^(\d+)\. \[(?:REQUIREMENT|FAILURE EVENT)", text, re.MULTILINE)]
    last = max(int(i) for i in re.findall(r"^\[(\d+)\]", text, re.MULTILINE))
    results = [
        {
            "criterion_id": i,
            "evidence": [{"turn": last, "quote": "收到"}],
            "reasoning": "复述了",
            "verdict": verdict,
        }
        for i in ids
    ]
    if dup:
        results.append({**results[0], "verdict": "fail" if verdict == "pass" else "pass"})
    return {"content": json.dumps({"results": results}, ensure_ascii=False)}


class Alternating:
    """A judge that answers identical input pass, fail, pass, fail ... (a flipping judge)."""

    def __init__(self, *, dup: bool = False) -> None:
        self.n = 0
        self.dup = dup
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> dict:
        with self.lock:
            verdict = "pass" if self.n % 2 == 0 else "fail"
            self.n += 1
            self.prompts.append(body["messages"][0]["content"])
        return judge_answer(body, verdict, dup=self.dup)


@pytest.fixture
def case_dir(tmp_path) -> Path:
    d = tmp_path / "cases"
    d.mkdir()
    (d / "T-JUDGE-01.yaml").write_text(CASE_YAML, encoding="utf-8")
    return d


@pytest.fixture
def judge_env(monkeypatch):
    def start(responder) -> OpenAIStub:
        stub = OpenAIStub(responder=responder).start()
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stub-key-123456")
        monkeypatch.setenv("USERSIM_LLM_BACKOFF_S", "0.01")
        started.append(stub)
        return stub

    started: list[OpenAIStub] = []
    yield start
    for s in started:
        s.stop()


def run(case_dir: Path, out: Path, *extra: str, check: bool = False):
    return usersim(
        "run",
        str(case_dir),
        "--agent",
        ECHO,
        "--out",
        str(out),
        "--no-progress",
        "--concurrency",
        "1",
        *extra,
        check=check,
    )


def test_flipping_judge_three_samples_majority_with_agreement_and_cached_per_index(
    case_dir, tmp_path, judge_env
):
    judge = Alternating()
    stub = judge_env(judge)
    out = tmp_path / "k3"
    run(case_dir, out, "--judge-model", "openai:judge-m", "--judge-samples", "3", "--repeats", "2")
    recs = records(out)
    assert len(recs) == 2
    for r in recs:
        (v,) = [v for v in r["verdicts"] if v["judge"] == "llm_rubric"]
        # pass, fail, pass -> pass by majority, agreement 2/3 recorded beside the votes
        assert v["verdict"] == "pass" and r["status"] == "passed"
        assert v["details"]["votes"] == {"pass": 2, "fail": 1} and v["details"]["agreement"] == 0.6667
        assert v["details"]["samples"] == 3 and "agreement 2/3" in v["reason"]
    # three samples = three requests with distinct cache keys (not one answer reused three times);
    # the second repeat of the same transcript reuses the three cached samples per index
    assert len(stub.requests) == 3
    assert {b["temperature"] for b in stub.requests} == {0.7}
    # a rerun reuses every cached sample: no new judge call, same verdict
    run(case_dir, tmp_path / "again", "--judge-model", "openai:judge-m", "--judge-samples", "3")
    assert len(stub.requests) == 3
    (v,) = [v for v in records(tmp_path / "again")[0]["verdicts"] if v["judge"] == "llm_rubric"]
    assert v["details"]["votes"] == {"pass": 2, "fail": 1}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    stats = summary["judging"]
    assert stats["inconclusive"] == 0 and stats["criteria"][0]["mean_agreement"] == 0.6667


def test_split_samples_are_inconclusive(case_dir, tmp_path, judge_env):
    judge_env(Alternating())
    out = tmp_path / "k2"
    run(case_dir, out, "--judge-model", "openai:judge-m", "--judge-samples", "2")
    (r,) = records(out)
    (v,) = [v for v in r["verdicts"] if v["judge"] == "llm_rubric"]
    assert v["verdict"] == "inconclusive" and r["status"] == "unjudged"
    assert v["reason"].startswith("no majority among 2 judge votes")
    assert v["details"]["votes"] == {"pass": 1, "fail": 1}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["judging"]["inconclusive"] == 1


def test_ensemble_reports_per_model_agreement(case_dir, tmp_path, judge_env):
    def by_model(body):
        return judge_answer(body, "pass" if body["model"] == "m1" else "fail")

    stub = judge_env(by_model)
    out = tmp_path / "ens"
    run(
        case_dir,
        out,
        "--judge-model",
        "openai:m1",
        "--judge-model",
        "openai:m1b?context=16k",
        "--judge-model",
        "openai:m2",
    )
    (r,) = records(out)
    (v,) = [v for v in r["verdicts"] if v["judge"] == "llm_rubric"]
    assert sorted(b["model"] for b in stub.requests) == ["m1", "m1b", "m2"]
    assert v["verdict"] == "fail" and v["details"]["votes"] == {"fail": 2, "pass": 1}
    assert v["details"]["agreement"] == 0.6667
    assert v["details"]["per_model"]["openai:m1"] == {
        "majority": "pass",
        "agreement": 1.0,
        "votes": {"pass": 1},
    }


def test_duplicate_criterion_ids_are_an_error_never_the_last_one(case_dir, tmp_path, judge_env):
    judge = Alternating(dup=True)
    stub = judge_env(judge)
    out = tmp_path / "dup"
    run(case_dir, out, "--judge-model", "openai:judge-m")
    (r,) = records(out)
    (v,) = [v for v in r["verdicts"] if v["judge"] == "llm_rubric"]
    assert v["verdict"] == "error" and r["status"] == "error"
    assert "answered this criterion 2 times" in v["reason"]
    # one repair asked for the duplicate, then error
    assert len(stub.requests) == 2
    assert "answered more than once" in stub.requests[1]["messages"][-1]["content"]


# --- the evidence budget --------------------------------------------------------------------

SF03_REPLY = (
    "## 北京 → 曼谷 往返对比（2 人，各 1 件 24 寸托运行李）\n\n"
    + "".join(
        f"- 说明 {i}：春秋航空 9C8571/9C8572 票面便宜，但不含托运行李，每件 250 元。\n" for i in range(30)
    )
    + "\n| 方案 | 去程 | 回程 | 行李 | 每人总价 |\n|---|---|---|---|---|\n"
    "| 春秋 | 800 | 820 | 250×2 | 2120 |\n| 泰航 | 1200 | 1180 | 含 30kg | 2380 |\n\n"
    "## 结论\n算上行李费，春秋每人 2120 元，两人 4240 元，仍比泰航两人 4760 元便宜 520 元。CLOSING-SECTION-END"
)


def sf03_agent(messages: list[dict], tools: list[dict]) -> dict:
    """A C1-SF-03 style agent: one round-trip search, then a long comparison quoting the return leg."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": SF03_REPLY}
    args = {
        "origin": "北京",
        "destination": "曼谷",
        "departure_date": "2025-03-20",
        "return_date": "2025-03-26",
        "passengers": 2,
    }
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "search_flights", "arguments": json.dumps(args, ensure_ascii=False)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class RubricOrC1:
    """Answers rubric prompts with pass and the C1 0-5 prompt with scores."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, body: dict) -> dict:
        text = body["messages"][0]["content"]
        self.prompts.append(text)
        if "【评分维度】" in text:
            dims = {"trigger": 1, "process": 2, "constraints": 1, "output_contract": 1, "anti_pattern": 0}
            results = [
                {"criterion_id": d, "evidence": [], "reasoning": "ok", "score": s} for d, s in dims.items()
            ]
            return {"content": json.dumps({"results": results})}
        return judge_answer(body, "pass")


def test_sf03_return_leg_tool_result_and_long_reply_reach_the_judge_whole(tmp_path, judge_env):
    from usersim.cases.loader import find_case

    judge = RubricOrC1()
    judge_env(judge)
    out = tmp_path / "sf03"
    usersim(
        "run",
        "--id",
        "C1-SF-03",
        "--agent",
        "python:tests.judges.test_judge_trust_cli:sf03_agent",
        "--judge-model",
        "openai:judge-m",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    (r,) = records(out)
    injected = find_case("C1-SF-03").tool_intercepts[0].inject_tool_result.content
    assert len(injected) > 750 and len(SF03_REPLY) > 1500  # what the old per-message clipping cut
    rubric = next(p for p in judge.prompts if "Criteria to judge" in p)
    assert injected in rubric  # the return leg (9C8572 820, TG615 1180) whole
    assert SF03_REPLY.strip() in rubric  # the closing section too
    assert "shortened by usersim" not in rubric
    c1 = next(p for p in judge.prompts if "【评分维度】" in p)
    assert injected in c1
    v = next(v for v in r["verdicts"] if v["judge"] == "llm_rubric" and v["criterion"].startswith("C1 skill"))
    assert v["details"]["total"] == 5 and v["counts_toward_status"] is False


def test_32k_c5_transcript_fits_a_16k_judge_with_the_shortening_reported(tmp_path, judge_env):
    judge = RubricOrC1()
    stub = judge_env(judge)
    out = tmp_path / "c5"
    usersim(
        "run",
        "--id",
        "C5-LC-01",
        "--agent",
        ECHO,
        "--length",
        "32k",
        "--position",
        "beginning",
        "--judge-model",
        "openai:judge-m?context=16k",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    (r,) = records(out)
    assert r["history_len"] > 0
    sent = stub.requests[0]
    assert sent["model"] == "judge-m"  # the option never reaches the endpoint
    prompt = sent["messages"][0]["content"]
    assert count_tokens(prompt) <= 16_000 - 2_000  # room for the answer
    assert "shortened by usersim" in prompt and "to fit your context" in prompt
    v = next(v for v in r["verdicts"] if v["judge"] == "llm_rubric")
    info = v["details"]["transcript"]
    assert info["full_tokens"] > 30_000 and info["left_out_tokens"] > 14_000 and info["shortened"]
    assert all(s["kind"] == "history" for s in info["shortened"])  # filler goes first
    assert "judged on a shortened transcript" in v["reason"]
    assert r["transcript"][-1]["content"] in prompt  # the assistant's reply whole


def test_every_prompt_asks_evidence_then_reasoning_then_verdict():
    from usersim.judges.llm import PROMPTS

    for name, last in (("rubric", '"verdict"'), ("c1_rubric", '"score"'), ("pairwise", '"winner"')):
        text = (PROMPTS / f"{name}.md").read_text(encoding="utf-8")
        fmt = text[text.rindex("{") - 200 :] if name != "c1_rubric" else text[text.index('{"results"') :]
        assert fmt.index('"evidence"') < fmt.index('"reasoning"') < fmt.index(last), name
        assert "not the length" in text, name  # length-neutral instruction
    drift = (PROMPTS / "drift.md").read_text(encoding="utf-8")
    example = drift[drift.index('{"turns"') :]
    assert example.index('"reason"') < example.index('"anchoring"') and "not the length" in drift


def test_bad_judge_spec_option_is_refused_before_any_conversation(case_dir, tmp_path):
    res = run(case_dir, tmp_path / "bad", "--judge-model", "openai:j?contxt=16k")
    assert res.returncode != 0 and "Unknown option 'contxt' in judge spec 'openai:j?contxt=16k'" in res.stderr
    assert "Did you mean 'context'?" in res.stderr and not (tmp_path / "bad" / "results.jsonl").exists()
    res = run(case_dir, tmp_path / "bad2", "--judge-model", "openai:j?context=lots")
    assert "Option 'context=lots' in judge spec 'openai:j?context=lots' must be a token count" in res.stderr


def test_rescore_with_judge_samples(case_dir, tmp_path, judge_env):
    out = tmp_path / "first"
    run(case_dir, out)  # no judge model: the LLM criterion is unjudged
    (r,) = records(out)
    assert r["status"] == "unjudged"
    stub = judge_env(Alternating())
    usersim("rescore", str(out), "--judge-model", "openai:judge-m", "--judge-samples", "3")
    (r,) = records(out)
    (v,) = [v for v in r["verdicts"] if v["judge"] == "llm_rubric"]
    assert v["verdict"] == "pass" and v["details"]["votes"] == {"pass": 2, "fail": 1}
    assert r["status"] == "passed" and len(stub.requests) == 3
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["meta"]["judge_samples"] == 3 and summary["judging"]["samples"] == 3
