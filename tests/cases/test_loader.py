"""Case loading: schema round-trip, file:line errors with did-you-mean, include inheritance."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from usersim.cases.loader import find_case, load_case, load_cases
from usersim.cases.schema import Case
from usersim.core.yamlfile import FileProblems

GOOD = """\
id: X-01
dimension: B1
category: CL
title: 关键信息严重缺失
difficulty: 简单
input:
  message: 帮我订机票
context:
  current_date: "2026-04-07"
judging:
  expected_behavior: [不应直接调用机票搜索工具]
  pass_criteria: [未调用机票搜索工具，一次性询问了至少 3 个关键缺失信息]
  scoring: {methods: 自动, note: 自动（检查是否调用机票搜索工具 + 提问数量）}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_round_trip_keeps_every_field(tmp_path):
    case = load_case(write(tmp_path, "x.yaml", GOOD))
    assert case.difficulty == "easy" and case.judging.scoring.methods == ["auto"]
    dumped = yaml.safe_dump(case.model_dump(mode="json"), allow_unicode=True)
    again = load_case(write(tmp_path, "y.yaml", dumped))
    assert again == case


def test_three_problems_named_with_file_line_and_field(tmp_path):
    bad = write(
        tmp_path,
        "bad.yaml",
        "id: BAD-01\ndimension: B1\ntitle: t\nmodee: static\nmax_turns: many\ninput:\n  message: hi\n",
    )
    with pytest.raises(FileProblems) as err:
        load_case(bad)
    lines = sorted(str(p) for p in err.value.problems)
    assert f"{bad}:1: judging: required field is missing" in lines
    assert any(
        line.startswith(f"{bad}:4: modee: unknown field 'modee'; did you mean 'mode'?") for line in lines
    )
    assert any(line.startswith(f"{bad}:5: max_turns: Input should be a valid integer") for line in lines)


def test_nested_unknown_key_suggests_sibling(tmp_path):
    text = GOOD.replace("  current_date:", "  current_dat:")
    with pytest.raises(FileProblems) as err:
        load_case(write(tmp_path, "n.yaml", text))
    (p,) = err.value.problems
    assert p.line == 9 and p.field == "context.current_dat"
    assert "did you mean 'current_date'?" in p.message


def test_yaml_syntax_error_has_line(tmp_path):
    with pytest.raises(FileProblems) as err:
        load_case(write(tmp_path, "s.yaml", "id: a\ntitle: [unclosed\n"))
    assert "YAML syntax error" in str(err.value) and ":3:" in str(err.value)


def test_organic_case_requires_persona(tmp_path):
    text = GOOD.replace("difficulty: 简单", "difficulty: 简单\nmode: organic\nmax_turns: 5")
    with pytest.raises(FileProblems) as err:
        load_case(write(tmp_path, "o.yaml", text))
    assert "organic cases need `persona`" in str(err.value)


def test_include_inherits_and_overrides(tmp_path):
    write(tmp_path, "_base.yaml", GOOD)
    child = write(tmp_path, "child.yaml", "include: _base.yaml\nid: X-02\ninput:\n  message: 帮我订酒店\n")
    case = load_case(child)
    assert case.id == "X-02" and case.input.message == "帮我订酒店"
    assert case.judging.scoring.note == "自动（检查是否调用机票搜索工具 + 提问数量）"
    # files starting with "_" are include bases, not cases
    assert [c.id for c in load_cases([tmp_path])] == ["X-02"]


def test_duplicate_ids_are_an_error(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    with pytest.raises(FileProblems, match="duplicate case id 'X-01'"):
        load_cases([tmp_path])


def test_find_case_unknown_id_suggests(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    assert find_case("X-01", [str(tmp_path)]).id == "X-01"
    with pytest.raises(KeyError, match="Unknown case 'X-10'. Did you mean 'X-01'?"):
        find_case("X-10", [str(tmp_path)])


def test_validate_cli_exit_codes(tmp_path):
    good = write(tmp_path, "good.yaml", GOOD)
    bad = write(
        tmp_path,
        "bad.yaml",
        "id: BAD-01\ndimension: B1\ntitle: t\nmodee: static\nmax_turns: many\ninput:\n  message: hi\n",
    )
    ok = subprocess.run(
        [sys.executable, "-m", "usersim", "validate", str(good)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    res = subprocess.run(
        [sys.executable, "-m", "usersim", "validate", str(tmp_path)], capture_output=True, text=True
    )
    assert res.returncode == 2
    out = res.stdout.splitlines()
    assert len(out) == 3 and all(line.startswith(f"{bad}:") for line in out)
    assert "1 with problems, 3 problem(s)" in res.stderr


def test_case_schema_is_documented():
    schema = Case.model_json_schema()
    missing = [k for k, v in schema["properties"].items() if "description" not in v]
    assert missing == []
