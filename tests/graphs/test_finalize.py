"""The graph's finalize node: errors charged to whoever caused them, blame from the order of the
evidence, and the same decision when rescore runs `finalize` on the stored state."""

from __future__ import annotations

from tests.graphs.fakes import (
    CrashingAgent,
    CrashingSandbox,
    FakeSandbox,
    OwnLoopAgent,
    RecordingAgent,
    ScriptedSimulator,
    VerdictJudge,
)
from tests.graphs.test_conversation import HISTORY, PERSONA, organic_case, static_case
from usersim.core.errors import CaseError
from usersim.core.verdict import Verdict
from usersim.graphs.context import RunContext
from usersim.graphs.conversation import graph
from usersim.graphs.finalize import finalize
from usersim.simulator.base import SimulatorTurn


async def run(case, agent, *, sandbox=None, judges=(), sim=None):
    ctx = RunContext(
        case=case,
        agent=agent,
        sandbox=sandbox or FakeSandbox({"web_search": '{"ok": 1}'}),
        judges=list(judges),
        simulator=sim,
        persona=PERSONA if sim else None,
    )
    return await graph.ainvoke({}, context=ctx, config={"recursion_limit": 100})


FAIL_AT_3 = Verdict(
    judge="final_state", verdict="fail", reason="card K-3002 blocked, not K-3001", evidence_turn=3
)


def fidelity(precision: str, turn: int) -> Verdict:
    return Verdict(
        judge="fidelity.swayed",
        verdict="fail",
        reason="accepted a card the persona never owned",
        counts_toward_status=False,
        details={
            "precision": precision,
            "turn": turn,
            "message_index": 2 * turn - 2,
            "kind": "swayed",
            "caused": "the agent acted on the acceptance",
        },
    )


async def test_an_agent_crash_is_an_error_blamed_on_the_agent_with_its_traceback():
    final = await run(static_case(), CrashingAgent(), judges=[VerdictJudge([FAIL_AT_3])])
    done = final["final"]
    assert (done.status, done.blame) == ("error", "agent")
    assert done.stop.reason == "agent_error" and "ZeroDivisionError: cannot parse" in done.stop.detail
    assert "in parse" in done.traceback and "ZeroDivisionError" in done.traceback


async def test_a_crashing_user_tool_is_a_case_error_not_a_tool_result_for_the_agent():
    agent = RecordingAgent(tool="lookup")
    final = await run(
        static_case(), agent, sandbox=CrashingSandbox("lookup"), judges=[VerdictJudge([FAIL_AT_3])]
    )
    done = final["final"]
    assert (done.status, done.blame, done.stop.reason) == ("error", "case", "case_error")
    assert "tools.py:lookup: KeyError: 'plan'" in done.stop.detail and "KeyError: 'plan'" in done.traceback
    assert not any(m.role == "tool" for m in final["messages"][len(HISTORY) :])  # never shown to the agent
    assert len(agent.inputs) == 1  # and the agent was not asked again


async def test_a_case_error_inside_the_agents_own_tool_loop_is_still_the_cases():
    final = await run(static_case(), OwnLoopAgent("lookup"), sandbox=CrashingSandbox("lookup"))
    done = final["final"]
    assert (done.status, done.blame, done.stop.reason) == ("error", "case", "case_error")
    assert "tools.py:lookup" in done.stop.detail


async def test_a_judge_raising_case_error_ends_as_case_error_and_the_other_verdicts_stay():
    broken = VerdictJudge(
        [], name="my_judge", error=CaseError("judges.py:my_judge: KeyError: 'x'", traceback="tb")
    )
    final = await run(static_case(), RecordingAgent(), judges=[VerdictJudge([FAIL_AT_3]), broken])
    done = final["final"]
    assert (done.status, done.blame, done.stop.reason) == ("error", "case", "case_error")
    assert done.traceback == "tb" and [v.judge for v in done.verdicts] == ["final_state"]


async def test_a_high_precision_violation_before_the_failure_makes_the_attempt_inconclusive():
    sim = ScriptedSimulator(
        [
            SimulatorTurn(message="我想暑假去日本玩"),
            SimulatorTurn(message="好的"),
            SimulatorTurn(stop="goal_met"),
        ]
    )
    final = await run(
        organic_case(), RecordingAgent(), sim=sim, judges=[VerdictJudge([FAIL_AT_3, fidelity("high", 1)])]
    )
    done = final["final"]
    assert (done.status, done.blame, done.simulator_suspect) == ("inconclusive", "simulator", True)
    assert "fidelity.swayed at user turn 1" in done.suspect_reason


async def test_an_advisory_violation_never_excuses_the_agent():
    sim = ScriptedSimulator(
        [
            SimulatorTurn(message="我想暑假去日本玩"),
            SimulatorTurn(message="好的"),
            SimulatorTurn(stop="goal_met"),
        ]
    )
    final = await run(
        organic_case(), RecordingAgent(), sim=sim, judges=[VerdictJudge([FAIL_AT_3, fidelity("advisory", 1)])]
    )
    done = final["final"]
    assert (done.status, done.blame, done.simulator_suspect) == ("failed", "agent", False)


async def test_a_violation_after_the_failing_evidence_does_not_excuse_it():
    sim = ScriptedSimulator(
        [
            SimulatorTurn(message="我想暑假去日本玩"),
            SimulatorTurn(message="好的"),
            SimulatorTurn(stop="goal_met"),
        ]
    )
    early = FAIL_AT_3.model_copy(update={"evidence_turn": 1})  # the agent's reply in user turn 1
    final = await run(
        organic_case(), RecordingAgent(), sim=sim, judges=[VerdictJudge([early, fidelity("high", 2)])]
    )
    assert (final["final"].status, final["final"].blame) == ("failed", "agent")


async def test_finalize_on_the_stored_state_decides_as_the_node_did():
    sim = ScriptedSimulator(
        [
            SimulatorTurn(message="我想暑假去日本玩"),
            SimulatorTurn(message="好的"),
            SimulatorTurn(stop="goal_met"),
        ]
    )
    final = await run(
        organic_case(), RecordingAgent(), sim=sim, judges=[VerdictJudge([FAIL_AT_3, fidelity("high", 2)])]
    )
    again = finalize({k: v for k, v in final.items() if k != "final"}, persona=PERSONA)
    assert again == final["final"]


async def test_a_schema_2_record_stays_readable_and_rescore_keeps_its_outage_an_outage(tmp_path):
    import usersim
    from usersim.core.record import RunRecord
    from usersim.graphs.rescore import rescore_record
    from usersim.judges.base import JudgeConfig

    (rec,) = (await usersim.arun("B1-EI-01", agent="reference", out=tmp_path / "run")).records[:1]
    old = rec.model_dump(mode="json")
    for key in ("stop", "traceback", "attempts", "suspect_reason"):  # fields schema 3 added
        old.pop(key)
    old |= {"schema_version": 2, "status": "error", "blame": "infrastructure", "stop_reason": "agent_error"}
    old["stop_detail"] = "endpoint http://127.0.0.1:9/v1 returned 503 after 3 attempts"
    record = RunRecord.model_validate(old)
    again = await rescore_record(record, JudgeConfig())
    assert (again.status, again.blame) == ("error", "infrastructure")
    assert again.stop is not None and again.stop.blame == "infrastructure"
