"""Skills as SKILL.md files (seed 004's schema): `sandbox/skills/<name>/SKILL.md`."""

from usersim.sandbox.skills.loader import (
    Skill,
    SkillFrontmatter,
    available_skills,
    load_skill_file,
    load_skills,
)

__all__ = ["Skill", "SkillFrontmatter", "available_skills", "load_skill_file", "load_skills"]
