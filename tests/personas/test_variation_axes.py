"""Generic variation axes (read from the traits model), variants built from levels, mutation."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import Field

from usersim.personas.loader import load_persona
from usersim.personas.schema import Persona, Traits
from usersim.personas.variation import (
    all_pairs,
    bucket,
    field_domain,
    levels_of,
    variant_axes,
    with_levels,
)


class MoreTraits(Traits):
    """A traits model with fields the variation code has never heard of."""

    authority_claim: Literal["none", "manager", "police"] = Field(default="none", description="x")
    pushiness: int = Field(default=2, ge=0, le=9, description="x")
    tactics: list[Literal["urgency", "flattery"]] = Field(default_factory=list, description="x")
    note: str = Field(default="", description="free text")
    anger: float | None = Field(default=None, description="unbounded")


@pytest.fixture(scope="module")
def base():
    return load_persona("japan-first-trip")


def test_a_trait_added_to_the_schema_is_an_axis_without_code_changes(base):
    persona = base.model_copy(update={"traits": MoreTraits(**base.traits.model_dump())})
    axes = variant_axes(persona)
    assert axes["trait.authority_claim"] == ["none", "manager", "police"]
    assert axes["trait.pushiness"] == [2, 4, 8]  # bucket midpoints of 0..9
    assert axes["trait.typo_prone"] == [False, True] and axes["reveal_policy"][0] == "all_at_once"
    # free text, unbounded numbers and lists are no axes (a level is one value out of a known set)
    assert not {"trait.note", "trait.anger", "trait.tactics"} & set(axes)
    fields = MoreTraits.model_fields
    assert field_domain(fields["tactics"]) == ["urgency", "flattery"]
    assert field_domain(fields["note"]) is None and field_domain(fields["anger"]) is None


def test_numbers_fall_into_equal_buckets_and_representatives_hit_each():
    field = MoreTraits.model_fields["pushiness"]
    labels = [bucket(field, v) for v in range(10)]
    assert labels[0] == labels[2] == "0-3" and labels[5] == "3-6" and labels[9] == "6-9"
    assert sorted({bucket(field, v) for v in field_domain(field) or []}) == ["0-3", "3-6", "6-9"]
    assert bucket(Traits.model_fields["typo_prone"], True) == "true"


def test_with_levels_sets_traits_and_fields_and_records_them(base):
    v = with_levels(base, {"trait.verbosity": "low", "reveal_policy": "all_at_once"}, "japan-first-trip~v7")
    assert v.id == "japan-first-trip~v7" and v.name.endswith("(v7)")
    assert v.traits.verbosity == "low" and v.reveal_policy == "all_at_once"
    assert v.variation == {"trait.verbosity": "low", "reveal_policy": "all_at_once"}
    assert v.goal == base.goal and v.known_info == base.known_info  # what the user wants stays
    assert levels_of(v, {"trait.verbosity": [], "reveal_policy": []}) == {
        "trait.verbosity": "low",
        "reveal_policy": "all_at_once",
    }
    with pytest.raises(ValueError, match="not a variation axis: goal"):
        with_levels(base, {"goal": "x"}, "japan-first-trip~v1")
    with pytest.raises(ValueError, match="stubbornness"):
        with_levels(base, {"trait.stubbornness": "high"}, "japan-first-trip~v1")
    assert isinstance(v, Persona)


def test_all_pairs_counts_every_value_pair_of_two_axes():
    axes = {"a": [1, 2, 3], "b": ["x", "y"], "c": [True, False]}
    assert len(all_pairs(axes)) == 3 * 2 + 3 * 2 + 2 * 2
