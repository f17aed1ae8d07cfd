"""Ray backend: the same conversations as a local run, committed by the driver as tasks finish."""

from __future__ import annotations

import pytest

from tests.integration.test_cli_run import records, usersim

pytestmark = pytest.mark.slow  # `make test-fast` leaves these out; `make test` and CI run them

IDS = ["--id", "B1-CL-01", "--id", "B1-EI-01", "--id", "C2-TD-04"]


def test_ray_run_matches_local_run(tmp_path):
    local, remote = tmp_path / "local", tmp_path / "ray"
    usersim("run", *IDS, "--out", str(local), "--no-progress", check=False)  # failures exit 1
    usersim(
        "run",
        *IDS,
        "--ray",
        "local",
        "--concurrency",
        "2",
        "--out",
        str(remote),
        "--no-progress",
        check=False,
    )
    a = {r["id"]: r for r in records(local)}
    b = {r["id"]: r for r in records(remote)}
    assert set(a) == set(b) and len(a) == 5  # B1 cases run as Group A and B
    for rid in a:
        assert b[rid]["transcript"] == a[rid]["transcript"]
        assert b[rid]["status"] == a[rid]["status"]
        assert [v["reason"] for v in b[rid]["verdicts"]] == [v["reason"] for v in a[rid]["verdicts"]]
    assert (remote / "report.html").is_file()


def test_the_report_of_a_ray_run_is_the_one_its_store_gives(tmp_path):
    """The workers make each record's transcript section (the driver renders none): report.html is
    byte for byte the page written again from the run folder's store, every record parsed there."""
    from usersim.graphs.outputs import write_outputs
    from usersim.graphs.store import RunStore

    out = tmp_path / "ray"
    usersim("run", *IDS, "--repeats", "2", "--ray", "local", "--out", str(out), "--no-progress", check=False)
    report, summary = (out / "report.html").read_bytes(), (out / "summary.json").read_bytes()
    assert b"B1-CL-01" in report and b"C2-TD-04" in report
    store = RunStore(out / "results.sqlite")
    try:
        write_outputs(out, store, store.get_meta())
    finally:
        store.close()
    assert (out / "report.html").read_bytes() == report
    assert (out / "summary.json").read_bytes() == summary
