"""Shared helper for the case-library tests: one dimension folder, loaded through the real loader."""

from __future__ import annotations

from pathlib import Path

from usersim.cases.loader import case_files, load_case
from usersim.cases.schema import Case

CASES = Path(__file__).resolve().parents[2] / "usersim" / "cases"


def load_dir(dim: str) -> dict[str, Case]:
    """Every case of cases/<dim>/ by id (validated with checks and tool names); file stem == id."""
    out = {}
    for path in case_files([CASES / dim]):
        case = load_case(path)
        assert path.stem == case.id, f"{path.name} holds case {case.id}"
        out[case.id] = case
    return out
