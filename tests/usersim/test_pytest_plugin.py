"""The pytest plugin (entry point pytest11): the README example passes for a good agent and fails
for a bad one, with the verdict reasons in the failure report."""

from __future__ import annotations

# Each inner run is a subprocess (runpytest_subprocess), as a user's pytest is: an in-process run
# forgets the modules first imported inside it, and the worker's next tests then meet a second
# generation of usersim's classes and registries (a check "registered twice", a RunRecord that is
# not a RunRecord), depending on which test modules share the worker.

pytest_plugins = ["pytester"]

AGENTS = """
import json

def good_agent(messages, tools):
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": "为您找到以下航班：" + messages[-1]["content"][:200]}
    args = {"origin": "上海", "destination": "大阪", "departure_date": "2026-06-15", "passengers": 2}
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": "c1", "function": {"name": "search_flights", "arguments": json.dumps(args)}}]}

def lazy_agent(messages, tools):
    return {"role": "assistant", "content": "好的，没问题"}
"""

TESTS = """
from agents import good_agent, lazy_agent

def test_good(usersim):
    r = usersim.run("B1-EI-01", agent=good_agent)
    assert r.passed

def test_lazy(usersim):
    r = usersim.run("B1-EI-01", agent=lazy_agent)
    assert r.passed
"""


def test_fixture_passes_good_agent_and_explains_bad_one(pytester):
    pytester.makepyfile(agents=AGENTS, test_agents=TESTS)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "usersim run 1: verdicts and transcripts" in out
    assert "tool_called: fail — search_flights was never called" in out
    assert "assistant: 好的，没问题" in out


def test_plugin_is_registered_by_entry_point():
    from importlib.metadata import entry_points

    assert [e.value for e in entry_points(group="pytest11") if e.name == "usersim"] == [
        "usersim.pytest_plugin"
    ]


UNJUDGED = """
def test_unjudged(usersim):
    r = usersim.run(["B1-EI-04", "B1-EI-01"])   # EI-04 needs an LLM judge: unjudged without one
    assert r.counts == {"passed": 2, "unjudged": 2}
    assert r.passed
"""

NOTHING_JUDGED = """
def test_nothing_judged(usersim):
    r = usersim.run("B1-EI-04")   # every conversation unjudged: nothing was judged
    assert r.counts == {"unjudged": 2}
    assert not r.passed and r.passed(allow_unjudged=True)
    assert r.passed, r.explain(transcript=False)
"""


def test_a_run_that_judged_nothing_fails_the_test_with_the_reason(pytester):
    pytester.makepyfile(test_nothing_judged=NOTHING_JUDGED)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    res = pytester.runpytest_subprocess("-q")
    res.assert_outcomes(failed=1)
    assert "nothing was judged: 2 of 2 conversation(s) unjudged" in res.stdout.str()
    assert "--allow-unjudged" in res.stdout.str()


def test_strict_option_makes_unjudged_fail_as_the_cli_does(pytester):
    pytester.makepyfile(test_unjudged=UNJUDGED)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=1)
    strict = pytester.runpytest_subprocess("-q", "--usersim-strict")
    strict.assert_outcomes(failed=1)
    assert "2 of 4 conversation(s) failed, errored or were unjudged (--strict)" in strict.stdout.str()
    # the same switch in the ini file
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nusersim_strict = true\n")
    pytester.runpytest_subprocess("-q").assert_outcomes(failed=1)
