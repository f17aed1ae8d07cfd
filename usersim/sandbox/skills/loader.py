"""Parse and validate SKILL.md files (seed 004's schema) with file:line: field errors.

---
name: flight-selection
description: 一句话说明（何时触发、做什么）
compatibility: 依赖的工具/环境
metadata:
  version: "1.0"
---
# 标题
角色定位
## 核心原则 / ## 触发条件 / ## 执行流程 / ## 输出契约 / ## 反模式
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.core.yamlfile import FileProblems, Problem, parse_yaml, read_text_file, validation_problems

SKILLS_DIR = Path(__file__).parent
REQUIRED_SECTIONS = ("核心原则", "触发条件", "执行流程", "输出契约", "反模式")


class SkillMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str = Field(description="Skill version, e.g. '1.0'; bump it when the body changes.")


class SkillFrontmatter(BaseModel):
    """The YAML frontmatter of a SKILL.md file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Skill id: lowercase letters, digits, '-' or '_'; equals the folder name.")
    description: str = Field(
        min_length=10, description="One paragraph: when to trigger and what it does (shown to the agent)."
    )
    compatibility: str | None = Field(default=None, description="Tools / environment the skill depends on.")
    metadata: SkillMetadata = Field(description="metadata.version.")

    @field_validator("name")
    @classmethod
    def _name_shape(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", v):
            raise ValueError(
                f"skill name '{v}' must use lowercase letters, digits, '-' or '_' (e.g. flight-selection)"
            )
        return v


class Skill(BaseModel):
    """A parsed skill: frontmatter fields, the markdown body and its `##` sections."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Skill id.")
    description: str = Field(description="What the agent sees in the skill list.")
    compatibility: str | None = Field(default=None, description="Tools / environment it depends on.")
    version: str = Field(description="metadata.version.")
    title: str = Field(description="The `#` heading.")
    body: str = Field(description="Markdown after the frontmatter (what load_skill returns).")
    sections: dict[str, str] = Field(description="`##` section title -> its text.")
    path: str = Field(description="The SKILL.md file.")


def _split(path: Path, text: str) -> tuple[str, str, int]:
    """(frontmatter, body, line where the body starts)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise FileProblems(
            [Problem(str(path), 1, "frontmatter", "SKILL.md must start with a '---' YAML frontmatter block")]
        )
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 2
    raise FileProblems(
        [Problem(str(path), 1, "frontmatter", "frontmatter block is not closed by a '---' line")]
    )


def _body_problems(path: Path, body: str, first_line: int) -> tuple[str, dict[str, str], list[Problem]]:
    problems: list[Problem] = []
    title = re.search(r"^# (.+)$", body, flags=re.MULTILINE)
    if title is None:
        problems.append(Problem(str(path), first_line, "body", "missing the '# <Skill 名称>' heading"))
    parts = re.split(r"^## +(.+?)\s*$", body, flags=re.MULTILINE)
    sections = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    for name in REQUIRED_SECTIONS:
        if name not in sections:
            close = did_you_mean(name, set(sections))
            problems.append(
                Problem(str(path), first_line, "sections", f"missing section '## {name}'.{close}".rstrip("."))
            )
        elif not sections[name]:
            problems.append(Problem(str(path), first_line, f"sections.{name}", "section is empty"))
    if "反模式" in sections and not re.search(r"^\s*- ", sections["反模式"], flags=re.MULTILINE):
        problems.append(
            Problem(str(path), first_line, "sections.反模式", "list the anti-patterns as '- ❌ ...' items")
        )
    return (title[1].strip() if title else ""), sections, problems


def load_skill_file(path: str | Path) -> Skill:
    """Parse one SKILL.md; raises FileProblems listing every problem as file:line: field: message."""
    path = Path(path)
    front_text, body, body_line = _split(path, read_text_file(path))
    data, lines = parse_yaml(front_text, path, line_offset=1)  # safe: limits, duplicate keys, lines
    data = data or {}
    problems: list[Problem] = []
    front = None
    if not isinstance(data, dict):
        problems.append(
            Problem(str(path), 2, "frontmatter", "frontmatter must be a mapping of name/description/...")
        )
    else:
        try:
            front = SkillFrontmatter.model_validate(data)
        except ValidationError as exc:
            for p in validation_problems(path, exc, lines, SkillFrontmatter):
                problems.append(Problem(p.file, p.line + 1, p.field, p.message))  # +1: the opening '---'
    if front is not None and path.parent.parent == SKILLS_DIR and front.name != path.parent.name:
        problems.append(
            Problem(
                str(path),
                lines.line(("name",)) + 1,
                "name",
                f"name '{front.name}' must equal its folder name '{path.parent.name}'",
            )
        )
    title, sections, body_problems = _body_problems(path, body, body_line)
    problems += body_problems
    if problems or front is None:
        raise FileProblems(problems)
    return Skill(
        name=front.name,
        description=front.description.strip(),
        compatibility=front.compatibility,
        version=front.metadata.version,
        title=title,
        body=body.strip(),
        sections=sections,
        path=str(path),
    )


def available_skills(root: Path = SKILLS_DIR) -> list[str]:
    """Names of the skills shipped under `root` (folders holding a SKILL.md)."""
    return sorted(p.parent.name for p in root.glob("*/SKILL.md"))


@cache
def _cached(path: str, mtime: float) -> Skill:
    return load_skill_file(path)


def get_skill(name: str, root: Path = SKILLS_DIR) -> Skill:
    """One skill by name; "Unknown skill 'x'. Did you mean 'y'?" when there is none."""
    path = root / name / "SKILL.md"
    if not path.is_file():
        names = available_skills(root)
        raise UnknownNameError(
            f"Unknown skill '{name}'.{did_you_mean(name, names)} Available: {', '.join(names)}"
        )
    return _cached(str(path), path.stat().st_mtime)


def load_skills(names: list[str], root: Path = SKILLS_DIR) -> list[Skill]:
    """The named skills, in order (each validated)."""
    return [get_skill(n, root) for n in names]
