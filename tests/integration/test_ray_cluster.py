"""`usersim run --ray ADDRESS` on a real multi-node Ray cluster made in the test (ray.cluster_utils:
a head that runs nothing and two worker nodes, each its own raylet), and `--ray local` with an
I/O-bound agent: many conversations per worker, the store written once by the driver, a lost node
costing nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.ray_agents import read_inflight
from tests.support.cli import REPO, usersim

pytestmark = pytest.mark.slow  # `make test-fast` leaves these out; `make test` and CI run them

AGENT = "python:tests.integration.ray_agents:slow_echo"


def _ray_local(out: Path, *args: str):
    """`usersim run B1-EI-01 --ray local ARGS` into `out` (this process's Ray shut down after)."""
    import ray

    try:
        res = usersim(
            "run", "--id", "B1-EI-01", "--agent", AGENT, "--ray", "local", *args, "--out", str(out),
            "--no-progress", check=False,
        )  # fmt: skip
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert res.returncode in (0, 1), res.stderr
    return res


# static cases (groups A and B) and an organic one: 5 conversations per repeat
IDS = ["--id", "B1-CL-01", "--id", "B1-EI-01", "--id", "C2-TD-04"]
TIMING = {"run_id", "started_at", "duration_s", "timeline"}  # differ between any two runs


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def stored(out: Path) -> tuple[list[str], dict]:
    db = sqlite3.connect(out / "results.sqlite")
    try:
        ids = [row[0] for row in db.execute("SELECT id FROM records")]
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}
    finally:
        db.close()
    return ids, meta


def comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING}


@pytest.fixture
def cluster(request, tmp_path, monkeypatch):
    """A head with no CPU (it runs no worker) and two 1-CPU worker nodes, torn down afterwards.
    The raylets take this process's environment: the agent's delay (the fixture's param, default
    0.3 s) and in-flight folder."""
    import ray
    from ray.cluster_utils import Cluster

    inflight = tmp_path / "inflight-cluster"
    inflight.mkdir()
    monkeypatch.setenv("USERSIM_TEST_INFLIGHT_DIR", str(inflight))
    monkeypatch.setenv("USERSIM_TEST_AGENT_DELAY", str(getattr(request, "param", 0.3)))
    small = {"object_store_memory": 80 * 1024**2}
    c = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 0,
            "include_dashboard": False,
            **small,
            # a removed node is declared dead within a few seconds, not the default ~30 s
            "_system_config": {"health_check_period_ms": 1000, "health_check_failure_threshold": 5},
        },
    )
    workers = []
    try:
        workers = [c.add_node(num_cpus=1, **small) for _ in range(2)]
        c.wait_for_nodes()
        yield c, workers, inflight
    finally:
        if ray.is_initialized():
            ray.shutdown()
        for node in workers:
            if node in c.worker_nodes:
                c.remove_node(node)
        c.shutdown()


