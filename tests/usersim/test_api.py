"""The Python API: usersim.run / arun -> RunResult, the same entry the CLI uses."""

from __future__ import annotations

import asyncio
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


def test_an_agent_that_waits_on_its_own_io_does_not_hold_up_the_others(tmp_path):
    # a user's async agent is not known to wait only on usersim's model client: while it waits, the
    # other conversations go on (B1-EI-01 runs twice, skills on and off, here both at once)
    spans = []

    async def slow_agent(messages, tools):
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(0.3)
        spans.append((start, loop.time()))
        return {"role": "assistant", "content": "好的"}

    usersim.run("B1-EI-01", agent=slow_agent, concurrency=2, out=tmp_path / "run")
    assert len(spans) >= 2
    assert max(s for s, _ in spans[:2]) < min(e for _, e in spans[:2])  # the first two calls overlap


def test_passed_is_the_cli_gate_with_one_strict_switch(tmp_path):
    # B1-EI-04 needs an LLM judge: without one it is unjudged, which keeps the default gate green
    r = usersim.run(["B1-EI-04", "B1-EI-01"], out=tmp_path / "run")
    assert r.counts == {"passed": 2, "unjudged": 2}
    assert r.passed and r.passed() and r.passed == True  # noqa: E712 (a property that also compares)
    assert not r.passed(strict=True)
    gate = r.gate(strict=True)
    assert (gate.exit_code, gate.pass_rate.text) == (1, "2/4 = 50.0%")
    assert r.gate().pass_rate.text == "2/2 = 100.0% (left out: 2 unjudged)"
    assert "pass rate 2/2 = 100.0% (left out: 2 unjudged): exit 0" in r.explain(transcript=False)
    # strict as the run's default rule (what the pytest plugin's --usersim-strict sets)
    s = usersim.run(["B1-EI-04"], out=tmp_path / "strict", strict=True)
    # B1-EI-04 alone judges nothing: not a pass under either rule, unless that is accepted
    assert not s.passed and not s.passed(strict=False) and s.passed(allow_unjudged=True)
    assert s.gate(strict=False).exit_code == 3
