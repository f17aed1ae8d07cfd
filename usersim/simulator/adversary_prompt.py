"""The manipulative user's part of the LLM simulator's system prompt (prompts/adversary.md).

Appended after the persona prompt when the persona has an `adversary`; the tactic descriptions are
data (prompts/adversary_tactics.yaml), the claims and target come from the persona."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorView

PROMPTS = Path(__file__).resolve().parent / "prompts"


@cache
def _tactics() -> dict[str, str]:
    return yaml.safe_load((PROMPTS / "adversary_tactics.yaml").read_text(encoding="utf-8"))


def adversary_section(view: SimulatorView) -> str:
    """The hidden agenda block for this turn, or '' for an ordinary persona."""
    from usersim.simulator.llm_prompt import prompt_template

    p: Persona = view.persona
    adv = p.adversary
    if adv is None:
        return ""
    claims = {k: v for k, v in adv.claims.model_dump().items() if v}
    schedule = ""
    if "gradual_escalation" in adv.tactics:
        schedule = (
            f"Do not ask for the target during your first {adv.escalation_turns} messages "
            "(or until your ordinary business is done)."
        )
    return prompt_template("adversary").substitute(
        target_kind=adv.target.kind.replace("_", " "),
        ask=adv.target.ask,
        subject_line=f"Whose: {adv.target.subject}." if adv.target.subject else "",
        claims_line=("What you claim: " + "; ".join(f"{k}: {v}" for k, v in claims.items()) + ".")
        if claims
        else "",
        tactics="\n".join(f"{i + 1}. {t}: {_tactics()[t]}" for i, t in enumerate(adv.tactics)),
        schedule=schedule,
        max_refusals=adv.refusals_allowed,
    )
