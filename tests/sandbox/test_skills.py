"""SKILL.md parsing/validation, progressive disclosure and the skill events the judges read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.conftest import call, make_case
from usersim.core.yamlfile import FileProblems
from usersim.sandbox.base import open_sandbox
from usersim.sandbox.skills import available_skills, load_skill_file, load_skills

GROUP_B_SKILLS = [
    "location_recognition_skill",
    "itinerary_review_skill",
    "dining_recommendation_skill",
    "shopping_assistant_skill",
    "hotel_search_skill",
]  # seed 002, B1-MM-01..05


def test_shipped_skills_cover_seed_004_and_seed_002_group_b():
    assert {"flight-selection", "itinerary-planning", *GROUP_B_SKILLS} <= set(available_skills())
    for skill in load_skills(available_skills()):
        assert skill.version and skill.description and skill.title
        assert list(skill.sections)[:5] == ["核心原则", "触发条件", "执行流程", "输出契约", "反模式"]


def test_seed_004_constraints_are_in_the_skill_bodies():
    flight, itinerary = load_skills(["flight-selection", "itinerary-planning"])
    for phrase in (
        "Step 0",
        "开口程",
        "保持总时长",
        "行李费",
        "对比基线",
        "Step 1.5",
        "Step 3.7",
        "实际可玩时间",
        "数据来源说明",
    ):
        assert phrase in flight.body, phrase
    for phrase in (
        "禁止用训练知识估算",
        "单向路线",
        "Draft Proposal #1",
        "Draft Proposal #2",
        "TRANSIT",
        "DRIVE",
        "驾车时长，公交可能更长",
        "(Google Maps)",
    ):
        assert phrase in itinerary.body, phrase


def test_unknown_skill_suggests_the_close_name():
    with pytest.raises(KeyError, match="Unknown skill 'flight-selectoin'. Did you mean 'flight-selection'?"):
        load_skills(["flight-selectoin"])


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "demo-skill" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


GOOD_BODY = "# Demo\n角色\n## 核心原则\n- a\n## 触发条件\n- b\n## 执行流程\n### Step 1\nc\n## 输出契约\n- d\n## 反模式\n- ❌ e\n"


def test_parser_reports_file_line_field_for_frontmatter_errors(tmp_path):
    path = _write(
        tmp_path,
        "---\nname: demo-skill\ndescription: 一个用于测试的技能描述文字\nmetadata:\n  verison: '1'\n---\n"
        + GOOD_BODY,
    )
    with pytest.raises(FileProblems) as err:
        load_skill_file(path)
    lines = [str(p) for p in err.value.problems]
    assert (
        f"{path}:5: metadata.verison: unknown field 'verison'; did you mean 'version'? (allowed: version)"
        in lines
    )
    assert any(
        line.startswith(f"{path}:") and ": metadata.version: required field is missing" in line
        for line in lines
    )


def test_parser_reports_missing_sections_and_frontmatter(tmp_path):
    path = _write(
        tmp_path,
        "---\nname: demo-skill\ndescription: 一个用于测试的技能描述文字\nmetadata:\n  version: '1'\n---\n"
        + GOOD_BODY.replace("## 输出契约\n- d\n", ""),
    )
    with pytest.raises(FileProblems, match="sections: missing section '## 输出契约'"):
        load_skill_file(path)
    no_front = tmp_path / "x.md"
    no_front.write_text(GOOD_BODY, encoding="utf-8")
    with pytest.raises(
        FileProblems, match=r"x.md:1: frontmatter: SKILL.md must start with a '---' YAML frontmatter block"
    ):
        load_skill_file(no_front)


def test_valid_file_outside_the_skills_dir_parses(tmp_path):
    path = _write(
        tmp_path,
        "---\nname: demo-skill\ndescription: 一个用于测试的技能描述文字\ncompatibility: none\nmetadata:\n  version: '2'\n---\n"
        + GOOD_BODY,
    )
    skill = load_skill_file(path)
    assert (skill.name, skill.version, skill.title) == ("demo-skill", "2", "Demo")


def _skills_case(enabled: bool, active: list[str]) -> object:
    return make_case(skills={"skill_enabled": enabled, "active_skills": active, "groups": ["A", "B"]})


def test_skills_on_lists_name_and_description_and_load_skill_triggers():
    sb = open_sandbox(_skills_case(True, ["flight-selection", "itinerary-planning"]))
    names = [s["function"]["name"] for s in sb.tool_schemas()]
    assert names[-1] == "load_skill"
    prompt = sb.system_prompt()
    assert "- flight-selection: 机票搜索与选择" in prompt and "- itinerary-planning: 分天行程编排" in prompt
    assert "Step 0" not in prompt  # bodies are disclosed only through load_skill
    assert [(e.skill, e.kind) for e in sb.drain_skill_events()] == [
        ("flight-selection", "listed"),
        ("itinerary-planning", "listed"),
    ]
    ev = call(sb, "load_skill", {"name": "itinerary-planning"}, turn=3)
    assert not ev.is_error and ev.result.startswith("# 行程编排（itinerary-planning）")
    assert [(e.turn, e.skill, e.kind) for e in sb.drain_skill_events()] == [
        (3, "itinerary-planning", "triggered")
    ]
    assert sb.drain_skill_events() == []
    wrong = call(sb, "load_skill", {"name": "hotel_search_skill"})
    assert (
        wrong.is_error
        and "Unknown skill 'hotel_search_skill'" in wrong.result
        and not sb.drain_skill_events()
    )


def test_skill_enabled_false_exposes_no_skills():
    sb = open_sandbox(_skills_case(False, ["flight-selection"]))
    assert "load_skill" not in [s["function"]["name"] for s in sb.tool_schemas()]
    assert "Skills" not in sb.system_prompt() and sb.drain_skill_events() == []
    ev = call(sb, "load_skill", {"name": "flight-selection"})
    assert ev.is_error and "not available in this conversation" in ev.result


def test_skills_on_overrides_the_case_for_group_a_and_b():
    group_b = open_sandbox(_skills_case(False, ["hotel_search_skill"]), skills_on=True)
    assert [e.skill for e in group_b.drain_skill_events()] == ["hotel_search_skill"]
    group_a = open_sandbox(_skills_case(True, ["hotel_search_skill"]), skills_on=False)
    assert "load_skill" not in [s["function"]["name"] for s in group_a.tool_schemas()]


def test_system_prompt_carries_date_memory_and_image_captions():
    case = make_case(
        context={
            "current_date": "2025-03-10",
            "memory": ["用户有乳糖不耐受", "上次推荐了《被讨厌的勇气》"],
            "images": [{"caption": "日本京都清水寺正殿"}],
        }
    )
    prompt = open_sandbox(case).system_prompt()
    assert "当前日期：2025-03-10（星期一）" in prompt
    assert "- 用户有乳糖不耐受\n- 上次推荐了《被讨厌的勇气》" in prompt
    assert "[图片: 日本京都清水寺正殿]" in prompt
    assert "当前日期：2026-04-07（星期二）" in open_sandbox(make_case()).system_prompt()  # the seeds' default


def test_parser_explains_bad_names_and_folder_mismatch(tmp_path, monkeypatch):
    path = _write(
        tmp_path,
        "---\nname: Demo Skill\ndescription: 一个用于测试的技能描述文字\nmetadata:\n  version: '1'\n---\n"
        + GOOD_BODY,
    )
    with pytest.raises(
        FileProblems, match=r"SKILL.md:2: name: .*skill name 'Demo Skill' must use lowercase letters"
    ):
        load_skill_file(path)
    from usersim.sandbox.skills import loader

    monkeypatch.setattr(loader, "SKILLS_DIR", tmp_path)  # treat tmp_path as the shipped skills folder
    path.write_text(
        "---\nname: other-name\ndescription: 一个用于测试的技能描述文字\nmetadata:\n  version: '1'\n---\n"
        + GOOD_BODY,
        encoding="utf-8",
    )
    with pytest.raises(
        FileProblems, match=r"SKILL.md:2: name: name 'other-name' must equal its folder name 'demo-skill'"
    ):
        load_skill_file(path)
