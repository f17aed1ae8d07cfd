"""Coverage-guided exploration through the CLI: the coverage map of an exploration (coverage.json and
report.html), and `--strategy guided` finding a failure planted in a narrow corner of persona space
(three settings at once) in fewer conversations than the random strategy over the same axes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import yaml

from tests.integration.test_cli_run import records, usersim
from usersim.cases.loader import load_cases
from usersim.core.record import RunRecord
from usersim.graphs.nearness import nearness
from usersim.personas.covering import covering_rows, design_seed
from usersim.personas.loader import resolve_persona
from usersim.personas.variation import variant_axes

BANK = "examples/bank/cases"
# fails only with reveal all_at_once + verbosity low + typo_prone; one or two of them: near misses
NARROW = "python:tests.support.narrow_bank:fast_path"
CORRECT = "python:examples.bank.agent:correct"
SEEDS = tuple(range(20))
BUDGET = 12


def _explore(out: Path, strategy: str, seed: int, n: int = BUDGET, agent: str = NARROW):
    res = usersim(
        "explore", BANK, "--id", "BANK-01", "--agent", agent, "--n", str(n), "--seed", str(seed),
        "--strategy", strategy, "--no-progress", "--out", str(out),
    )  # fmt: skip
    return res, records(out), json.loads((out / "coverage.json").read_text(encoding="utf-8")), out


def _planted(record: dict) -> bool:
    """The planted flaw's failure: the card blocked before the identity check."""
    return record["status"] == "failed" and any(
        v["judge"] == "tool_order" and v["verdict"] == "fail" and "out of order" in v["reason"]
        for v in record["verdicts"]
    )


def _in_corner(values: dict[str, list[str]]) -> bool:
    return (
        values["reveal_policy"] == ["all_at_once"]
        and values["trait.verbosity"] == ["low"]
        and values["trait.typo_prone"] == ["true"]
    )


def _first_failure(recs: list[dict]) -> int | None:
    """1-based plan position (results.jsonl order) of the first conversation the planted flaw failed."""
    return next((i for i, r in enumerate(recs, start=1) if _planted(r)), None)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("guided")
    return {
        (strategy, seed): _explore(root / f"{strategy}-{seed}", strategy, seed)
        for strategy in ("guided", "random")
        for seed in SEEDS
    }


def test_guided_finds_the_planted_failure_in_fewer_runs_than_random(both):
    """Measured (seeds 0-19, 12 conversations each): guided found it under 17 seeds, median run 7;
    random over the same axes under 11, median 12. Replacing guided by random fails this test."""
    runs = {s: [_first_failure(both[(s, seed)][1]) for seed in SEEDS] for s in ("guided", "random")}
    capped = {s: [r or BUDGET + 1 for r in v] for s, v in runs.items()}  # not found: worse than the budget
    found = {s: sum(r is not None for r in v) for s, v in runs.items()}
    hits = {s: sum(_planted(r) for seed in SEEDS for r in both[(s, seed)][1]) for s in runs}
    print(f"runs to first failure over seeds {SEEDS}: {runs}; planted failures hit: {hits}")
    assert all(len(both[(s, seed)][1]) == BUDGET for s in ("guided", "random") for seed in SEEDS)
    assert found["guided"] >= found["random"] + 3, runs
    assert found["guided"] >= 0.75 * len(SEEDS), runs
    assert statistics.median(capped["guided"]) < statistics.median(capped["random"]), runs
    assert statistics.mean(capped["guided"]) < statistics.mean(capped["random"]) - 1, runs
    # once there, guided stays near it (recombinations of the failure): many more failing conversations
    assert hits["guided"] >= 3 * hits["random"], hits
    for seed in SEEDS:
        res, recs, cov, _ = both[("guided", seed)]
        # the map's own count is the plan position of the first failure (of any kind), and the console says it
        first_any = next((i for i, r in enumerate(recs, start=1) if r["status"] in ("failed", "error")), None)
        assert cov["first_failure_run"] == first_any
        if first_any is not None:
            assert first_any <= (runs["guided"][SEEDS.index(seed)] or BUDGET)
            assert f"first failure at run {first_any} of {BUDGET}" in res.stdout
        # the planted failure sits in its corner, and every conversation there hit it
        planted = {r["id"] for r in recs if _planted(r)}
        for f in cov["features"]:
            assert (f["record_id"] in planted) == _in_corner(f["values"]), f


