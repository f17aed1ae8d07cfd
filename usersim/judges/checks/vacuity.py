"""What a case gives its agent, for the checks' `case_problems`: a check that can never fail in the
case as written (it passes whatever the agent does) or can never pass (it fails whatever the agent
does) decides nothing, and is a `usersim validate` problem instead of a silent verdict.

* `offered_tools(case)`: the tools any conversation of the case can call (the sandbox's rule:
  `tools:` or the default set, none for a domain case, plus the case's own tools and load_skill);
* `exposed_skills(case)`: the skills some group of the case exposes;
* `matches_empty(pattern)`: a regex that matches the empty string is found in every text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from usersim.cases.schema import Case

Problems = list[tuple[tuple[str | int, ...], str]]


def never_fails(check: str, why: str, fix: str) -> str:
    """'<check> can never fail here: <why>. <fix>' (a did-you-mean ending `why` keeps its '?')."""
    return f"{check} can never fail here: {_sentence(why)} {fix}"


def never_passes(check: str, why: str, fix: str) -> str:
    """'<check> can never pass here: <why>. <fix>'."""
    return f"{check} can never pass here: {_sentence(why)} {fix}"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "?")) else text + "."


def exposed_skills(case: Case) -> list[str]:
    """Skills the agent is given in some run of the case: the active skills, when skills are on
    (skill_enabled) or group B (skills on) is run."""
    on = case.skills.skill_enabled or "B" in case.skills.groups
    return list(case.skills.active_skills) if on else []


def offered_tools(case: Case) -> set[str] | None:
    """Tool names an agent can call in this case (None when the sandbox is not in this build)."""
    try:
        from usersim.sandbox.offer import offered_tool_names
    except ImportError:
        return None
    return set(offered_tool_names(case, skills_on=bool(exposed_skills(case))))


def matches_empty(pattern: str) -> bool:
    """Whether a (valid) case regex matches the empty string, i.e. somewhere in every text."""
    from usersim.core.saferegex import case_regex

    return case_regex(pattern).search("") is not None
