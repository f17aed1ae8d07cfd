"""task_completion reads the goal in force (after the add/drop events the user said) and the
evidence (replies, tool results, the case's checks); the simulator's stop is evidence, not the verdict."""

from __future__ import annotations

import pytest

from tests.judges.helpers import bot, case, state, tool, user
from usersim.core.events import ToolEvent
from usersim.judges.base import apply_judges
from usersim.judges.completion import TaskCompletionJudge
from usersim.judges.rules import RulesJudge
from usersim.personas.schema import Persona

EVENTS = [
    {"at_turn": 2, "kind": "drop_required", "slot": "plan_change", "text": "Actually, keep my current plan."},
    {"at_turn": 2, "kind": "add_required", "slot": "roaming_credit", "text": "Just credit the roaming fee."},
]


def traveller(events=()) -> Persona:
    return Persona.model_validate(
        {
            "id": "tel-traveller",
            "name": "Sam",
            "language": "en",
            "identity": "A frequent traveller charged for roaming",
            "goal": {
                "description": "Sort out the roaming charge",
                "required": ["plan_change"],
                "deliverable_keywords": {"plan_change": ["moved to"], "roaming_credit": ["credited"]},
            },
            "events": list(events),
        }
    )


CHANGED = [
    user("I was charged for roaming and want a plan with roaming."),
    bot("I can move you to the Globe plan. Shall I?"),
    user("Actually, keep my current plan. Just credit the roaming fee."),
    bot("Done: $35 has been credited to your account."),
]


async def completion(transcript, persona, *, stop="goal_met", checks=None, trace=None):
    c = case(mode="organic", checks=checks or [])
    st = state(transcript, stop=stop, persona=persona, use_trace=trace is None)
    if trace is not None:
        st = st.model_copy(update={"tool_trace": trace})
    judges = [TaskCompletionJudge(), RulesJudge()]  # listed first, still runs after the rules
    verdicts, _ = await apply_judges(judges, transcript=transcript, case=c, state=st)
    assert [v.judge for v in verdicts][:1] == ["task_completion"]  # the judges' order is kept
    return verdicts[0]


async def test_the_goal_in_force_follows_the_add_and_drop_events_the_user_said():
    v = await completion(CHANGED, traveller(EVENTS))
    assert v.verdict == "pass", v.reason  # before issue #22: "missing: plan_change"
    assert v.details["goal_in_force"] == ["roaming_credit"]
    assert v.details["changes"] == ["-plan_change (turn 2)", "+roaming_credit (turn 2)"]
    assert "roaming_credit ('credited' in msg 3)" in v.reason


async def test_events_never_said_leave_the_goal_as_written():
    quiet = [*CHANGED[:2], user("Hmm, let me think."), bot("Done: $35 has been credited to your account.")]
    v = await completion(quiet, traveller(EVENTS), stop="max_turns")
    assert v.details["goal_in_force"] == ["plan_change"] and "changes" not in v.details
    assert v.verdict == "fail" and "missing: plan_change (none of moved to)" in v.reason


PASSING = [{"keywords": {"scope": "assistant", "any": ["credited"]}}]
FAILING = [{"keywords": {"scope": "assistant", "any": ["refund issued"]}}]


@pytest.mark.parametrize(
    ("stop", "checks", "verdict", "says"),
    [
        # the items in force are not evidenced in words, but the case's checks passed
        ("goal_met", PASSING, "pass", "the user confirmed and the case checks passed: keywords"),
        ("max_turns", PASSING, "inconclusive", "the user never confirmed the goal: left to the simulator"),
        ("gave_up", PASSING, "inconclusive", "left to the simulator"),
        # nothing else shows the goal reached: the agent's
        ("max_turns", FAILING, "fail", "case checks failed: keywords"),
        ("max_turns", None, "fail", "no deciding case checks"),
        ("goal_met", None, "fail", "no deciding case checks"),
    ],
)
async def test_missing_deliverables_are_weighed_against_the_case_checks(stop, checks, verdict, says):
    t = [user("Roaming charge, please help."), bot("Done: $35 has been credited to your account.")]
    v = await completion(t, traveller(), stop=stop, checks=checks)
    assert v.verdict == verdict and says in v.reason, v.reason
    assert (v.details.get("blame_hint") == "simulator") is (verdict == "inconclusive")


async def test_a_tool_result_is_what_the_agent_read_not_a_delivery():
    t = [
        user("Move me to a plan with roaming."),
        bot("", ("change_plan", {"plan": "globe"})),
        tool("change_plan", '{"status": "moved to globe"}'),
        bot("All set."),
    ]
    trace = [
        ToolEvent(
            turn=1, message_index=2, call_number=1, name="change_plan", result='{"status": "moved to globe"}'
        )
    ]
    v = await completion(t, traveller(), stop="max_turns", trace=trace)
    assert v.verdict == "fail" and "missing: plan_change (none of moved to)" in v.reason
    # the case's checks (final_state, tool_called, ... here a keywords check) are the evidence on what it did
    passed = await completion(
        t,
        traveller(),
        stop="goal_met",
        trace=trace,
        checks=[{"keywords": {"scope": "assistant", "any": ["All set"]}}],
    )
    assert passed.verdict == "pass" and "case checks passed: keywords" in passed.reason


LAPTOP_EVENTS = [
    {"at_turn": 2, "kind": "change_fact", "slot": "budget", "value": "6000", "text": "预算改成 6000 吧"}
]


def buyer(events=()) -> Persona:
    return Persona.model_validate(
        {
            "id": "laptop-buyer",
            "name": "小王",
            "identity": "想买笔记本的学生",
            "goal": {
                "description": "买一台笔记本",
                "required": ["model"],
                "deliverable_keywords": {"model": ["型号"]},
                "constraints": {"max_price": 8000},
            },
            "known_info": [{"key": "budget", "value": "8000"}],
            "events": list(events),
        }
    )


async def test_a_delivery_before_the_users_change_of_mind_does_not_count():
    t = [
        user("想买个笔记本"),
        bot("推荐型号：联想小新 Pro 14，售价 5999 元。"),
        user("预算改成 6000 吧"),
        bot("好的，预算 6000 元。"),
    ]
    v = await completion(t, buyer(LAPTOP_EVENTS), stop="max_turns")
    assert v.verdict == "fail" and "none of 型号 since the user's change in turn 2" in v.reason
    redone = [*t, user("那推荐哪款"), bot("推荐型号：联想小新 Pro 14，售价 5999 元。")]
    assert (await completion(redone, buyer(LAPTOP_EVENTS), stop="max_turns")).verdict == "pass"
    over = [user("想买个笔记本"), bot("推荐型号：MacBook Pro，售价 12999 元。")]  # breaks max_price 8000
    assert (await completion(over, buyer(), stop="goal_met")).verdict == "fail"