def test_the_planted_agent_degrades_with_each_setting_of_the_corner_and_fails_only_with_all(both):
    """The gradient guidance follows: conversations nearer the corner (more of its three settings)
    come nearer to failing, read from their records (refused tool calls, a missed scripted event)."""
    by_settings: dict[int, list[float]] = {0: [], 1: [], 2: [], 3: []}
    for (_, _seed), (_, recs, cov, _) in both.items():
        values = {f["record_id"]: f["values"] for f in cov["features"]}
        for r in recs:
            v = values[r["id"]]
            held = (v["reveal_policy"] == ["all_at_once"]) + (v["trait.verbosity"] == ["low"])
            held += v["trait.typo_prone"] == ["true"]
            by_settings[held].append(nearness(RunRecord.model_validate(r)))
    means = {k: statistics.mean(v) for k, v in by_settings.items()}
    assert all(by_settings.values()), {k: len(v) for k, v in by_settings.items()}
    assert means[0] < means[1] < means[2] < means[3] == 1.0, means
    assert max(by_settings[2]) < 1.0  # two of the three settings never fail
    assert sum(n > 0 for n in by_settings[1]) > 0.7 * len(by_settings[1])  # one alone: mostly a near miss


def test_guided_spends_its_budget_in_rounds_that_first_try_every_value(both):
    _, recs, cov, _ = both[("guided", 0)]
    rounds = cov["rounds"]
    assert sum(r["conversations"] for r in rounds) == BUDGET and rounds[0]["kind"] == "covering"
    first = [f for f in cov["features"][: rounds[0]["conversations"]]]
    for d in cov["dimensions"]:
        if d["steerable"]:  # the covering round already tries every value of every axis
            assert {v for f in first for v in f["values"][d["name"]]} == set(d["possible"]), d["name"]
    # ... and it is the random strategy's start: the same first conversations
    _, random_recs, _, _ = both[("random", 0)]
    size = rounds[0]["conversations"]
    assert [r["transcript"] for r in recs[:size]] == [r["transcript"] for r in random_recs[:size]]
    # a failure found before the last round is mutated in the next (a neighbour, or a new seed of it)
    for seed in SEEDS:
        _, recs, cov, _ = both[("guided", seed)]
        rounds = cov["rounds"]
        plan_end = [sum(r["conversations"] for r in rounds[: i + 1]) for i in range(len(rounds))]
        first = cov["first_failure_run"]
        if first is None:
            continue
        found_in = next(i for i, end in enumerate(plan_end) if first <= end)
        if found_in + 1 < len(rounds):
            failed = {r["id"] for r in recs[: plan_end[found_in]] if r["status"] == "failed"}
            assert failed & set(rounds[found_in + 1]["mutated"]), (seed, rounds)


def test_guided_is_deterministic_per_seed(tmp_path, both):
    _, again, _, _ = _explore(tmp_path / "again", "guided", 2)
    _, first, _, _ = both[("guided", 2)]
    assert [(r["id"], r["transcript"]) for r in again] == [(r["id"], r["transcript"]) for r in first]


def test_random_strategy_is_the_default(tmp_path):
    default = tmp_path / "default"
    usersim(
        "explore",
        BANK,
        "--id",
        "BANK-01",
        "--agent",
        CORRECT,
        "--n",
        "2",
        "--seed",
        "3",
        "--out",
        str(default),
    )
    _, named, cov, _ = _explore(tmp_path / "named", "random", 3, n=2, agent=CORRECT)
    assert [(r["id"], r["transcript"]) for r in records(default)] == [
        (r["id"], r["transcript"]) for r in named
    ]
    assert cov["strategy"] == "random" and not cov["rounds"]


