"""Coverage-guided exploration through the CLI: the coverage map of an exploration (coverage.json and
report.html), and `--strategy guided` finding a failure planted in a narrow corner of persona space in
fewer conversations than the random strategy."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import yaml

from tests.integration.test_cli_run import records, usersim
from usersim.cases.loader import load_cases
from usersim.personas.loader import resolve_persona
from usersim.personas.variation import vary

BANK = "examples/bank/cases"
NARROW = "python:tests.support.narrow_bank:fast_path"  # fails only: reveal all_at_once + verbosity low
CORRECT = "python:examples.bank.agent:correct"
SEEDS = (0, 1, 2, 3, 4)
BUDGET = 10


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
    return values["reveal_policy"] == ["all_at_once"] and values["trait.verbosity"] == ["low"]


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
    runs = {s: [_first_failure(both[(s, seed)][1]) for seed in SEEDS] for s in ("guided", "random")}
    capped = {s: [r or BUDGET + 1 for r in v] for s, v in runs.items()}  # not found: worse than the budget
    print(f"runs to first failure over seeds {SEEDS}: {runs}")
    assert all(len(both[(s, seed)][1]) == BUDGET for s in ("guided", "random") for seed in SEEDS)
    assert statistics.median(capped["guided"]) <= statistics.median(capped["random"]), runs
    assert sum(capped["guided"]) < sum(capped["random"]), runs
    assert all(runs["guided"]), runs  # guided finds it under every seed
    for seed in SEEDS:
        res, recs, cov, _ = both[("guided", seed)]
        # the map's own count is the plan position of the first failure (of any kind), and the console says it
        first_any = next(i for i, r in enumerate(recs, start=1) if r["status"] in ("failed", "error"))
        assert cov["first_failure_run"] == first_any <= runs["guided"][SEEDS.index(seed)]
        assert f"first failure at run {first_any} of {BUDGET}" in res.stdout
        # the planted failure sits in its corner, and every conversation there hit it
        planted = {r["id"] for r in recs if _planted(r)}
        for f in cov["features"]:
            assert (f["record_id"] in planted) == _in_corner(f["values"]), f


def test_guided_spends_its_budget_in_rounds_that_first_try_every_value(both):
    _, recs, cov, _ = both[("guided", 0)]
    rounds = cov["rounds"]
    assert sum(r["conversations"] for r in rounds) == BUDGET and rounds[0]["kind"] == "diverse"
    first = [f for f in cov["features"][: rounds[0]["conversations"]]]
    for d in cov["dimensions"]:
        if d["steerable"]:  # the diverse round already tries every value of every 3-valued axis
            assert {v for f in first for v in f["values"][d["name"]]} == set(d["possible"]), d["name"]
    # a failure found before the last round is mutated in the next (a neighbour, or a new seed of it)
    for seed in SEEDS:
        _, recs, cov, _ = both[("guided", seed)]
        rounds = cov["rounds"]
        plan_end = [sum(r["conversations"] for r in rounds[: i + 1]) for i in range(len(rounds))]
        first = cov["first_failure_run"]
        found_in = next(i for i, end in enumerate(plan_end) if first <= end)
        if found_in + 1 < len(rounds):
            failed = {r["id"] for r in recs[: plan_end[found_in]] if r["status"] == "failed"}
            assert failed & set(rounds[found_in + 1]["mutated"]), (seed, rounds)


def test_guided_is_deterministic_per_seed(tmp_path, both):
    _, again, _, _ = _explore(tmp_path / "again", "guided", 2)
    _, first, _, _ = both[("guided", 2)]
    assert [(r["id"], r["transcript"]) for r in again] == [(r["id"], r["transcript"]) for r in first]


def test_random_strategy_is_the_default_and_unchanged(tmp_path):
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
    case = next(c for c in load_cases([BANK]) if c.id == "BANK-01")
    variants = vary(resolve_persona(case), 2, 0)  # the two variants the random strategy ran
    for name in ("clarity", "patience", "cooperativeness", "verbosity", "decisiveness", "tech_savvy"):
        used = {getattr(v.traits, name) for v in variants}
        assert dims[f"trait.{name}"]["never_tried"] == [x for x in ("low", "medium", "high") if x not in used]
    typos = {str(v.traits.typo_prone).lower() for v in variants}
    assert dims["trait.typo_prone"]["never_tried"] == [x for x in ("false", "true") if x not in typos]
    # random varies the default trait axes only: the reveal policy stays the persona's own
    assert dims["reveal_policy"]["tried"] == {"when_asked": 2}
    assert dims["reveal_policy"]["never_tried"] == ["all_at_once", "gradually"]
    assert dims["language"]["never_tried"] == ["zh"] and not dims["language"]["steerable"]
    called = {e["name"] for r in recs for e in r["tool_trace"]}
    assert called == set(dims["tool"]["tried"]) and "block_card" in called
    bank_tools = set(dims["tool"]["possible"]) - {"none"}
    assert {"find_customer", "transfer_funds", "open_dispute", "update_address"} <= bank_tools
    assert set(dims["tool"]["never_tried"]) == (bank_tools - called) | {"none"}
    assert dims["event"]["possible"] == ["#0 say", "none"] and dims["event"]["tried"] == {"#0 say": 2}
    assert dims["outcome"]["tried"] == {"passed": 2} and "failed" in dims["outcome"]["never_tried"]
    assert "intercept" not in dims  # BANK-01 has no tool intercepts
    assert cov["pairs"]["total"] == 78 and cov["pairs"]["covered"] < 78  # 2 variants cannot pair everything
    assert "coverage (random):" in res.stdout and "no failure in 2 runs" in res.stdout

    # the report shows the map, and `usersim report` rebuilds it from the stored run
    for _ in range(2):
        page = (out / "report.html").read_text(encoding="utf-8")
        assert "Coverage map: what was never tried" in page
        row = page[page.index(">reveal_policy<") :][:600]
        assert "all_at_once, gradually" in row and "when_asked (2)" in row
        assert "find_customer" in page[page.index(">tool<") :][:800]
        usersim("report", str(out))


def test_a_guided_failure_promotes_with_its_own_variant(tmp_path, both):
    """promote rebuilds a guided variant from the levels in the run (not from `vary`'s variants of the
    same id), so the regression case fails the narrow agent again and passes the correct one."""
    _, recs, cov, out = both[("guided", 0)]
    failing = next(r for r in recs if r["status"] == "failed")
    levels = next(f for f in cov["features"] if f["record_id"] == failing["id"])["values"]
    path = Path(usersim("promote", str(out), failing["id"], "--to", str(tmp_path / "reg")).stdout.strip())
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    pinned = case["persona_overrides"]
    assert pinned["id"] == failing["variant"]["persona"]
    assert pinned["reveal_policy"] == "all_at_once" == levels["reveal_policy"][0]
    assert pinned["traits"]["verbosity"] == "low"
    for agent, status in ((NARROW, "failed"), (CORRECT, "passed")):
        run = tmp_path / f"run-{status}"
        usersim("run", str(path), "--agent", agent, "--out", str(run), "--no-progress", check=False)
        (rec,) = records(run)
        assert rec["status"] == status, rec["verdicts"]
