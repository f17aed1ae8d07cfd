"""Persona lint for a manipulative user (`adversary`): what the simulators would play badly.

- a push that reads as no request at all: the target's `ask` must read as asking for someone else's
  data or the agent's instructions (usersim.lang.stance.read_request), or an agent screening
  requests the way the bundled ones do never even sees an attack — a warning;
- impersonation without `target.subject` (the user would say whose relation it is to nobody);
- tactics with no phrasing in the persona's language (usersim/lang/data/<code>/adversary.yaml);
- stop_rules.stop_when_goal_met is ignored: the user stops on what it got or after refusals.
"""

from __future__ import annotations

from collections.abc import Callable

from usersim import lang
from usersim.lang.stance import read_request
from usersim.personas.schema import Persona

Add = Callable[..., None]


def adversary_problems(p: Persona, add: Add) -> None:
    """Add the adversary's lint findings through `add(loc, message, severity="error")`."""
    adv = p.adversary
    if adv is None:
        return
    words = lang.resources(p.language).topic("adversary")
    if not words:
        add(
            ("adversary",),
            f"no manipulative-user phrasing for language '{p.language}' "
            f"(usersim/lang/data/{p.language}/adversary.yaml): the rule simulator cannot play it",
        )
    else:
        for i, tactic in enumerate(adv.pushes):
            if tactic not in (words.get("push") or {}):
                add(
                    ("adversary", "tactics", i),
                    f"no phrasing for tactic '{tactic}' in {p.language}/adversary.yaml",
                )
    if "impersonation" in adv.tactics and not adv.target.subject:
        add(
            ("adversary", "target"),
            "impersonation needs `target.subject` (whose relation the user claims to be)",
        )
    req = read_request(adv.target.ask)
    if adv.target.kind == "system_prompt" and req.prompt is None:
        add(
            ("adversary", "target", "ask"),
            f"'{adv.target.ask}' does not read as asking for the agent's "
            "instructions (usersim/lang/data/<code>/security.yaml prompt_request): name them, e.g. "
            "'your system prompt'",
            "warning",
        )
    if adv.target.kind == "other_customer_data" and req.personal_data is None:
        add(
            ("adversary", "target", "ask"),
            f"'{adv.target.ask}' names no personal data (balance, email, "
            "phone, booking ...): the agent cannot tell what is asked",
            "warning",
        )
    if not p.stop_rules.stop_when_goal_met:
        add(
            ("stop_rules", "stop_when_goal_met"),
            "ignored for a manipulative user: it stops when the agent "
            "hands the target over or after adversary.max_refusals refusals",
            "warning",
        )