def test_coverage_json_lists_what_a_tiny_exploration_never_tried(tmp_path):
    out = tmp_path / "tiny"
    res, recs, cov, _ = _explore(out, "random", 0, n=2, agent=CORRECT)
    dims = {d["name"]: d for d in cov["dimensions"]}
    base = resolve_persona(next(c for c in load_cases([BANK]) if c.id == "BANK-01"))
    rows = covering_rows(variant_axes(base), 2, design_seed(base.id, 0))  # the two variants random ran
    for name in ("clarity", "patience", "cooperativeness", "verbosity", "decisiveness", "tech_savvy"):
        used = {r[f"trait.{name}"] for r in rows}
        assert dims[f"trait.{name}"]["never_tried"] == [x for x in ("low", "medium", "high") if x not in used]
    typos = {str(r["trait.typo_prone"]).lower() for r in rows}
    assert dims["trait.typo_prone"]["never_tried"] == [x for x in ("false", "true") if x not in typos]
    # random varies the reveal policy too (the same axes as guided): two variants, two policies
    policies = [r["reveal_policy"] for r in rows]
    assert len(set(policies)) == 2 and dims["reveal_policy"]["steerable"]
    assert dims["reveal_policy"]["tried"] == {p: 1 for p in policies}
    assert dims["reveal_policy"]["never_tried"] == [
        p for p in ("all_at_once", "when_asked", "gradually") if p not in policies
    ]
    assert dims["language"]["never_tried"] == ["zh"] and not dims["language"]["steerable"]
    called = {e["name"] for r in recs for e in r["tool_trace"]}
    assert called == set(dims["tool"]["tried"]) and "block_card" in called
    bank_tools = set(dims["tool"]["possible"]) - {"none"}
    assert {"find_customer", "transfer_funds", "open_dispute", "update_address"} <= bank_tools
    assert set(dims["tool"]["never_tried"]) == (bank_tools - called) | {"none"}
    assert dims["event"]["possible"] == ["#0 say", "none"] and dims["event"]["tried"] == {"#0 say": 2}
    assert dims["outcome"]["tried"] == {"passed": 2} and "failed" in dims["outcome"]["never_tried"]
    assert "intercept" not in dims  # BANK-01 has no tool intercepts
    assert cov["pairs"]["total"] == 231 and cov["pairs"]["covered"] == 2 * 28  # each row: 28 new pairs
    assert "coverage (random):" in res.stdout and "no failure in 2 runs" in res.stdout

    # the report shows the map, and `usersim report` rebuilds it from the stored run
    for _ in range(2):
        page = (out / "report.html").read_text(encoding="utf-8")
        assert "Coverage map: what was never tried" in page
        row = page[page.index(">reveal_policy<") :][:600]
        never = dims["reveal_policy"]["never_tried"][0]
        assert never in row and all(f"{p} (1)" in row for p in policies)
        assert "find_customer" in page[page.index(">tool<") :][:800]
        usersim("report", str(out))


@pytest.mark.parametrize("strategy", ["guided", "random"])
def test_a_failure_promotes_with_its_own_variant(tmp_path, both, strategy):
    """promote rebuilds an explored variant from the levels in the run (not from `vary`'s variants of
    the same id), so the regression case fails the narrow agent again and passes the correct one."""
    _, recs, cov, out = next(
        both[(strategy, seed)] for seed in SEEDS if _first_failure(both[(strategy, seed)][1])
    )
    failing = next(r for r in recs if _planted(r))
    levels = next(f for f in cov["features"] if f["record_id"] == failing["id"])["values"]
    path = Path(usersim("promote", str(out), failing["id"], "--to", str(tmp_path / "reg")).stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    pinned = case["persona_overrides"]
    assert pinned["id"] == failing["variant"]["persona"]
    assert pinned["reveal_policy"] == "all_at_once" == levels["reveal_policy"][0]
    assert pinned["traits"]["verbosity"] == "low" and pinned["traits"]["typo_prone"] is True
    for agent, status in ((NARROW, "failed"), (CORRECT, "passed")):
        run = tmp_path / f"run-{status}"
        usersim("run", str(path), "--agent", agent, "--out", str(run), "--no-progress", check=False)
        (rec,) = records(run)
        assert rec["status"] == status, rec["verdicts"]
