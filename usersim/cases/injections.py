"""Injection templates: the instruction texts a case's `inject_instruction` intercept inserts into a
tool result, kept as language data (`usersim/lang/data/<code>/injections.yaml`, topic `injections`).

A `template` that looks like a name (`refund`, `book_hotel`) names a template of the case's language
(or of any language, when that one lacks it); anything else is the instruction text itself. Both
may hold {placeholders}, filled from the intercept's `args`, then from the file's `defaults`.
Here live the lookup and the validation (the data layer validates case files); the sandbox
(usersim/sandbox/injection.py) dresses the text and inserts it.
"""

from __future__ import annotations

import re
import string
from typing import Any

from usersim.core.registry import did_you_mean
from usersim.lang.resources import language_codes, resources

TOPIC = "injections"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def is_name(template: str) -> bool:
    """Whether `template` names a template (one word) rather than being the text itself."""
    return bool(_NAME.match(template.strip()))


def templates(code: str) -> dict[str, str]:
    """Template name -> text in language `code`."""
    found = resources(code).get(TOPIC, "templates") or {}
    return {str(k): str(v) for k, v in found.items()}


def defaults(code: str) -> dict[str, str]:
    """Placeholder name -> default value in language `code`."""
    found = resources(code).get(TOPIC, "defaults") or {}
    return {str(k): str(v) for k, v in found.items()}


def _languages(language: str | None) -> list[str]:
    codes = language_codes()
    return [language] if language in codes else codes


def name_problem(template: str, language: str | None) -> str | None:
    """Why a template name is unknown (with did-you-mean), or None (a known name or a text)."""
    if not is_name(template):
        return None
    names: set[str] = set()
    for code in _languages(language):
        names |= set(templates(code))
    if template.strip() in names:
        return None
    hint = did_you_mean(template.strip(), names)
    return (
        f"unknown injection template '{template.strip()}'.{hint} Templates: {', '.join(sorted(names))} "
        f"(or write the instruction text itself)"
    )


def resolve(template: str, language: str) -> tuple[str, str, str]:
    """(name or '', text with placeholders, language of the text) of a template in `language`,
    falling back to another language that has the name."""
    name = template.strip()
    if not is_name(template):
        return "", template, language
    for code in [language, *(c for c in language_codes() if c != language)]:
        text = templates(code).get(name)
        if text is not None:
            return name, text, code
    raise KeyError(name_problem(template, None) or name)


def placeholders(text: str) -> list[str]:
    """The {placeholder} names of a template text, in order."""
    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def template_problem(template: str, language: str | None, args: dict[str, Any]) -> str | None:
    """Why this template cannot be filled (unknown name, a placeholder without a value), or None."""
    problem = name_problem(template, language)
    if problem:
        return problem
    code = language if language in language_codes() else "en"
    try:
        name, text, code = resolve(template, code)
    except KeyError as exc:
        return str(exc.args[0])
    known = {**defaults(code), **{str(k): v for k, v in args.items()}}
    try:
        missing = [p for p in placeholders(text) if p not in known]
    except ValueError as exc:  # an unbalanced brace in a text template
        return f"template text cannot be read: {exc}"
    if missing:
        label = f"template '{name}'" if name else "the template text"
        return f"{label} needs a value for {', '.join('{' + m + '}' for m in missing)}: give it in `args`"
    return None


def fill(template: str, language: str, args: dict[str, Any]) -> tuple[str, str]:
    """(template name or '', the filled instruction text) in `language`."""
    name, text, code = resolve(template, language)
    values = {**defaults(code), **{str(k): str(v) for k, v in args.items()}}
    return name, text.format_map(values)
