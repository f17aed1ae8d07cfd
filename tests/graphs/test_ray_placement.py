"""How a Ray run is laid out (graphs.ray_placement): --concurrency is the run's total in flight,
split across one worker per CPU (at most one per conversation in flight) or --ray-actors N."""

from __future__ import annotations

import pytest

from usersim.graphs.ray_placement import RayRunStats, WorkerRun, node_cpus, place, room, split


def test_alive_nodes_with_a_whole_cpu_run_workers_a_cpu_less_head_and_dead_nodes_do_not():
    nodes = [
        {"NodeID": "head", "Alive": True, "Resources": {"memory": 1e9}},  # started with num_cpus=0
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 4.0}},
        {"NodeID": "gone", "Alive": False, "Resources": {"CPU": 8.0}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 1.5}},  # one worker fits
        {"NodeID": "tiny", "Alive": True, "Resources": {"CPU": 0.5}},
    ]
    assert node_cpus(nodes) == [("a", 4), ("b", 1)]


def test_local_mode_starts_one_worker_per_cpu_and_splits_the_concurrency_among_them():
    assert place([("me", 2)], 32) == [("me", 16), ("me", 16)]  # the I/O-bound bench: 2 CPUs, C=32
    assert place([("me", 4)], 10) == [("me", 3), ("me", 3), ("me", 2), ("me", 2)]
    # never more workers than conversations in flight: each has one at least
    assert place([("me", 8)], 3) == [("me", 1), ("me", 1), ("me", 1)]
    assert place([("me", 8)], 1) == [("me", 1)]


def test_a_cluster_gets_its_workers_round_robin_over_the_nodes():
    nodes = [("a", 1), ("b", 1)]  # the cluster test's two 1-CPU worker nodes
    assert place(nodes, 2) == [("a", 1), ("b", 1)]
    assert place(nodes, 9) == [("a", 5), ("b", 4)]
    big = [("a", 3), ("b", 1)]
    assert [n for n, _ in place(big, 64)] == ["a", "b", "a", "a"]  # one on each before a second
    assert [n for n, _ in place(big, 2)] == ["a", "b"]  # C=2: one per node, not both on `a`


def test_ray_actors_is_the_worker_count_and_still_shares_the_concurrency():
    assert place([("a", 2), ("b", 2)], 8, wanted=3) == [("a", 3), ("b", 3), ("a", 2)]
    with pytest.raises(ValueError, match=r"--ray-actors 5: the Ray cluster has 4 CPU\(s\)"):
        place([("a", 2), ("b", 2)], 8, wanted=5)
    with pytest.raises(ValueError) as err:
        place([("a", 4)], 2, wanted=3)
    # the message says what --concurrency means with Ray and what to give
    assert "--ray-actors 3 with --concurrency 2" in str(err.value)
    assert "total of conversations in flight, split across the workers" in str(err.value)
    assert "give --concurrency 3 or more" in str(err.value)


def test_no_node_with_a_cpu_is_refused_with_why():
    with pytest.raises(ValueError, match="no alive node with a CPU"):
        place([], 4)


def test_the_split_is_even_and_adds_up():
    for total in range(1, 40):
        for workers in range(1, total + 1):
            parts = split(total, workers)
            assert sum(parts) == total and max(parts) - min(parts) <= 1 and min(parts) >= 1


def test_a_replacement_goes_where_a_cpu_is_free_never_to_a_node_that_lost_a_worker():
    nodes = [("a", 1), ("b", 1)]
    assert room(nodes, busy=["a"], lost={"b"}) == []  # the cluster test: b removed, a full
    assert room([("a", 2), ("b", 1)], busy=["a"], lost={"b"}) == ["a"]
    assert room([("a", 2), ("b", 2), ("c", 1)], busy=["a", "a", "b"], lost=set()) == ["b", "c"]


def test_the_stats_line_says_the_total_and_each_workers_share():
    stats = RayRunStats(
        workers=2,
        concurrency=32,
        ran=[
            WorkerRun(where="x", lanes=16, conversations=170),
            WorkerRun(where="y", lanes=16, conversations=150),
        ],
    )
    assert stats.line() == (
        "ray: 2 worker(s), 32 conversation(s) in flight (16 each); conversations per worker 170/150"
    )
    stats.ran[1].lanes = 15
    stats.concurrency = 31
    assert "31 conversation(s) in flight (16/15)" in stats.line()
    one = RayRunStats(workers=1, concurrency=4, ran=[WorkerRun(where="x", lanes=4, conversations=9)])
    assert one.line() == "ray: 1 worker(s), 4 conversation(s) in flight"
    assert one.span_s is None
    one.span_start, one.span_end = 100.0, 112.5
    assert one.model_dump()["span_s"] == 12.5  # in the run meta beside its ends
