"""Wordings of correct and flawed replies to the seed cases (tests/judges/seed_wordings.py): a
correct one passes every check of its case, a flawed one fails some check; each case that decides
on rule checks has at least six of each."""

from __future__ import annotations

import pytest

from tests.judges.seed_wordings import corpus, judge

WORDINGS = corpus()


def _show(results: list[tuple[str, bool | None, str]]) -> str:
    return "\n".join(f"  {name}: {passed} - {reason}" for name, passed, reason in results)


@pytest.mark.parametrize("w", [w for w in WORDINGS if w.kind == "correct"], ids=lambda w: w.id)
def test_correct_wording_passes(w) -> None:
    results = judge(w)
    assert all(p is True for _, p, _ in results), f"{w.id} should pass:\n{w.reply}\n{_show(results)}"


@pytest.mark.parametrize("w", [w for w in WORDINGS if w.kind == "flawed"], ids=lambda w: w.id)
def test_flawed_wording_fails(w) -> None:
    results = judge(w)
    assert any(p is False for _, p, _ in results), (
        f"{w.id} should fail ({w.why}):\n{w.reply}\n{_show(results)}"
    )


def test_every_corpus_case_has_six_of_each() -> None:
    by_case: dict[str, dict[str, int]] = {}
    for w in WORDINGS:
        by_case.setdefault(w.case_id, {"correct": 0, "flawed": 0})[w.kind] += 1
    assert by_case, "no seed wordings found"
    thin = {c: n for c, n in by_case.items() if min(n.values()) < 6}
    assert not thin, f"fewer than six correct or flawed wordings: {thin}"


READING = {"constraint", "count", "asked_clarification", "keywords"}


def _decides_on_reading(case) -> bool:
    return "auto" in case.judging.scoring.methods and any(
        next(iter(s)) in READING for s in case.judging.checks
    )


def test_every_seed_case_deciding_on_reading_has_a_corpus() -> None:
    from tests.judges.seed_wordings import CASES, SEEDS
    from usersim.cases.loader import case_files, load_case

    dims = [CASES / d for d in ("b1", "c1", "c2", "c5", "mt")]
    wanted = {c.id for c in map(load_case, case_files(dims)) if _decides_on_reading(c)}
    have = {p.stem for p in SEEDS.glob("*.yaml")}
    assert not wanted - have, (
        f"seed cases deciding on reading checks without wordings: {sorted(wanted - have)}"
    )
