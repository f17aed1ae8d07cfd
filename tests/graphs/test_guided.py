"""The guided planner (rounds, mutations, nearness) and the coverage map of features."""

from __future__ import annotations

import pytest

from usersim.core.events import SimEvent, ToolEvent
from usersim.core.record import RunRecord, Variant
from usersim.core.verdict import Verdict
from usersim.graphs.coverage import Dimension, Features, coverage_map, turn_bucket
from usersim.graphs.guided import GuidedPlan, Pick, nearness, round_sizes
from usersim.graphs.nearness import value_estimates
from usersim.personas.covering import covering_rows, covering_size, design_seed
from usersim.personas.loader import load_persona
from usersim.personas.variation import pairs_of


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


def _tool(error: bool, intercepted: bool = False) -> ToolEvent:
    return ToolEvent(turn=2, call_number=1, name="block_card", result="Error: no card", is_error=error,
                     intercepted=intercepted)  # fmt: skip


def test_a_refused_tool_call_and_a_missed_scripted_event_are_near_misses():
    refused = nearness(_record(tool_trace=[_tool(True), _tool(False)]))
    missed = nearness(_record(sim_events=[SimEvent(turn=3, kind="event_missed", detail="event #0 say")]))
    assert 0 < missed < refused < 1
    assert nearness(_record(tool_trace=[_tool(True)] * 2)) > refused  # two refusals: nearer
    # an error an intercept planted (fault injection) is the test's doing, not the agent's
    assert nearness(_record(tool_trace=[_tool(True, intercepted=True)])) == 0.0
    assert nearness(_record(status="failed", tool_trace=[_tool(True)])) == 1.0


def test_value_estimates_single_out_the_values_the_near_misses_share():
    rows = [({"a": 1, "b": "x"}, 0.3), ({"a": 1, "b": "y"}, 0.3), ({"a": 2, "b": "x"}, 0.0)]
    est, mean = value_estimates(rows)
    assert mean == pytest.approx(0.2)
    assert est[("a", 1)] > est[("b", "y")] > est[("b", "x")] > est[("a", 2)]
    assert value_estimates([]) == ({}, 0.0)


def test_round_sizes_spend_exactly_the_budget():
    for n in (1, 2, 3, 7, 10, 12, 40):
        for design in (None, 5, 17):
            sizes = round_sizes(n, design)
            assert sum(sizes) == n and all(s > 0 for s in sizes)
    assert round_sizes(12)[0] == 3 and round_sizes(40)[0] == 10
    # the whole covering design goes first when it takes at most half the budget
    assert round_sizes(40, 17)[0] == 17 and round_sizes(30, 17)[0] == 8 and round_sizes(12, 17)[0] == 3


def test_the_first_round_is_the_covering_design_random_runs_and_is_deterministic(base):
    plan = GuidedPlan(base, seed=4)
    first = plan.first_round(3)
    for axis, values in plan.axes.items():
        assert {p.levels[axis] for p in first} == set(values), axis
    again = GuidedPlan(base, seed=4).first_round(3)
    assert [p.levels for p in first] == [p.levels for p in again]
    assert [p.levels for p in GuidedPlan(base, seed=5).first_round(3)] != [p.levels for p in first]
    # the random strategy's first rows (the same design, the same seed)
    assert [p.levels for p in first] == covering_rows(plan.axes, 3, design_seed(base.id, 4))


def test_the_covering_design_tries_every_pair_in_few_rows(base):
    plan = GuidedPlan(base, seed=0)
    size = covering_size(plan.axes, design_seed(base.id, 0))
    rows = covering_rows(plan.axes, size, design_seed(base.id, 0))
    tried = set().union(*(pairs_of(r, plan.axes) for r in rows))
    assert tried == plan.uncovered  # nothing planned yet: every pair is untried, and the rows try all
    # 6 axes of 3 values and one of 2 need at least 9 rows; a random draw needs far more than greedy
    assert 9 <= size <= 20, size
    # each row tries the most untried pairs: the first rows try only new ones (36 pairs each)
    assert len(set().union(*(pairs_of(r, plan.axes) for r in rows[:3]))) == 3 * len(
        pairs_of(rows[0], plan.axes)
    )


