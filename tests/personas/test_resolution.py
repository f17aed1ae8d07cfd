"""Personas anywhere: a case's `persona:` is a library id, a path relative to the case file, an id in a
`personas/` folder beside the cases or in `--personas DIR`; unknown ones are file:line problems (validate
and run exit 2, no traceback); persona new writes to the current folder; case paths work for run --id,
persona preview --case and rescore."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.cli import usersim
from usersim.cases.loader import load_case
from usersim.core.registry import UnknownNameError
from usersim.personas.loader import (
    LIBRARY_DIR,
    find_persona,
    persona_problems,
    resolve_persona,
    set_persona_dirs,
)

PERSONA = {
    "id": "PID",
    "name": "Sam Lee",
    "language": "en",
    "identity": "A bank customer.",
    "opening_message": "Hi, what is my balance?",
    "goal": {
        "description": "learn the balance",
        "required": ["balance"],
        "deliverable_keywords": {"balance": ["your balance is"]},
    },
    "known_info": [{"key": "account_number", "value": "ACC-1"}],
    "max_turns": 4,
}


def write_persona(folder: Path, pid: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}.yaml"
    path.write_text(yaml.safe_dump({**PERSONA, "id": pid}, sort_keys=False), encoding="utf-8")
    return path


def write_case(folder: Path, persona: str, cid: str = "BAL-1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{cid}.yaml"
    path.write_text(
        f"id: {cid}\ndimension: C2\ntitle: balance\nmode: organic\nmax_turns: 4\n"
        f"persona: {persona}\njudging:\n  scoring: {{methods: [auto]}}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(autouse=True)
def _no_extra_dirs():
    set_persona_dirs([])
    yield
    set_persona_dirs([])


def test_library_id_resolves_from_anywhere(tmp_path):
    case = load_case(write_case(tmp_path / "cases", "japan-first-trip"))
    assert resolve_persona(case).id == "japan-first-trip"


def test_path_relative_to_the_case_file_not_the_current_folder(tmp_path):
    write_persona(tmp_path / "shared", "sam")
    case = load_case(write_case(tmp_path / "suite" / "cases", "../../shared/sam.yaml"))
    assert resolve_persona(case).name == "Sam Lee"  # cwd is the repo, not the case folder


def test_id_in_a_personas_folder_beside_the_cases(tmp_path):
    write_persona(tmp_path / "bank" / "personas", "sam")
    nested = load_case(write_case(tmp_path / "bank" / "cases" / "cards", "sam"))
    assert resolve_persona(nested).id == "sam"
    assert find_persona("sam", case_file=nested.file) == tmp_path / "bank" / "personas" / "sam.yaml"


def test_a_personas_dir_given_on_the_command_line(tmp_path):
    write_persona(tmp_path / "elsewhere", "sam")
    case = load_case(write_case(tmp_path / "cases", "sam"))
    with pytest.raises(UnknownNameError):
        resolve_persona(case)
    set_persona_dirs([tmp_path / "elsewhere"])
    assert resolve_persona(case).id == "sam"


def test_unknown_persona_is_a_file_line_problem_naming_where_it_looked(tmp_path):
    write_persona(tmp_path / "personas", "sam")
    case_path = write_case(tmp_path / "cases", "samm")
    [problem] = persona_problems(load_case(case_path))
    text = str(problem)
    assert text.startswith(f"{case_path}:6: persona: Unknown persona 'samm'. Did you mean 'sam'?")
    assert str(tmp_path / "personas") in text and str(LIBRARY_DIR) in text and "--personas DIR" in text
    missing = write_case(tmp_path / "cases", "./nope.yaml", "BAL-3")
    [problem] = persona_problems(load_case(missing))
    assert "persona file not found: ./nope.yaml" in str(problem) and str(problem).startswith(f"{missing}:6:")


def test_a_broken_persona_file_is_reported_through_the_case(tmp_path):
    bad = write_persona(tmp_path / "personas", "sam")
    bad.write_text(bad.read_text().replace("language: en", "language: fr"), encoding="utf-8")
    [problem] = persona_problems(load_case(write_case(tmp_path / "cases", "sam")))
    assert "the persona file has problems" in str(problem) and "language" in str(problem)


def test_validate_exits_2_with_file_line_and_no_traceback(tmp_path):
    case_path = write_case(tmp_path / "cases", "not-a-persona")
    res = usersim("validate", str(case_path), check=False)
    assert res.returncode == 2
    assert f"{case_path}:6: persona: Unknown persona 'not-a-persona'" in res.stdout
    assert "Traceback" not in res.stdout + res.stderr


def test_validate_and_personas_option(tmp_path):
    write_persona(tmp_path / "people", "sam")
    case_path = write_case(tmp_path / "cases", "sam")
    assert usersim("validate", str(case_path), check=False).returncode == 2
    ok = usersim("validate", str(case_path), "--personas", str(tmp_path / "people"), check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # a folder with cases and personas/ beside them validates as a whole
    write_persona(tmp_path / "suite" / "personas", "sam")
    write_case(tmp_path / "suite" / "cases", "sam")
    whole = usersim("validate", str(tmp_path / "suite"), check=False)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert "2 file(s) checked, 0 with problems" in whole.stderr


def test_run_with_an_unknown_persona_exits_2_before_running(tmp_path):
    case_path = write_case(tmp_path / "cases", "ghost")
    res = usersim("run", str(case_path), "--out", str(tmp_path / "out"), "--no-progress", check=False)
    assert res.returncode == 2
    assert f"{case_path}:6: persona: Unknown persona 'ghost'" in res.stderr
    assert "nothing was run" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "out" / "results.sqlite").exists()


def test_run_by_case_path_with_personas_beside_then_rescore_finds_the_case(tmp_path):
    write_persona(tmp_path / "suite" / "personas", "sam")
    case_path = write_case(tmp_path / "suite" / "cases", "sam")
    out = tmp_path / "out"
    res = usersim("run", "--id", str(case_path), "--out", str(out), "--no-progress", check=False)
    assert res.returncode in (0, 1), res.stdout + res.stderr  # judged, not a usage error
    assert "BAL-1" in res.stdout and "error" not in res.stdout.split("->")[0].lower()
    again = usersim("rescore", str(out), check=False)  # the case file is recorded in the run
    assert again.returncode == 0, again.stdout + again.stderr and "BAL-1" in again.stdout
    moved = usersim("rescore", str(out), "--cases", str(tmp_path / "suite" / "cases"), check=False)
    assert moved.returncode == 0, moved.stdout + moved.stderr


def test_preview_takes_a_case_file_and_its_persona(tmp_path):
    write_persona(tmp_path / "suite" / "personas", "sam")
    case_path = write_case(tmp_path / "suite" / "cases", "sam")
    res = usersim("persona", "preview", "--case", str(case_path), "--max-turns", "2", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Hi, what is my balance?" in res.stdout
    missing = usersim("persona", "preview", check=False)
    assert missing.returncode != 0 and "name a PERSONA" in missing.stdout + missing.stderr


def test_persona_new_writes_to_the_current_folder_or_to(tmp_path):
    res = usersim("persona", "new", "my-user", cwd=tmp_path)
    assert (tmp_path / "my-user.yaml").is_file() and not (LIBRARY_DIR / "my-user.yaml").exists()
    assert "wrote my-user.yaml" in res.stdout
    usersim("persona", "new", "other", "--to", str(tmp_path / "personas"))
    assert (tmp_path / "personas" / "other.yaml").is_file()


def test_persona_list_shows_library_ids_as_json():
    res = usersim("persona", "list", "--json")
    assert "japan-first-trip" in {r["id"] for r in json.loads(res.stdout)}


def test_support_scaffold_is_an_english_persona_with_facts_and_conditional_events(tmp_path):
    usersim("persona", "new", "desk-user", "--domain", "support", cwd=tmp_path)
    lint = usersim("persona", "lint", str(tmp_path / "desk-user.yaml"))
    assert "0 error(s), 0 warning(s)" in lint.stdout
    from usersim.personas.loader import load_persona_file

    p = load_persona_file(tmp_path / "desk-user.yaml")
    assert p.language == "en" and p.known_info[0].slot == "user_id"
    assert [e.when.agent_says or e.when.agent_calls for e in p.events if e.when] == [
        ["travel credit", "voucher"],
        ["cancel_reservation"],
    ]


def test_unquoted_topic_truth_in_unknown_info_is_read_as_topic_and_truth():
    from usersim.personas.schema import Persona

    p = Persona.model_validate(
        {**PERSONA, "id": "x", "unknown_info": ["refund rules", {"travel insurance": "bought at booking"}]}
    )
    assert p.unknown_info == ["refund rules", "travel insurance: bought at booking"]


def test_persona_list_includes_personas_folders(tmp_path):
    write_persona(tmp_path / "people", "sam")
    rows = json.loads(usersim("persona", "list", "--json", "--personas", str(tmp_path / "people")).stdout)
    assert rows[0]["id"] == "sam" and rows[0]["file"] == str(tmp_path / "people" / "sam.yaml")
    assert "japan-first-trip" in {r["id"] for r in rows}
