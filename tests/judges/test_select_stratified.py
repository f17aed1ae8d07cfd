"""calibration.stratified_sample, the re-check's sampler: exactly ceil(20%) overall, each dimension
floor or ceil of its 20%, deterministic for a salt, over many group sizes."""

from __future__ import annotations

import itertools
import math

from usersim.judges.calibration import sample_size, stratified_sample


def _groups(sizes: tuple[int, ...]) -> dict[str, list[str]]:
    return {f"D{g}": [f"D{g}-{i}" for i in range(n)] for g, n in enumerate(sizes)}


def test_overall_exact_and_every_group_within_one():
    for sizes in itertools.product([0, 1, 2, 3, 4, 5, 7, 9, 12, 31], repeat=3):
        groups = _groups(sizes)
        picked = stratified_sample(groups, salt="s")
        total = sum(sizes)
        assert (
            sum(len(v) for v in picked.values())
            == sample_size(total)
            == (math.ceil(0.2 * total) if total else 0)
        )
        for g, ids in groups.items():
            assert len(picked[g]) in (math.floor(0.2 * len(ids)), math.ceil(0.2 * len(ids))), (sizes, g)
            assert set(picked[g]) <= set(ids) and len(set(picked[g])) == len(picked[g])


def test_deterministic_for_a_salt_and_different_for_another():
    groups = _groups((9, 2, 12, 7))
    assert stratified_sample(groups, salt="run|0") == stratified_sample(groups, salt="run|0")
    others = [stratified_sample(groups, salt=f"run|{s}") for s in range(1, 6)]
    assert any(o != stratified_sample(groups, salt="run|0") for o in others)
