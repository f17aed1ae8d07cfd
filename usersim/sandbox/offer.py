"""Which tools an agent is given in a conversation of a case (the sandbox builds its tool list
from this; the checks' validation reads it without importing the sandbox's tool machinery)."""

from __future__ import annotations

from usersim.cases.schema import Case


def offered_tool_names(case: Case, *, skills_on: bool) -> list[str]:
    """`tools:` or the default set (none for a domain case unless it lists them), then the case's
    own tools (mock and environment tools, always available), then load_skill when skills are on."""
    if case.tools is not None:
        base = list(case.tools)
    elif case.environment is not None:  # a domain case does not get the travel/shopping tools
        base = []
    else:
        from usersim.sandbox.tools import DEFAULT_TOOLS  # (reads the plugins' entry points)

        base = list(DEFAULT_TOOLS)
    names = [n for n in base if n != "load_skill"]
    names += [n for n in case.own_tool_names if n not in names]
    return names + (["load_skill"] if skills_on else [])
