"""`usersim persona new | lint | list | vary | preview` through click."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from usersim.cli import main
from usersim.cli.persona import persona
from usersim.personas.loader import load_persona_file


def test_new_writes_a_commented_valid_persona_per_domain(tmp_path):
    runner = CliRunner()
    for domain in ("travel", "shopping", "housing", "food"):
        res = runner.invoke(persona, ["new", f"my-{domain}", "--domain", domain, "--dir", str(tmp_path)])
        assert res.exit_code == 0, res.output
        path = tmp_path / f"my-{domain}.yaml"
        text = path.read_text(encoding="utf-8")
        assert "# how clearly needs are stated up front" in text and "reveal_policy: when_asked" in text
        assert load_persona_file(path).id == f"my-{domain}"
    again = runner.invoke(persona, ["new", "my-food", "--dir", str(tmp_path)])
    assert again.exit_code == 1 and "already exists; pick another id or pass --force" in again.output
    bad = runner.invoke(persona, ["new", "Bad Id", "--dir", str(tmp_path)])
    assert (
        bad.exit_code == 1
        and "String should match pattern" in bad.output
        and not (tmp_path / "Bad Id.yaml").exists()
    )


def test_lint_exit_codes_and_file_line_messages(tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["persona", "lint"]).exit_code == 0  # the library
    runner.invoke(persona, ["new", "p1", "--dir", str(tmp_path)])
    path = tmp_path / "p1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["events"].append({"at_turn": 40, "kind": "hesitate"})
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    res = runner.invoke(persona, ["lint", str(path)])
    assert res.exit_code == 2
    assert (
        f"{path}:" in res.output
        and "events.1.at_turn: event fires at turn 40 but max_turns is 12" in res.output
    )
    assert "1 persona file(s): 1 error(s), 0 warning(s)" in res.output


def test_list_and_vary():
    runner = CliRunner()
    rows = json.loads(runner.invoke(persona, ["list", "--json"]).output)
    assert {"japan-first-trip", "vague-laptop-buyer"} <= {r["id"] for r in rows}
    res = runner.invoke(
        persona, ["vary", "japan-first-trip", "--n", "4", "--seed", "2", "--axes", "patience,verbosity"]
    )
    lines = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert [r["id"] for r in lines] == [f"japan-first-trip~v{k}" for k in range(1, 5)]
    assert set(lines[0]) == {"id", "patience", "verbosity"}
    bad = runner.invoke(persona, ["vary", "japan-first-trp"])
    assert (
        bad.exit_code == 1
        and "Unknown persona 'japan-first-trp'. Did you mean 'japan-first-trip'?" in bad.output
    )


def test_preview_prints_a_conversation_against_an_agent():
    res = CliRunner().invoke(
        persona,
        [
            "preview",
            "japan-first-trip",
            "--agent",
            "python:tests.personas.scripted_agent:respond",
            "--max-turns",
            "8",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "USER   我想暑假去日本玩"
    assert lines[1] == "AGENT  好的！请问从哪里出发？几个人？"
    assert "上海" in lines[2]
    assert lines[-1].startswith("-- stop: goal_met (all required items delivered: flights")


def test_preview_on_a_case_uses_its_opening_and_turn_budget():
    res = CliRunner().invoke(
        persona,
        [
            "preview",
            "japan-first-trip",
            "--case",
            "C2-TD-04",
            "--agent",
            "python:tests.personas.scripted_agent:respond",
            "--max-turns",
            "2",
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "USER   我想暑假去日本玩"
    assert res.output.splitlines()[-1] == "-- stop: max_turns (reached max_turns=2 without the goal)"
    missing = CliRunner().invoke(persona, ["preview", "japan-first-trip", "--case", "C2-TD-40"])
    assert missing.exit_code == 1 and "Unknown case 'C2-TD-40'" in missing.output
