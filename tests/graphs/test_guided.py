"""The guided planner (rounds, mutations, nearness) and the coverage map of features."""

from __future__ import annotations

import pytest

from usersim.core.record import RunRecord, Variant
from usersim.core.verdict import Verdict
from usersim.graphs.coverage import Dimension, Features, coverage_map, turn_bucket
from usersim.graphs.guided import GuidedPlan, Pick, nearness, round_sizes
from usersim.personas.loader import load_persona


@pytest.fixture(scope="module")
def base():
    return load_persona("japan-first-trip")


def _record(status="passed", score=1.0, **more) -> RunRecord:
    return RunRecord(
        id="C|persona=p~v1,r0", run_id="r", case_id="C", dimension="D", mode="organic", scoring="auto",
        variant=Variant(persona="p~v1"), seed=1, status=status, score=score, turns=3, agent="a",
        started_at="t", duration_s=0.0, **more,
    )  # fmt: skip


def _fail(judge: str, counts: bool) -> Verdict:
    return Verdict(judge=judge, verdict="fail", reason="x", counts_toward_status=counts)


def test_nearness_ranks_failures_then_near_misses_then_clean_passes():
    clean = nearness(_record())
    side_check = nearness(_record(verdicts=[_fail("drift", counts=False)]))
    low_score = nearness(_record(score=0.5))
    gave_up = nearness(_record(stop_reason="gave_up"))
    failed = nearness(_record(status="failed", score=0.75))
    assert clean == 0.0 and failed == 1.0
    assert 0 < side_check < 1 and 0 < low_score < 1 and 0 < gave_up < 1
    assert nearness(_record(score=0.5, stop_reason="gave_up")) > max(low_score, gave_up)


def test_round_sizes_spend_exactly_the_budget():
    for n in (1, 2, 3, 7, 10, 12, 40):
        sizes = round_sizes(n)
        assert sum(sizes) == n and all(s > 0 for s in sizes)
    assert round_sizes(12)[0] == 3 and round_sizes(40)[0] == 10


def test_the_diverse_round_tries_every_value_and_is_deterministic(base):
    plan = GuidedPlan(base, seed=4)
    first = plan.first_round(3)
    for axis, values in plan.axes.items():
        assert {p.levels[axis] for p in first} == set(values), axis
    again = GuidedPlan(base, seed=4).first_round(3)
    assert [p.levels for p in first] == [p.levels for p in again]
    assert [p.levels for p in GuidedPlan(base, seed=5).first_round(3)] != [p.levels for p in first]


def test_later_rounds_mutate_the_near_failures_and_never_repeat_a_plan(base):
    plan = GuidedPlan(base, seed=0)
    first = plan.first_round(3)
    parent = first[1]
    picks = plan.next_round(4, [(parent, "t2")])
    mutations = [p for p in picks if p.parent == "t2"]
    assert len(mutations) == 2  # half the slots, rounded up, go to the ranked parents
    for m in mutations:  # a neighbour (one axis changed) or the same variant with a new seed
        changed = sum(m.levels[a] != parent.levels[a] for a in plan.axes)
        assert (changed == 1 and m.repeat == 0) or (changed == 0 and m.repeat >= 1)
    keys = [(repr(sorted(p.levels.items())), p.repeat) for p in plan.picks]
    assert len(keys) == len(set(keys)) == 7
    assert all(p.parent is None for p in picks if p not in mutations)
    ids = {plan.persona(p).id for p in plan.picks}
    assert all(i.startswith("japan-first-trip~v") for i in ids)
    assert plan.persona(Pick(dict(parent.levels), repeat=3)).id == plan.persona(parent).id


def _features(i: int, status: str, **values: str) -> Features:
    return Features(
        record_id=f"r{i}",
        case_id="C",
        persona=None,
        status=status,
        values={k: [v] for k, v in values.items()},
    )


def test_coverage_map_says_what_was_never_tried():
    space = {
        "trait.x": Dimension("persona", ("low", "high"), steerable=True),
        "reveal_policy": Dimension("persona", ("a", "b", "c"), steerable=True),
        "tool": Dimension("conversation", ("search", "book", "none")),
        "free": Dimension("conversation", None),
    }
    feats = [
        _features(1, "passed", **{"trait.x": "low", "reveal_policy": "a", "tool": "search", "free": "q"}),
        _features(2, "failed", **{"trait.x": "low", "reveal_policy": "b", "tool": "search", "free": "r"}),
        _features(3, "failed", **{"trait.x": "high", "reveal_policy": "b", "tool": "none", "free": "q"}),
    ]
    cov = coverage_map(feats, space, "guided")
    dims = {d.name: d for d in cov.dimensions}
    assert dims["trait.x"].never_tried == [] and dims["reveal_policy"].never_tried == ["c"]
    assert dims["tool"].never_tried == ["book"] and dims["tool"].tried == {"search": 2, "none": 1}
    assert dims["free"].possible is None and dims["free"].tried == {"q": 2, "r": 1}
    assert (cov.values_covered, cov.values_total) == (6, 8)
    assert cov.pairs is not None and (cov.pairs.covered, cov.pairs.total) == (3, 6)
    assert ["trait.x=high", "reveal_policy=a"] in cov.pairs.never_tried
    assert cov.first_failure_run == 2 and cov.failures == 2
    assert "first failure at run 2 of 3" in cov.line() and "6/8 feature values" in cov.line()


def test_turn_buckets():
    assert [turn_bucket(t) for t in (1, 2, 3, 4, 7, 10, 11, 16, 40)] == [
        "1", "2-3", "2-3", "4-6", "7-10", "7-10", "11-15", "16+", "16+",
    ]  # fmt: skip
