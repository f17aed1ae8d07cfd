"""Library-wide: every rubric criterion carries a polarity, and a seed Fail condition is never
written as a requirement (a requirement passes only when it holds, so a correct agent would fail it)."""

from __future__ import annotations

import re

from tests.cases.library import CASES
from usersim.cases.loader import case_files, file_kind, load_case
from usersim.cases.schema import Case

_FAIL_MARK = re.compile(r"[（(]\s*Fail\s*(?:[)）]|[：:])", re.IGNORECASE)


def _all_cases() -> list[Case]:
    return [load_case(p) for p in case_files([CASES]) if file_kind(p) == "case"]  # personas beside cases


def test_every_criterion_has_a_polarity_and_no_fail_text_is_a_requirement():
    cases = _all_cases()
    assert len(cases) >= 126
    bad = []
    n = 0
    for case in cases:
        for crit in case.judging.rubric:
            n += 1
            assert crit.polarity in ("requirement", "failure"), (case.id, crit)
            if crit.polarity == "requirement" and _FAIL_MARK.search(crit.text):
                bad.append(f"{case.id}: {crit.text}")
    assert n > 0
    assert not bad, "Fail conditions written as requirements:\n" + "\n".join(bad)


def test_the_thirteen_c5_fail_conditions_are_failure_criteria():
    by_id = {c.id: c for c in _all_cases()}
    ids = [
        "C5-EI-01", "C5-EI-02", "C5-MI-01", "C5-MI-02", "C5-MI-03", "C5-LI-01", "C5-LI-02",
        "C5-LI-03", "C5-LT-03", "C5-LC-01", "C5-LC-02", "C5-LS-01", "C5-LS-02",
    ]  # fmt: skip
    for cid in ids:
        failures = [c for c in by_id[cid].judging.rubric if c.polarity == "failure"]
        assert len(failures) == 1, cid
        assert not _FAIL_MARK.search(failures[0].text), cid
    assert by_id["C5-EI-01"].judging.rubric[1].text == "推荐了海鲜且未提及过敏风险"
