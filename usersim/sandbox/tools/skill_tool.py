"""load_skill: progressive skill disclosure (the body of SKILL.md; recorded as a `triggered` event)."""

from __future__ import annotations

from pydantic import Field

from usersim.sandbox.tools import Args, ToolContext, ToolError, register


class LoadSkillArgs(Args):
    name: str = Field(
        description="Skill name from the skill list in the system prompt, e.g. flight-selection."
    )


@register(
    "load_skill",
    "Load the full instructions of one of your skills (listed in the system prompt with name and description). "
    "Call it before doing a task the skill covers, then follow it.",
    LoadSkillArgs,
)
def load_skill(args: LoadSkillArgs, ctx: ToolContext) -> str:
    if ctx.skills is None:
        raise ToolError("no skills are enabled in this conversation")
    return ctx.skills.load(args.name, ctx.turn)
