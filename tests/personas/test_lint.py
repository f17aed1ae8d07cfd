"""Persona lint: schema errors with file:line and each semantic check with an actionable message."""

from __future__ import annotations

from pathlib import Path

import yaml

from usersim.simulator.persona_lint import lint_file, lint_paths

BASE = {
    "id": "p1",
    "name": "P",
    "identity": "someone",
    "max_turns": 10,
    "goal": {"description": "订机票", "required": ["flights"]},
    "known_info": [
        {"slot": "origin", "value": "上海"},
        {"slot": "destination", "value": "大阪"},
        {"slot": "dates", "value": "6 月"},
    ],
}


def write(tmp_path: Path, data: dict, name: str = "p1") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def errors(path: Path) -> list[str]:
    return [str(p) for p in lint_file(path) if p.severity == "error"]


def test_clean_persona_and_library_have_no_errors(tmp_path):
    assert errors(write(tmp_path, BASE)) == []
    assert [str(p) for p in lint_paths(["usersim/personas/library"]) if p.severity == "error"] == []


def test_schema_error_names_file_line_field_and_suggests(tmp_path):
    path = write(tmp_path, {**BASE, "reveal_polcy": "gradually"})
    [msg] = errors(path)
    assert (
        msg.startswith(f"{path}:")
        and "reveal_polcy: unknown field 'reveal_polcy'; did you mean 'reveal_policy'?" in msg
    )


def test_goal_needing_a_fact_the_persona_never_has(tmp_path):
    data = {**BASE, "known_info": BASE["known_info"][1:]}  # no origin
    [msg] = errors(write(tmp_path, data))
    assert (
        "goal.required.0: 'flights' needs the user's origin (出发地), but known_info has no fact with slot 'origin'"
        in msg
    )
    assert "Add `- {slot: origin, value: ...}` to known_info" in msg
    # a change_fact event that supplies the slot later is enough
    ok = {**data, "events": [{"at_turn": 2, "kind": "change_fact", "slot": "origin", "value": "北京"}]}
    assert errors(write(tmp_path, ok)) == []


def test_contradictory_facts_unless_an_event_changes_them(tmp_path):
    data = {**BASE, "known_info": BASE["known_info"] + [{"slot": "origin", "value": "北京"}]}
    path = write(tmp_path, data)
    [msg] = errors(path)
    assert "known_info.3.value: slot 'origin' is given twice with different values ('上海' at line" in msg
    assert "kind: change_fact, slot: origin, value: 北京" in msg
    data["events"] = [{"at_turn": 3, "kind": "change_fact", "slot": "origin", "value": "北京"}]
    assert errors(write(tmp_path, data)) == []


def test_event_after_max_turns(tmp_path):
    data = {**BASE, "events": [{"at_turn": 12, "kind": "hesitate"}]}
    [msg] = errors(write(tmp_path, data))
    assert "events.0.at_turn: event fires at turn 12 but max_turns is 10, so it never happens" in msg


def test_unknown_info_that_is_also_known(tmp_path):
    data = {**BASE, "unknown_info": ["出发地", "签证政策"]}
    [msg] = errors(write(tmp_path, data))
    assert "unknown_info.0: '出发地' is listed as unknown, but known_info gives origin = '上海'" in msg


def test_unknown_constraint_and_stray_keywords(tmp_path):
    goal = {**BASE["goal"], "constraints": {"max_prise": 100}, "deliverable_keywords": {"hotel": ["酒店"]}}
    msgs = errors(write(tmp_path, {**BASE, "goal": goal}))
    assert any("unknown constraint 'max_prise'. Did you mean 'max_price'?" in m for m in msgs)
    assert any("goal.deliverable_keywords.hotel: 'hotel' is not in goal.required" in m for m in msgs)


