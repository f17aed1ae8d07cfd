"""A check that can never fail (or never pass) in the case as written decides nothing: `usersim
validate` reports it at its file:line with why and a did-you-mean, and the case does not load for a
run. Each entry of data/vacuous_checks.yaml is the vacuous input, the exact problem, and a control
of the same check type that validates, in the travel seeds' shape and in the bank example."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import usersim
from usersim.cases.loader import deep_merge, load_cases_partial

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank"
ENTRIES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "vacuous_checks.yaml").read_text("utf-8")
)

TRAVEL = {
    "id": "VAC-T",
    "title": "京都 5 天行程",
    "dimension": "C1",
    "mode": "static",
    "input": {"message": "帮我规划一下京都 5 天的行程"},
    "context": {"current_date": "2025-03-10"},
    "skills": {"skill_enabled": True, "active_skills": ["itinerary-planning"]},
    "judging": {"scoring": {"methods": ["auto"]}},
}
BANK_CASE = {
    "include": "_suite.yaml",
    "id": "VAC-B",
    "title": "Block and replace a card",
    "persona": "../personas/tom-replacement.yaml",
    "judging": {},
}


def _problems(tmp: Path, domain: str, overrides: dict[str, Any], check: dict[str, Any]) -> list[str]:
    base = deep_merge(TRAVEL if domain == "travel" else BANK_CASE, overrides)
    case = deep_merge(base, {"judging": {"checks": [check]}})
    if domain == "bank":  # the bank example's suite, state and tools next to the case
        shutil.copytree(BANK, tmp / "bank", dirs_exist_ok=True)
        tmp = tmp / "bank" / "cases"
    path = tmp / f"{case['id']}.yaml"
    path.write_text(yaml.safe_dump(case, allow_unicode=True, sort_keys=False), encoding="utf-8")
    cases, problems = load_cases_partial([path])
    assert bool(cases) != bool(problems)  # a case with a problem is not loaded for a run
    return [f"{p.field}: {p.message}" for p in problems]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_a_check_that_cannot_decide_is_a_problem(entry: dict[str, Any], tmp_path: Path) -> None:
    got = _problems(tmp_path, entry["domain"], entry.get("case", {}), entry["check"])
    if "problem" in entry:
        assert got == [entry["problem"]]
    else:
        assert len(got) == 1 and got[0].startswith(entry["problem_starts"]), got


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_the_control_validates(entry: dict[str, Any], tmp_path: Path) -> None:
    overrides = entry.get("control_case", entry.get("case", {}))
    assert _problems(tmp_path, entry["domain"], overrides, entry["control"]) == []


def test_validate_names_the_file_line_and_exits_2(tmp_path: Path) -> None:
    """A folder with a vacuous bank case (its `turns` limit is its max_turns) and a travel seed
    (C2-TD-04 as it once was: turns {max: 20} with max_turns 20): both reported, exit 2."""
    shutil.copytree(BANK, tmp_path / "bank")
    bank_case = tmp_path / "bank" / "cases" / "bank-03-replacement-standard.yaml"
    text = bank_case.read_text("utf-8")
    bank_case.write_text(text.replace("  checks:\n", "  checks:\n    - turns: {max: 12}\n", 1), "utf-8")
    seed = (ROOT / "usersim" / "cases" / "c2" / "C2-TD-04.yaml").read_text("utf-8")
    seed = seed.replace("    - stop_reason: {in: [goal_met]}\n", "    - turns: {max: 20}\n", 1)
    (tmp_path / "C2-TD-04.yaml").write_text(seed, "utf-8")
    res = usersim("validate", str(tmp_path / "bank" / "cases"), str(tmp_path / "C2-TD-04.yaml"), check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    out = res.stdout
    assert (
        f"{bank_case}:7: judging.checks.0.turns.max: turns can never fail here: the conversation is "
        "stopped at max_turns 12, within the limit of 12." in out
    )
    line = seed.splitlines().index("    - turns: {max: 20}") + 1
    assert (
        f"{tmp_path / 'C2-TD-04.yaml'}:{line}: judging.checks.3.turns.max: turns can never fail here: "
        "the conversation is stopped at max_turns 20, within the limit of 20." in out
    )
    assert "2 with problems, 2 problem(s)" in out + res.stderr