def test_cluster_run_stores_the_records_of_a_local_run(cluster, tmp_path, monkeypatch):
    c, _, inflight = cluster
    remote, local = tmp_path / "ray", tmp_path / "local"
    res = usersim(
        "run", *IDS, "--repeats", "2", "--agent", AGENT, "--ray", c.address, "--concurrency", "4",
        "--out", str(remote), "--no-progress", check=False,
    )  # fmt: skip
    assert res.returncode in (0, 1), res.stderr  # the echo agent fails some cases: a verdict, not a crash
    # --concurrency is the total: one worker per 1-CPU node, two conversations in flight each
    assert "ray: 2 worker(s), 4 conversation(s) in flight (2 each)" in res.stderr
    # both worker nodes ran conversations, and none ran in the driver
    ran = read_inflight(inflight)
    assert len(ran) == 2 and os.getpid() not in ran, ran

    monkeypatch.setenv("USERSIM_TEST_INFLIGHT_DIR", str(tmp_path / "inflight-local"))
    (tmp_path / "inflight-local").mkdir()
    monkeypatch.setenv("USERSIM_TEST_AGENT_DELAY", "0")
    usersim(
        "run", *IDS, "--repeats", "2", "--agent", AGENT, "--out", str(local), "--no-progress", check=False
    )

    a = {r["id"]: r for r in records(local)}
    b = records(remote)
    assert len(a) == 10 and sorted(r["id"] for r in b) == sorted(a)  # each conversation once
    for r in b:  # byte-identical transcripts, and everything else but the clock
        rid = r["id"]
        assert json.dumps(r["transcript"], ensure_ascii=False) == json.dumps(
            a[rid]["transcript"], ensure_ascii=False
        )
        assert comparable(r) == comparable(a[rid]), rid
    ids, meta = stored(remote)
    assert sorted(ids) == sorted(a)  # the driver's store: one row per conversation
    assert meta["ray"]["workers"] == 2 and meta["ray"]["lost"] == [] and meta["ray"]["retried"] == 0
    # how the run was shared: each worker's delivered conversations and its own CPU, in the meta and
    # on stderr; both nodes ran some
    ran = meta["ray"]["ran"]
    assert len(ran) == 2 and all(w["conversations"] >= 1 and w["cpu_s"] > 0 for w in ran), ran
    assert [w["lanes"] for w in ran] == [2, 2] and meta["ray"]["concurrency"] == 4
    assert sum(w["conversations"] for w in ran) == 10
    assert "conversations per worker " + "/".join(str(w["conversations"]) for w in ran) in res.stderr
    assert (remote / "report.html").is_file()


def _wait(what, predicate, timeout: float, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"timed out waiting for {what}: {proc.communicate()}")
        time.sleep(0.2)