def test_later_rounds_recombine_and_mutate_the_near_failures_and_never_repeat_a_plan(base):
    plan = GuidedPlan(base, seed=0)
    first = plan.first_round(3)
    scored = [(first[0], "t1", 0.0), (first[1], "t2", 0.3), (first[2], "t3", 0.2)]
    picks = plan.next_round(6, scored)
    near = [p for p in picks if p.parent is not None]
    assert len(near) == 5  # all slots but one in four (rounded down) go to the near failures
    for p in near:  # a recombination of t2 and t3: every axis takes the value one of them had
        assert p.parent == "t2"  # the nearest parent is named
        assert all(p.levels[a] in (first[1].levels[a], first[2].levels[a]) for a in plan.axes)
    assert all(p.parent is None for p in picks if p not in near)  # the rest: the design's next rows
    keys = [(repr(sorted(p.levels.items())), p.repeat) for p in plan.picks]
    assert len(keys) == len(set(keys)) == 9
    ids = {plan.persona(p).id for p in plan.picks}
    assert all(i.startswith("japan-first-trip~v") for i in ids)
    assert plan.persona(Pick(dict(first[1].levels), repeat=3)).id == plan.persona(first[1]).id


def test_a_lone_near_failure_is_mutated_towards_the_values_that_came_nearest(base):
    plan = GuidedPlan(base, seed=1)
    first = plan.first_round(3)
    scored = [(first[0], "t1", 0.0), (first[1], "t2", 0.4), (first[2], "t3", 0.0)]
    for _ in range(6):
        m = plan.neighbour(first[1], "t2", *value_estimates([(p.levels, n) for p, _, n in scored]))
        changed = [a for a in plan.axes if m.levels[a] != first[1].levels[a]]
        assert (len(changed) == 1 and m.repeat == 0) or (not changed and m.repeat >= 1)
    assert plan.next_round(2, scored)[0].parent == "t2"  # one parent: no recombination, a neighbour


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


# --- the planner against synthetic flaws (no conversations): is guidance general? ---------------------


def _flaw(plan: GuidedPlan, k: int, near: float, seed: int):
    """A flaw in a random corner of k axis values: 1 (a failure) with all of them, `near` for each one
    held otherwise (the gradient; 0: none)."""
    import random

    rng = random.Random(f"flaw|{seed}")
    corner = {a: rng.choice(plan.axes[a]) for a in rng.sample(sorted(plan.axes), k)}

    def score(levels: dict) -> float:
        held = sum(levels[a] == v for a, v in corner.items())
        return 1.0 if held == k else near * held

    return score


def _first_hit(strategy: str, base, k: int, near: float, seed: int, n: int = 12) -> int:
    plan = GuidedPlan(base, seed)
    flaw = _flaw(plan, k, near, seed)
    if strategy == "random":  # the random strategy: the design's first n rows
        rows = covering_rows(plan.axes, n, design_seed(base.id, seed))
        return next((i for i, r in enumerate(rows, 1) if flaw(r) == 1.0), n + 1)
    scored, i = [], 0
    for r, size in enumerate(round_sizes(n, covering_size(plan.axes, design_seed(base.id, seed)))):
        for pick in plan.first_round(size) if r == 0 else plan.next_round(size, scored):
            i += 1
            if flaw(pick.levels) == 1.0:
                return i
            scored.append((pick, f"t{i}", flaw(pick.levels)))
    return n + 1


@pytest.mark.parametrize(
    ("k", "near", "better"),
    [(3, 0.1, True), (2, 0.1, True), (3, 0.0, False), (2, 0.0, False)],
    ids=["3-way-gradient", "2-way-gradient", "3-way-none", "2-way-none"],
)
def test_guidance_finds_random_corners_sooner_when_near_misses_point_there(base, k, near, better):
    """40 flaws in random corners of the persona space. With a gradient guided finds them sooner than
    the random strategy (the same design without guidance); without one it is the design itself."""
    seeds = range(40)
    guided = [_first_hit("guided", base, k, near, s) for s in seeds]
    random_ = [_first_hit("random", base, k, near, s) for s in seeds]
    if better:
        assert sum(guided) < sum(random_), (guided, random_)
        assert sum(g <= 12 for g in guided) >= sum(r <= 12 for r in random_), (guided, random_)
    else:  # nothing to follow: guided spends its slots on the design's rows, no worse than random
        assert guided == random_