def test_unrecognised_slot_is_only_a_warning(tmp_path):
    data = {**BASE, "known_info": BASE["known_info"] + [{"slot": "budgett", "value": "1 万"}]}
    problems = lint_file(write(tmp_path, data))
    assert [p.severity for p in problems] == ["warning"]
    assert "warning: slot 'budgett' is not a built-in slot. Did you mean 'budget'?" in str(problems[0])


def test_lint_probes_report_what_the_rule_simulator_gets_wrong(tmp_path, monkeypatch):
    """Each fact is asked in the language layer's several ways and each constraint broken by a
    proposal; a simulator that answers nothing and accepts everything is reported for both."""
    from usersim.simulator.base import SimulatorTurn
    from usersim.simulator.rule import RuleSimulator

    data = {
        **BASE,
        "known_info": [{"slot": "member_code", "value": "MX-7731", "label": "member code"}],
        "goal": {**BASE["goal"], "constraints": {"max_price": 500, "exclude": ["海鲜"]}},
    }
    path = write(tmp_path, data)
    assert [p for p in lint_file(path) if "rule simulator" in p.message] == []  # the real one copes
    monkeypatch.setattr(
        RuleSimulator, "respond", lambda self, view: SimulatorTurn(message="好的", meta={"acts": ["confirm"]})
    )
    found = [p for p in lint_file(path) if "rule simulator" in p.message]
    assert [p.field for p in found] == [
        "known_info.0",  # not answered
        "known_info.0",  # a proposal with the wrong member code not corrected
        "goal.constraints.max_price",
        "goal.constraints.exclude",
    ]
    assert all(p.severity == "warning" for p in found)
    assert "did not answer 'member_code' (MX-7731) to 6 of 6 ways of asking" in found[0].message
    assert "'您的member code是什么？' -> '好的'" in found[0].message
    assert "did not correct a proposal that gets 'member_code' (MX-7731) wrong" in found[1].message
    assert (
        "did not refuse a proposal that breaks max_price = 500" in found[2].message
        and "625元" in found[2].message
    )
    assert "推荐您选 海鲜" in found[3].message


def test_lint_probes_break_min_max_and_require_constraints(tmp_path, monkeypatch):
    """min / max with units and require get a breaking proposal each (half the minimum, a quarter
    over the maximum, the feature left out); the real simulator refuses all, a yes-man does not."""
    from usersim.simulator.base import SimulatorTurn
    from usersim.simulator.rule import RuleSimulator

    constraints = {"min": {"data": "10 GB"}, "max": {"price": "$40"}, "require": ["roaming"]}
    data = {**BASE, "language": "en", "goal": {**BASE["goal"], "constraints": constraints}}
    path = write(tmp_path, data)
    assert [p for p in lint_file(path) if "rule simulator" in p.message] == []
    monkeypatch.setattr(
        RuleSimulator, "respond", lambda self, view: SimulatorTurn(message="Sure", meta={"acts": ["confirm"]})
    )
    found = {p.field: p.message for p in lint_file(path) if "rule simulator" in p.message}
    assert set(found) == {
        "goal.constraints.min.data",
        "goal.constraints.max.price",
        "goal.constraints.require.0",
    }
    assert (
        "breaks min.data = 10 GB" in found["goal.constraints.min.data"]
        and "5 GB" in found["goal.constraints.min.data"]
    )
    assert "$50" in found["goal.constraints.max.price"]
    assert "does not include roaming" in found["goal.constraints.require.0"]


def test_min_and_max_values_need_units_a_reader_understands(tmp_path):
    goal = {**BASE["goal"], "constraints": {"min": {"data": "lots"}}}
    msgs = errors(write(tmp_path, {**BASE, "goal": goal}))
    assert any("goal.constraints" in m and "min.data: 'lots' is not a quantity" in m for m in msgs), msgs
    goal = {**BASE["goal"], "constraints": {"require": {"roaming": True}}}
    msgs = errors(write(tmp_path, {**BASE, "goal": goal}))
    assert any("`require` is a list of words" in m for m in msgs), msgs
