"""`usersim judges calibrate --swap` (pairwise position-swap consistency) and seed 003's 20%
rule-to-LLM re-check, through the CLI in process with the scripted judge server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.judges.test_judge_trust_cli import ECHO, judge_answer, records
from tests.support.cli import usersim
from tests.support.openai_stub import OpenAIStub


@pytest.fixture
def stub_with(monkeypatch):
    started: list[OpenAIStub] = []

    def start(responder) -> OpenAIStub:
        stub = OpenAIStub(responder=responder).start()
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stub-key-123456")
        started.append(stub)
        return stub

    yield start
    for s in started:
        s.stop()


def _record(rid: str, case_id: str, reply: str) -> dict:
    return {
        "id": rid,
        "case_id": case_id,
        "verdicts": [],
        "transcript": [
            {"role": "user", "content": "帮我订去大阪的机票"},
            {"role": "assistant", "content": reply},
        ],
    }


def _write(path: Path, recs: list[dict]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    return path


GOOD, WEAK = "请问您从哪里出发、哪天、几位？", "好的"


def _swap_dirs(tmp_path: Path) -> tuple[Path, Path]:
    a = _write(tmp_path / "a", [_record(f"C{i}|r0", f"C{i}", f"{GOOD}（{i}）") for i in range(3)])
    b = _write(tmp_path / "b", [_record(f"C{i}|r0", f"C{i}", f"{WEAK}（{i}）") for i in range(3)])
    return a, b


def test_calibrate_swap_reports_position_consistency(tmp_path, stub_with):
    def fair(body):  # prefers the reply that asks, wherever it is shown
        text = body["messages"][0]["content"]
        a = text[text.index("Reply A:") : text.index("Reply B:")]
        winner = "A" if GOOD in a else "B"
        return {"content": json.dumps({"evidence": [], "reasoning": "问了信息", "winner": winner})}

    stub = stub_with(fair)
    a, b = _swap_dirs(tmp_path)
    res = usersim(
        "judges", "calibrate", str(a), "--against", str(b), "--swap", "--judge-model", "openai:j", "--json"
    )
    swap = json.loads(res.stdout)[-1]
    assert swap["pairs"] == 3 and swap["consistency"] == 1.0 and swap["inconsistent"] == []
    assert len(stub.requests) == 6  # each pair in both orders
    shown = [b["messages"][0]["content"] for b in stub.requests[:2]]
    assert shown[0].index(GOOD) < shown[0].index(WEAK) and shown[1].index(WEAK) < shown[1].index(GOOD)
    assert "not the length" in shown[0]


def test_calibrate_swap_exposes_a_position_biased_judge(tmp_path, stub_with):
    stub_with(lambda body: {"content": json.dumps({"reasoning": "第一个更好", "winner": "A"})})
    a, b = _swap_dirs(tmp_path)
    res = usersim("judges", "calibrate", str(a), "--against", str(b), "--swap", "--judge-model", "openai:j")
    assert "3 pairs, position consistency 0.0%, position A named in 6 of 6 answers" in res.stdout
    assert "winner followed the position (position bias): C0: C0|r0 vs C0|r0" in res.stdout


def test_calibrate_swap_needs_a_judge_model(tmp_path):
    a, _ = _swap_dirs(tmp_path)
    res = usersim("judges", "calibrate", str(a), "--swap", check=False)
    assert res.returncode == 2 and "--swap needs --judge-model" in res.stderr


AUTO_CASE = """\
id: {id}
dimension: B1
title: 复述
mode: static
input:
  message: 帮我订机票
context:
  current_date: "2026-04-07"
judging:
  pass_criteria:
    - 回复复述了用户的请求
  scoring:
    methods: [auto]
  checks:
    - keywords: {{any: [收到]}}
"""


def test_twenty_percent_rule_to_llm_recheck_is_informational_and_reported(tmp_path, stub_with, monkeypatch):
    monkeypatch.setenv("USERSIM_NO_CACHE", "1")
    cases = tmp_path / "cases"
    cases.mkdir()
    for i in range(20):
        (cases / f"T-RC-{i:02d}.yaml").write_text(AUTO_CASE.format(id=f"T-RC-{i:02d}"), encoding="utf-8")
    asked: list[str] = []

    def judge(body):  # agrees with the rules except on the first conversation it is asked about
        text = body["messages"][0]["content"]
        asked.append(text)
        return judge_answer(body, "fail" if len(asked) == 1 else "pass")

    stub = stub_with(judge)
    out = tmp_path / "run"
    usersim(
        "run", str(cases), "--agent", ECHO, "--judge-model", "openai:j", "--out", str(out), "--no-progress"
    )
    recs = records(out)
    assert len(stub.requests) == 4  # exactly ceil(20% of 20) rule-passed conversations are re-checked
    sampled = set()
    for r in recs:
        llm = [v for v in r["verdicts"] if v["judge"] == "llm_rubric"]
        assert r["status"] == "passed"  # the rules decide; the re-check never does
        if llm:
            (v,) = llm
            assert not v["counts_toward_status"] and v["details"]["recheck"] is True
            assert v["reason"].startswith("rule-to-LLM re-check (seed 003, informational)")
            sampled.add(r["id"])
            if v["verdict"] == "fail":
                first = r["id"]
    assert len(sampled) == 4
    recheck = json.loads((out / "summary.json").read_text(encoding="utf-8"))["judging"]["recheck"]
    assert recheck["items"] == 4 and recheck["disagreements"] == [first]
    assert recheck["agreement"] == 0.75
    res = usersim("judges", "calibrate", str(out))
    assert (
        "rules vs LLM re-check (seed 003: 20% of rule-passed auto-only conversations): 4 items" in res.stdout
    )
    assert "Rule-to-LLM re-check" in (out / "report.html").read_text(encoding="utf-8")
