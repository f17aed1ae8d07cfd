"""Exploration through the CLI: persona variants, branching from a checkpoint, failure clusters."""

from __future__ import annotations

import json

from tests.integration.test_cli_run import records, usersim


def test_explore_variants_branches_and_clusters(tmp_path):
    out = tmp_path / "x"
    usersim(
        "explore",
        "--id",
        "C2-TD-04",
        "--n",
        "3",
        "--seed",
        "5",
        "--branch-at",
        "2",
        "--branches",
        "2",
        "--out",
        str(out),
    )
    recs = records(out)
    base = [r for r in recs if not r["branch"]]
    branches = [r for r in recs if r["branch"]]
    assert len(base) == 3
    assert len({r["variant"]["persona"] for r in base}) == 3
    assert all(r["variant"]["persona"].startswith("japan-first-trip~v") for r in base)
    by_id = {r["id"]: r for r in base}
    grown = [r for r in base if r["turns"] > 2]
    assert len(branches) == 2 * len(grown) and branches
    for b in branches:
        parent = by_id[b["branch"]["parent_id"]]
        assert b["branch"]["at_turn"] == 2
        shared = [m for m in parent["transcript"] if (m["turn"] or 0) <= 2]
        assert b["transcript"][: len(shared)] == shared  # the tree shares the checkpoint prefix
        assert b["turns"] >= 2
    clusters = json.loads((out / "clusters.json").read_text(encoding="utf-8"))
    failing = {r["id"] for r in recs if r["status"] in ("failed", "error")}
    assert {rid for c in clusters for rid in c["records"]} == failing
    assert all(c["count"] == len(c["records"]) and c["example_reason"] for c in clusters)


def test_explore_is_deterministic_per_seed(tmp_path):
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        usersim("explore", "--id", "C2-TD-04", "--n", "2", "--seed", "9", "--out", str(out))
        runs.append({r["id"]: r["transcript"] for r in records(out)})
    assert runs[0] == runs[1]


def test_explore_rejects_static_only_selection(tmp_path):
    res = usersim("explore", "--id", "B1-EI-01", "--n", "2", "--out", str(tmp_path / "s"), check=False)
    assert res.returncode != 0 and "organic" in res.stderr
