"""The run plan: specs parsed once — judge models as a list, the API's callable agent held by the
plan (no process-wide table), a case's persona resolved once with a fresh copy per conversation."""

from __future__ import annotations

import pytest

import usersim
from usersim.adapters import python_fn
from usersim.cases.loader import find_case
from usersim.graphs.plan import RunPlan
from usersim.graphs.runner import RunConfig, SpecError, check_specs, trial_plan


def make_agent(word: str):
    def agent(messages, tools):  # every agent made here has the same __qualname__
        return {"role": "assistant", "content": word}

    return agent


def test_judge_models_are_a_list_and_the_config_keeps_every_one():
    plan = trial_plan(RunConfig(judge_model="openai:a?context=32k, openai:b", judge_samples=3))
    assert plan.judge_models == ["openai:a?context=32k", "openai:b"]
    assert plan.judge_config.judge_model == "openai:a?context=32k,openai:b"
    assert plan.judge_config.judge_samples == 3


def test_a_bad_judge_spec_is_refused_once_before_any_conversation():
    with pytest.raises(SpecError, match="context"):
        check_specs([find_case("B1-EI-01")], RunConfig(judge_model="openai:a?context=huge"))


def test_a_callable_agent_is_held_by_the_plan_not_a_global_table(tmp_path, monkeypatch):
    monkeypatch.setattr(python_fn, "_CALLABLES", {})
    first = usersim.run("B1-EI-01", agent=make_agent("第一个"), out=tmp_path / "a")
    second = usersim.run("B1-EI-01", agent=make_agent("第二个"), out=tmp_path / "b")
    # two callables with one qualname each answer for themselves
    assert all("第一个" in r.transcript[-1].content for r in first.records)
    assert all("第二个" in r.transcript[-1].content for r in second.records)
    assert first.records[0].agent == "callable:make_agent.<locals>.agent"
    assert python_fn._CALLABLES == {}


def test_a_persona_is_resolved_once_per_case_and_each_conversation_gets_its_own_copy(monkeypatch):
    from usersim.personas import loader

    case = find_case("C2-TD-04")
    calls = []
    real = loader.resolve_persona
    monkeypatch.setattr(loader, "resolve_persona", lambda c: calls.append(c.id) or real(c))
    plan = RunPlan()
    one, two = plan.persona(case), plan.persona(case)
    assert calls == ["C2-TD-04"]
    assert one == two and one is not two
    one.goal.description = "changed by an event"
    assert plan.persona(case).goal.description != "changed by an event"


def test_a_record_starts_to_the_millisecond_and_its_timeline_counts_from_there(tmp_path):
    import re
    from datetime import datetime

    result = usersim.run("B1-EI-01", agent=make_agent("好的"), out=tmp_path)
    for record in result.records:
        # an ISO time datetime.fromisoformat reads, with milliseconds (the bench's thirds time ends with it)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", record.started_at)
        assert datetime.fromisoformat(record.started_at).microsecond % 1000 == 0
        assert record.timeline, "the conversation's steps are timed"
        # offsets from started_at as written: none before it, none after the conversation's end
        assert all(
            0 <= s.start_s and s.start_s + s.duration_s <= record.duration_s + 0.01 for s in record.timeline
        )
    meta = result.summary["meta"]
    assert re.fullmatch(r".*T\d\d:\d\d:\d\d\.\d{3}\+00:00", meta["started_at"])
