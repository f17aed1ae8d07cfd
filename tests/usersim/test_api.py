"""The Python API: usersim.run / arun -> RunResult, the same entry the CLI uses."""

from __future__ import annotations

import json

import pytest

import usersim
from usersim.cases.loader import find_case


def good_agent(messages, tools):
    """Calls search_flights once with the user's request, then answers from its result."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": "为您找到以下航班：" + messages[-1]["content"][:200]}
    args = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "function": {"name": "search_flights", "arguments": json.dumps(args)}}],
    }


def lazy_agent(messages, tools):
    return {"role": "assistant", "content": "好的"}


def test_run_by_case_id_with_a_callable_agent_passes(tmp_path):
    r = usersim.run("B1-EI-01", agent=good_agent, out=tmp_path / "run")
    assert r.passed, r.explain()
    assert r.counts == {"passed": 2} and len(r.records) == 2
    assert r.report_path == tmp_path / "run" / "report.html" and r.report_path.is_file()
    assert r.summary["totals"]["passed"] == 2
    assert r.records[0].agent == "callable:good_agent"


def test_failing_agent_is_explained_with_verdict_reasons_and_transcript(tmp_path):
    r = usersim.run([find_case("B1-EI-01")], agent=lazy_agent, out=tmp_path / "run")
    assert not r.passed and r.counts == {"failed": 2}
    text = r.explain()
    assert "tool_called: fail — search_flights was never called" in text
    assert "assistant: 好的" in text


def test_unknown_option_and_bad_spec_are_clear(tmp_path):
    with pytest.raises(TypeError, match="unknown run option 'repeat'. Did you mean 'repeats'"):
        usersim.run("B1-EI-01", agent="reference", repeat=2, out=tmp_path / "a")
    with pytest.raises(ValueError, match="Did you mean 'reference'"):
        usersim.run("B1-EI-01", agent="refrence", out=tmp_path / "b")
    with pytest.raises(KeyError, match="Unknown case 'B1-EI-1'"):
        usersim.run("B1-EI-1", out=tmp_path / "c")


async def test_arun_inside_an_event_loop(tmp_path):
    with pytest.raises(RuntimeError, match="use `await usersim.arun"):
        usersim.run("B1-EI-01", out=tmp_path / "a")
    r = await usersim.arun("B1-EI-01", agent="reference", out=tmp_path / "b", repeats=2)
    assert r.passed and len(r.records) == 4


def _start_gaps(records) -> list[float]:
    from datetime import datetime

    starts = sorted(datetime.fromisoformat(r.started_at) for r in records)
    return [(b - a).total_seconds() for a, b in zip(starts, starts[1:])]


def test_concurrent_starts_are_paced_sequential_ones_are_not(tmp_path):
    # two at once (B1-EI-01 runs twice: skills on and off): the second starts start_interval_s after
    # the first (started_at is to the second, hence an interval over one second)
    r = usersim.run("B1-EI-01", agent="reference", concurrency=2, start_interval_s=1.05, out=tmp_path / "a")
    assert len(r.records) == 2 and _start_gaps(r.records) >= [1.0]
    # one at a time: nothing else runs when a conversation starts, so it never waits
    r = usersim.run(
        "B1-EI-01", agent="reference", repeats=2, concurrency=1, start_interval_s=10.0, out=tmp_path / "b"
    )
    assert len(r.records) == 4 and max(_start_gaps(r.records)) < 5.0
