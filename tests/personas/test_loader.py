"""Persona loading: ids and paths, file:line errors, case overrides."""

from __future__ import annotations

import pytest

from usersim.cases.schema import Case
from usersim.core.registry import UnknownNameError
from usersim.core.yamlfile import FileProblems
from usersim.personas.loader import load_persona, resolve_persona
from usersim.simulator.base import load_simulator


def organic(**over):
    data = {
        "id": "X-1",
        "dimension": "C2",
        "title": "t",
        "mode": "organic",
        "persona": "japan-first-trip",
        "max_turns": 5,
        "judging": {"scoring": {"methods": ["auto"]}},
    }
    return Case.model_validate({**data, **over})


def test_load_by_id_and_by_path():
    by_id = load_persona("japan-first-trip")
    assert by_id == load_persona("usersim/personas/library/japan-first-trip.yaml")
    assert by_id.known_info[0].slot == "origin"


def test_unknown_persona_suggests_the_close_id():
    with pytest.raises(
        UnknownNameError, match=r"Unknown persona 'japan-first-tirp'\. Did you mean 'japan-first-trip'\?"
    ):
        load_persona("japan-first-tirp")


def test_schema_errors_name_file_line_and_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "id: bad\nname: B\nidentity: x\ngoal:\n  description: d\n  requird: [flights]\n", encoding="utf-8"
    )
    with pytest.raises(FileProblems) as err:
        load_persona(str(path))
    assert str(err.value) == (
        f"{path}:6: goal.requird: unknown field 'requird'; did you mean 'required'? "
        "(allowed: constraints, deliverable_keywords, description, labels, required)"
    )


def test_id_must_match_the_file_name(tmp_path):
    path = tmp_path / "other.yaml"
    path.write_text(
        "id: bad\nname: B\nidentity: x\ngoal: {description: d, required: [flights]}\n", encoding="utf-8"
    )
    with pytest.raises(FileProblems, match=r"other.yaml:1: id: id 'bad' must equal the file name 'other'"):
        load_persona(path)


def test_resolve_applies_case_overrides_deeply():
    p = resolve_persona(
        organic(persona_overrides={"traits": {"patience": "low"}, "reveal_policy": "all_at_once"})
    )
    assert p.traits.patience == "low" and p.traits.clarity == "low"  # other traits kept
    assert p.reveal_policy == "all_at_once" and p.goal.required == ["flights", "itinerary", "hotel"]


def test_bad_overrides_and_unknown_persona_in_a_case():
    with pytest.raises(
        ValueError,
        match=r"case 'X-1' persona_overrides for persona 'japan-first-trip' are invalid: traits.patience",
    ):
        resolve_persona(organic(persona_overrides={"traits": {"patience": "very"}}))
    with pytest.raises(UnknownNameError, match="Unknown persona 'vague-laptop'"):
        resolve_persona(organic(persona="vague-laptop"))


def test_simulator_specs_resolve_with_did_you_mean():
    assert load_simulator("rule").spec == "rule"
    assert load_simulator("rule:b").salt == "b"
    with pytest.raises(UnknownNameError, match="Unknown simulator 'rul'. Did you mean 'rule'?"):
        load_simulator("rul")
