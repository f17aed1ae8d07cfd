"""Every field of a case, a persona and a SKILL.md frontmatter replaced by values of the wrong type:
each gives file:line problems (or is accepted); no validator crashes (`methods: 5`, `[[auto]]`,
`difficulty: [easy]`, a milestone check `{}` once did)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from usersim.cli.cases import validate_file

ROOT = Path(__file__).resolve().parents[2] / "usersim"
WRONG: list[Any] = [5, None, [[1]], {"a": [1]}]
SOURCES = [
    ("case", ROOT / "cases" / "c2" / "C2-SC-01.yaml"),
    ("persona", ROOT / "personas" / "library" / "japan-first-trip.yaml"),
    ("skill", ROOT / "sandbox" / "skills" / "flight-selection" / "SKILL.md"),
]


def _paths(data: Any, loc: tuple = ()):
    if isinstance(data, dict):
        for k, v in data.items():
            yield (*loc, k)
            yield from _paths(v, (*loc, k))
    elif isinstance(data, list):
        for i, v in enumerate(data[:2]):
            yield (*loc, i)
            yield from _paths(v, (*loc, i))


def _set(data: Any, loc: tuple, value: Any) -> None:
    for part in loc[:-1]:
        data = data[part]
    data[loc[-1]] = value


@pytest.mark.parametrize(("kind", "src"), SOURCES, ids=lambda x: getattr(x, "name", x))
def test_no_validator_crashes_on_a_wrong_type(tmp_path, kind, src):
    text = src.read_text(encoding="utf-8")
    body = ""
    if kind == "skill":
        _, front, body = text.split("---", 2)
        data = yaml.safe_load(front)
    else:
        data = yaml.safe_load(text)
    checked = 0
    for n, loc in enumerate(_paths(data)):
        for m, value in enumerate(WRONG):
            mutant = copy.deepcopy(data)
            _set(mutant, loc, value)
            dumped = yaml.safe_dump(mutant, allow_unicode=True)
            folder = tmp_path / f"{n}-{m}" / {"persona": "personas", "skill": src.parent.name}.get(kind, "")
            folder.mkdir(parents=True)
            path = folder / src.name
            path.write_text(f"---\n{dumped}---{body}" if kind == "skill" else dumped, encoding="utf-8")
            for problem in validate_file(path):
                where = ".".join(map(str, loc))
                assert problem.file == str(path) and problem.line >= 1, (where, value, str(problem))
                assert "internal error" not in problem.message, (where, value, str(problem))
                assert not problem.message.startswith("cannot "), (where, value, str(problem))
            checked += 1
    assert checked >= 20
