"""Persona variation: pairwise coverage, determinism, ids."""

from __future__ import annotations

import pytest

from usersim.personas.loader import load_persona
from usersim.personas.variation import all_pairs, pairwise_coverage, vary


@pytest.fixture(scope="module")
def base():
    return load_persona("japan-first-trip")


def test_pairwise_coverage_complete_once_n_allows(base):
    rows = [v.variation for v in vary(base, 12, seed=3)]
    assert pairwise_coverage(rows) == 1.0
    # 3x3 levels need at least 9 rows: fewer cannot cover, and coverage grows with n
    cov = [pairwise_coverage([v.variation for v in vary(base, n, seed=3)]) for n in (3, 6, 9)]
    assert cov[0] < cov[1] < cov[2] < 1.0


def test_small_axes_reach_full_coverage_with_the_minimum(base):
    axes = {"patience": ["low", "high"], "verbosity": ["low", "high"], "typo_prone": [False, True]}
    rows = [v.variation for v in vary(base, 4, seed=0, axes=axes)]
    assert pairwise_coverage(rows, axes) == 1.0 and len(all_pairs(axes)) == 12


def test_deterministic_per_seed_and_seed_matters(base):
    dump = lambda seed: [v.model_dump() for v in vary(base, 8, seed=seed)]
    assert dump(5) == dump(5)
    assert dump(5) != dump(6)


def test_variants_carry_ids_traits_and_reset_fixed_patience(base):
    variants = vary(base, 3, seed=1, axes=["patience", "reveal_policy"])
    assert [v.id for v in variants] == ["japan-first-trip~v1", "japan-first-trip~v2", "japan-first-trip~v3"]
    for v in variants:
        assert (
            v.traits.patience == v.variation["patience"] and v.reveal_policy == v.variation["reveal_policy"]
        )
        assert v.stop_rules.patience_turns is None  # base has patience_turns: 4; the trait must decide now
        assert v.goal == base.goal and v.known_info == base.known_info


def test_unknown_axis_is_an_actionable_error(base):
    with pytest.raises(ValueError, match="Unknown variation axis 'patiense'. Did you mean 'patience'?"):
        vary(base, 2, seed=0, axes=["patiense"])
    with pytest.raises(ValueError, match="n must be at least 1"):
        vary(base, 0, seed=0)
