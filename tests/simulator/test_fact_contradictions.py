"""Proposals that contradict a fact of the persona (data/fact_contradictions.yaml, en and zh): the
rule simulator refuses with the correction (the persona's own value), never with a yes, and
records the refusal; a proposal that gets every fact right gets a yes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.core.messages import Message
from usersim.lang.acts import accepts
from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorView
from usersim.simulator.rule import RuleSimulator

DATA = yaml.safe_load(
    (Path(__file__).parent / "data" / "fact_contradictions.yaml").read_text(encoding="utf-8")
)
CASES = DATA["cases"]


def _persona(language: str) -> Persona:
    return Persona.model_validate(
        {
            "id": f"facts-{language}",
            "name": "Priya",
            "language": language,
            "identity": "an employee with a broken laptop and a stolen card",
            "goal": {
                "description": "get it sorted",
                "required": ["done"],
                "deliverable_keywords": {"done": ["all set"]},
            },
            "known_info": DATA["personas"][language],
        }
    )


def _respond(case: dict):
    p = _persona(case["persona"])
    opening = "你好" if p.language == "zh" else "Hi"
    view = SimulatorView(
        case_id="F-1",
        persona=p,
        opening_message=opening,
        transcript=[
            Message(role="user", content=opening),
            Message(role="assistant", content=case["proposal"]),
        ],
        turn=2,
        max_turns=10,
        seed=3,
    )
    return p, RuleSimulator().respond(view)


def test_the_data_covers_both_languages_and_both_verdicts():
    assert len(CASES) >= 25
    assert {c["persona"] for c in CASES} == {"en", "zh"}
    assert {c["expect"] for c in CASES} == {"accept", "refuse"}


@pytest.mark.parametrize("case", CASES, ids=[c["proposal"][:40] for c in CASES])
def test_a_proposal_is_checked_against_the_facts(case: dict):
    p, turn = _respond(case)
    kinds = {e.kind: e.detail for e in turn.events}
    if case["expect"] == "refuse":
        assert "proposal_refused" in kinds, (turn.message, kinds)
        assert f"fact {case['slot']}:" in kinds["proposal_refused"], kinds
        value = next(f.value for f in p.known_info if f.slot == case["slot"])
        core = value.removeprefix("the one ending in ").removeprefix("the ")
        assert core in turn.message, turn.message  # the correction carries the user's own value
        assert not accepts(turn.message), turn.message
        assert turn.stop is None  # the user keeps its goal
    else:
        assert "proposal_refused" not in kinds, (turn.message, kinds)
        assert "proposal_accepted" in kinds, (turn.message, kinds)


def test_a_remembered_reading_is_the_fresh_one_and_each_caller_gets_its_own_copy():
    """contradictions() remembers its answer per (facts, reply): every data case read again gives
    the reading it gave the first time, the same as reading it with nothing remembered, and a
    caller changing what it got changes nobody else's."""
    from usersim.simulator import fact_check

    for case in CASES:
        p = _persona(case["persona"])
        facts = fact_check.facts_of(p, {f.slot: f.value for f in p.known_info})
        first = fact_check.contradictions(facts, case["proposal"])
        fresh = fact_check._contradictions(facts, case["proposal"])
        assert first == fresh, case["proposal"]
        for v in first:
            v.found = "changed by a caller"
        assert fact_check.contradictions(facts, case["proposal"]) == fresh, case["proposal"]