# static conversations of one turn whose agent takes 1 s: 24 of them keep both workers busy for a
# while whichever starts first; 40 at one lane per worker (--concurrency 2 in all) go out in batches
# (a lost worker holds a batch, finished conversations of it included)
@pytest.mark.parametrize("cluster", [1.0], indirect=True)
@pytest.mark.parametrize(
    ("repeats", "lanes"), [(6, 2), (10, 1)], ids=["one-per-call", "batches"]
)  # per worker
def test_losing_a_worker_node_mid_run_loses_nothing_and_duplicates_nothing(
    cluster, tmp_path, monkeypatch, repeats, lanes
):
    c, workers, inflight = cluster
    out = tmp_path / "ray"
    suite = ["--id", "B1-CL-01", "--id", "B1-EI-01", "--repeats", str(repeats)]
    total = 4 * repeats  # two cases, each in groups A and B
    # the driver in its own process, as on a real cluster; this process owns the nodes
    proc = subprocess.Popen(
        [sys.executable, "-m", "usersim", "run", *suite, "--agent", AGENT,
         "--ray", c.address, "--concurrency", str(2 * lanes), "--out", str(out), "--no-progress"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        jsonl = out / "results.jsonl"

        def both_busy_and_one_stored() -> bool:
            busy = [p for p, s in read_inflight(inflight).items() if s["calls"]]
            return len(busy) == 2 and jsonl.is_file() and len(jsonl.read_text().splitlines()) >= 1

        _wait("both workers to run conversations", both_busy_and_one_stored, 300, proc)
        assert len(jsonl.read_text().splitlines()) < total - 4  # mid-run: both workers hold conversations
        c.remove_node(workers[1], allow_graceful=False)  # the node dies with its worker
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode in (0, 1), stderr
    assert "ray: worker lost" in stderr, stderr

    lines = records(out)
    ids, meta = stored(out)
    assert (
        len(lines) == total and len({r["id"] for r in lines}) == total
    )  # each conversation once in results.jsonl
    assert sorted(ids) == sorted(r["id"] for r in lines)  # and once in the store
    assert all(r["status"] != "error" for r in lines), [r["error"] for r in lines if r["status"] == "error"]
    assert len(meta["ray"]["lost"]) == 1 and meta["ray"]["retried"] >= 1, meta["ray"]
    ran = meta["ray"]["ran"]  # the lost worker's stored conversations count, its CPU is unknown
    assert (
        sum(w["conversations"] for w in ran) == total and [w["cpu_s"] is None for w in ran].count(True) == 1
    ), ran
    if lanes == 1:  # batches were in flight (calls that returned: fewer than conversations)
        assert meta["ray"]["calls"] < total, meta["ray"]
    assert f"{meta['ray']['retried']} conversation(s) retried on the others" in stderr

    # the retried conversations are the ones a local run has (same seed: same transcripts)
    monkeypatch.setenv("USERSIM_TEST_INFLIGHT_DIR", str(tmp_path))
    monkeypatch.setenv("USERSIM_TEST_AGENT_DELAY", "0")
    local = tmp_path / "local"
    usersim("run", *suite, "--agent", AGENT, "--out", str(local), "--no-progress", check=False)
    a = {r["id"]: comparable(r) for r in records(local)}
    assert {r["id"]: comparable(r) for r in lines} == a


@pytest.mark.parametrize("cluster", [1.0], indirect=True)
def test_losing_every_worker_stops_the_run_and_resume_finishes_it(cluster, tmp_path):
    c, workers, inflight = cluster
    out = tmp_path / "ray"
    suite = ["--id", "B1-CL-01", "--id", "B1-EI-01", "--repeats", "6", "--agent", AGENT, "--no-progress"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "usersim", "run", *suite, "--ray", c.address, "--concurrency", "4", "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        jsonl = out / "results.jsonl"
        _wait(
            "a stored conversation",
            lambda: jsonl.is_file() and len(jsonl.read_text().splitlines()) >= 1,
            300,
            proc,
        )
        for node in workers:
            c.remove_node(node, allow_graceful=False)
        _, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, stderr
    assert "Error: every Ray worker is lost" in stderr and "continue with --resume" in stderr, stderr
    assert "Traceback" not in stderr
    kept, _ = stored(out)
    assert 1 <= len(kept) < 24  # what finished before is stored

    c.add_node(num_cpus=1, object_store_memory=80 * 1024**2)  # a new node: the run goes on with --resume
    c.wait_for_nodes()
    usersim("run", *suite, "--ray", c.address, "--out", str(out), "--resume", check=False)
    ids, meta = stored(out)
    lines = records(out)
    assert len(ids) == 24 and set(kept) <= set(ids)
    assert sorted(r["id"] for r in lines) == sorted(ids)  # results.jsonl: each conversation once
    assert all(r["status"] != "error" for r in lines)


def test_ray_local_starts_a_worker_per_cpu_that_share_the_concurrency(tmp_path, monkeypatch):
    """I/O-bound (the agent awaits): `--ray local` uses the machine's CPUs, one worker each, and
    --concurrency is the run's total in flight, split across them (as in one process); each worker
    keeps its share in flight, more than the CPUs in all."""

    inflight = tmp_path / "inflight"
    inflight.mkdir()
    cpus = os.cpu_count() or 1
    concurrency = cpus + 3
    shares = [concurrency // cpus + (1 if i < concurrency % cpus else 0) for i in range(cpus)]
    env = tmp_path / "runtime_env.yaml"  # the workers' environment through --ray-runtime-env
    env.write_text(
        f"env_vars:\n  USERSIM_TEST_INFLIGHT_DIR: '{inflight}'\n  USERSIM_TEST_AGENT_DELAY: '1.0'\n",
        encoding="utf-8",
    )
    out = tmp_path / "ray"
    # rounds of 1 s enough for every worker to have its share busy, whichever starts first
    repeats = 3 * concurrency
    res = _ray_local(
        out, "--repeats", str(repeats), "--concurrency", str(concurrency), "--ray-runtime-env", str(env)
    )
    lines = records(out)
    assert len(lines) == 2 * repeats and all(r["status"] != "error" for r in lines)  # groups A and B
    ran = read_inflight(inflight)
    assert len(ran) == cpus, ran  # one worker per CPU, each its own process
    assert sum(s["calls"] for s in ran.values()) == 2 * repeats
    # each worker had its share of --concurrency in flight at once, never more: the total, not per worker
    assert sorted(s["max_inflight"] for s in ran.values()) == sorted(shares), (ran, shares)
    _, meta = stored(out)
    assert meta["ray"]["concurrency"] == concurrency and meta["ray"]["workers"] == cpus
    assert sorted(w["lanes"] for w in meta["ray"]["ran"]) == sorted(shares)
    assert f"ray: {cpus} worker(s), {concurrency} conversation(s) in flight" in res.stderr


def test_a_long_queue_goes_out_in_batches_that_keep_the_concurrency_and_the_records(tmp_path, monkeypatch):
    """While many trials wait, a lane sends several per call (fewer calls than conversations); a
    batch runs one conversation after another, so the one worker (--ray-actors 1) still has
    --concurrency in flight, and the records are a local run's."""

    inflight = tmp_path / "inflight"
    inflight.mkdir()
    env = tmp_path / "runtime_env.yaml"
    env.write_text(
        f"env_vars:\n  USERSIM_TEST_INFLIGHT_DIR: '{inflight}'\n  USERSIM_TEST_AGENT_DELAY: '0.05'\n",
        encoding="utf-8",
    )
    suite = ["--id", "B1-EI-01", "--repeats", "20", "--agent", AGENT, "--no-progress"]  # 40 conversations
    out = tmp_path / "ray"
    _ray_local(
        out, "--repeats", "20", "--concurrency", "2", "--ray-actors", "1", "--ray-runtime-env", str(env)
    )
    ids, meta = stored(out)
    lines = records(out)
    assert len(ids) == 40 and sorted(ids) == sorted(r["id"] for r in lines) and len(set(ids)) == 40
    assert meta["ray"]["calls"] < 40, meta["ray"]  # batches: fewer calls than conversations
    assert [w["conversations"] for w in meta["ray"]["ran"]] == [40]
    (stats,) = read_inflight(inflight).values()
    assert stats["max_inflight"] == 2, stats  # two lanes at once, one conversation each

    monkeypatch.setenv("USERSIM_TEST_INFLIGHT_DIR", str(tmp_path))
    monkeypatch.setenv("USERSIM_TEST_AGENT_DELAY", "0")
    local = tmp_path / "local"
    usersim("run", *suite, "--out", str(local), check=False)
    assert {r["id"]: comparable(r) for r in lines} == {r["id"]: comparable(r) for r in records(local)}


def test_a_case_goes_to_a_worker_until_it_holds_it_whatever_order_its_lanes_start_in(tmp_path):
    """One worker with eight lanes (--concurrency 8 --ray-actors 1) and the reference agent, which
    answers at once: the lanes' first calls leave together and an async actor may start them in any
    order, so each carries the case until one has returned; after that trials go by the case's key
    alone. Every conversation runs (none is an error record, none is lost) and the case was sent
    far fewer times than there were calls."""
    import ray

    out = tmp_path / "ray"
    try:
        res = usersim(
            "run", "--id", "B1-EI-01", "--repeats", "24", "--concurrency", "8", "--ray-actors", "1",
            "--ray", "local", "--out", str(out), "--no-progress", check=False,
        )  # fmt: skip
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert res.returncode in (0, 1), res.stderr
    lines = records(out)
    assert len(lines) == 48 and not [r["error"] for r in lines if r["status"] == "error"]
    _, meta = stored(out)
    assert 1 <= meta["ray"]["cases_sent"] <= 8 < meta["ray"]["calls"], meta["ray"]


def test_ray_local_starts_its_own_ray_beside_a_running_cluster(cluster, tmp_path, monkeypatch):
    """`--ray local` with a cluster already on this machine (the fixture's): the run gets a new Ray
    of its own, it does not join the cluster (whose raylets would run it with their environment)."""

    _, _, cluster_inflight = cluster
    mine = tmp_path / "inflight-local-ray"
    mine.mkdir()
    monkeypatch.setenv("USERSIM_TEST_INFLIGHT_DIR", str(mine))  # a local Ray's workers inherit this
    out = tmp_path / "ray"
    _ray_local(out)
    assert len(records(out)) == 2
    assert sum(s["calls"] for s in read_inflight(mine).values()) == 2  # the run's own Ray ran both
    assert read_inflight(cluster_inflight) == {}  # the cluster ran nothing
