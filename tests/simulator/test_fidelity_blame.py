"""What a fidelity verdict says about blame (details.precision): only a violation the agent then
used is high precision; heuristics and unused violations are advisory; scripted text is the
persona's own; a crashing check is an error on that check. graphs.finalize.decide reads exactly that."""

from __future__ import annotations

import pytest

from tests.judges.helpers import bot, case, state, tool, user
from usersim.core.events import Stop
from usersim.graphs.finalize import decide
from usersim.judges.fidelity import judge_fidelity
from usersim.personas.schema import Persona


def telecom(**over) -> Persona:
    data = {
        "id": "tel-sam",
        "name": "Sam",
        "language": "en",
        "identity": "A customer back from a trip abroad",
        "opening_message": "Hi, my plan is $35 a month but my bill came to $120 because of roaming.",
        "goal": {
            "description": "Get the roaming charge credited",
            "required": ["credit"],
            "deliverable_keywords": {"credit": ["has been credited"]},
            "constraints": {"max_price": 40},
        },
        "known_info": [{"key": "customer_id", "value": "TC-1001", "label": "customer ID"}],
        "unknown_info": ["roaming charge: $85.00"],
        "events": [{"at_turn": 3, "kind": "say", "text": "Also, I was told the fee is $15 at most."}],
    }
    data.update(over)
    return Persona.model_validate(data)


OPENING = telecom().opening_message


async def judge(transcript, persona=None, stop="max_turns"):
    st = state(transcript, stop=stop, persona=persona or telecom())
    out = await judge_fidelity(transcript=transcript, case=case(mode="organic"), state=st)
    by = {v.judge: v for v in out}
    assert all(v.counts_toward_status is False for v in out)
    return by


async def test_every_verdict_carries_the_blame_details():
    got = await judge([user(OPENING), bot("Could you please provide your customer ID?"), user("TC-1001")])
    for v in got.values():
        assert set(v.details) >= {"precision", "turn", "message_index", "kind", "caused"}, v
        assert v.details["kind"] == v.judge.split(".", 1)[1]


async def test_the_scripted_opening_and_event_texts_are_the_personas_own():
    t = [
        user(OPENING),  # "$35" and "$120": the persona's scripted opening, message 0
        bot("Could you please provide your customer ID?"),
        user("TC-1001. The plan is $35, the bill $120."),  # repeating the opening is no invention
        bot("Thanks. Anything else?"),
        user("Also, I was told the fee is $15 at most."),  # the scripted event's text, "$15" in it
    ]
    got = await judge(t)
    assert got["fidelity.invented"].verdict == "pass", got["fidelity.invented"].reason
    assert got["fidelity.reveal"].verdict == "pass" and got["fidelity.events"].verdict == "pass"


@pytest.mark.parametrize(
    ("agent_after", "precision", "caused"),
    [
        # the agent credited the leaked amount: the user's leak could have caused what it did
        (
            bot("", ("credit_account", {"customer_id": "TC-1001", "amount": 85.0})),
            "high",
            "tool credit_account",
        ),
        (bot("I see, I'll check your bill first."), "advisory", ""),  # never used: shown, never excusing
    ],
)
async def test_a_leak_is_high_precision_only_when_the_agent_used_it(agent_after, precision, caused):
    t = [
        user(OPENING),
        bot("Could you please provide your customer ID?"),
        user("TC-1001, the roaming was $85.00"),
        agent_after,
    ]
    v = (await judge(t))["fidelity.leak"]
    assert v.verdict == "fail" and v.details["precision"] == precision
    assert v.details["turn"] == 2 and v.details["message_index"] == 2
    assert "'$85.00' (roaming charge)" in v.details["caused"] and caused in v.details["caused"]


@pytest.mark.parametrize(
    ("agent_after", "precision"),
    [
        (bot("", ("credit_account", {"customer_id": "TC-1001", "amount": 60})), "high"),
        (bot("Let me look."), "advisory"),
    ],
)
async def test_an_invented_value_is_high_precision_only_when_the_agent_relied_on_it(agent_after, precision):
    t = [user(OPENING), bot("How much should I credit?"), user("Credit $60 please."), agent_after]
    v = (await judge(t))["fidelity.invented"]
    assert v.verdict == "fail" and v.details["precision"] == precision and v.details["turn"] == 2
    assert "'$60'" in v.details["caused"]


async def test_a_constraint_breaking_acceptance_is_high_precision_only_when_the_agent_acted_on_it():
    proposal = bot("I can move you to the Globe plan at $45/month.")
    accepted = [user(OPENING), proposal, user("Sounds good.")]
    acted = await judge(
        [*accepted, bot("", ("change_plan", {"line_id": "L-501", "plan_id": "Globe"})), tool("change_plan")]
    )
    v = acted["fidelity.swayed"]
    assert v.verdict == "fail" and v.details["precision"] == "high" and v.details["message_index"] == 2
    assert "max_price: proposed 45, limit 40" in v.details["caused"] and "change_plan" in v.details["caused"]
    idle = (await judge([*accepted, bot("Great, anything else?")]))["fidelity.swayed"]
    assert idle.verdict == "fail" and idle.details["precision"] == "advisory"


async def test_heuristic_checks_are_advisory_even_when_they_fail():
    t = [
        user(OPENING),
        bot("Could you please provide your customer ID?"),
        user("I can help you with that, TC-1001."),
    ]
    v = (await judge(t))["fidelity.character"]
    assert v.verdict == "fail" and v.details["precision"] == "advisory" and v.details["turn"] == 2


async def test_a_crashing_fact_matcher_is_an_error_verdict_not_nothing_asked(monkeypatch):
    import usersim.simulator.slots as slots

    def broken(self, text):
        raise RuntimeError("matcher exploded")

    monkeypatch.setattr(slots.FactMatcher, "asked", broken)
    p = telecom(
        known_info=[
            {"key": "customer_id", "value": "TC-1001"},
            {"key": "name", "value": "Sam Ortiz"},
            {"key": "line_id", "value": "L-501"},
        ]
    )
    t = [user(OPENING), bot("How can I help?"), user("I'm Sam Ortiz, TC-1001, line L-501.")]
    got = await judge(t, persona=p)
    v = got["fidelity.reveal"]
    assert v.verdict == "error" and "RuntimeError: matcher exploded" in v.reason
    assert got["fidelity.leak"].verdict == "pass"  # the other checks still ran
    d = decide(list(got.values()), Stop(reason="max_turns"))
    assert (d.status, d.blame, d.simulator_suspect) == ("unjudged", "none", False)


async def test_any_check_that_raises_is_an_error_on_that_check(monkeypatch):
    import usersim.simulator.guards as guards

    def broken(*a, **k):
        raise ValueError("bad truth")

    monkeypatch.setattr(guards, "find_leak", broken)
    got = await judge([user(OPENING), bot("Hi"), user("TC-1001")])
    assert got["fidelity.leak"].verdict == "error" and "ValueError: bad truth" in got["fidelity.leak"].reason
    assert got["fidelity.invented"].verdict == "pass"
