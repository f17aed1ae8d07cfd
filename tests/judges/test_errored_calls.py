"""An errored call never satisfies tool_called (a write the environment refused did not happen)
unless the check says allow_error: true; the reason says what the tool answered."""

from __future__ import annotations

from tests.judges.helpers import bot, case, state, user
from usersim.core.messages import Message
from usersim.judges.checks import run_check

REFUSED = "Error: card K-3003 is already blocked"
SPEC = {"tool_called": {"tool": "search_flights", "args": {"origin": "K-3003"}}}


def _transcript(*results: tuple[str, bool]) -> list[Message]:
    t = [user("block my card")]
    for i, (text, is_error) in enumerate(results):
        t.append(bot("", ("search_flights", {"origin": "K-3003", "n": i})))
        t.append(
            Message(role="tool", name="search_flights", content=text, tool_call_id="c0", is_error=is_error)
        )
    t.append(bot("Done."))
    return t


def _state(t: list[Message], results: list[tuple[str, bool]], use_trace: bool = True):
    st = state(t, use_trace=use_trace)
    for event, (text, is_error) in zip(st.tool_trace, results, strict=False):
        event.result, event.is_error = text, is_error
    return st


async def _run(spec, results, use_trace=True):
    t = _transcript(*results)
    return await run_check(spec, transcript=t, case=case(checks=[spec]), state=_state(t, results, use_trace))


async def test_an_errored_call_fails_and_says_what_the_tool_answered():
    for use_trace in (True, False):  # the live trace, and a transcript re-scored without one
        v = await _run(SPEC, [(REFUSED, True)], use_trace)
        assert v.verdict == "fail", v.reason
        assert v.reason.startswith("search_flights was called with origin=K-3003, n=0 but the call errored: ")
        assert v.reason.endswith(REFUSED)
        assert v.evidence_turn is not None


async def test_allow_error_counts_the_attempt():
    spec = {"tool_called": {**SPEC["tool_called"], "allow_error": True}}
    v = await _run(spec, [(REFUSED, True)])
    assert v.verdict == "pass" and v.reason.startswith("search_flights called with origin=K-3003")


async def test_a_retry_that_succeeds_passes():
    v = await _run(SPEC, [(REFUSED, True), ('{"ok": true}', False)])
    assert v.verdict == "pass" and "n=1" in v.reason


async def test_min_calls_counts_only_successful_calls():
    spec = {"tool_called": {**SPEC["tool_called"], "min_calls": 2}}
    v = await _run(spec, [('{"ok": true}', False), (REFUSED, True)])
    assert v.verdict == "fail"
    assert "but the call errored" in v.reason and "(1 matching call(s) succeeded, 2 required)" in v.reason


async def test_an_errored_call_with_wrong_arguments_reports_the_arguments():
    spec = {"tool_called": {"tool": "search_flights", "args": {"origin": "K-9999"}}}
    v = await _run(spec, [(REFUSED, True)])
    assert v.verdict == "fail" and "origin=K-3003 (expected K-9999)" in v.reason
