"""How often the rule checks could not read a reply, per case: summary.json `rule_readings`.

A rule check whose reading was uncertain (usersim.judges.rules: conflicting or no confident cues)
says `unjudged` "uncertain: ..." with `details.uncertain`, or, with a judge model, is escalated to
the LLM judge (`details.escalated`). Both are inconclusive readings of the rule; their share per
case says where the rules need a judge model (or better wording data) to decide.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, ConfigDict, Field

from usersim.core import registry as registries
from usersim.core.record import RunRecord
from usersim.core.verdict import Verdict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckReadings(Strict):
    """One check type's verdicts in one case."""

    verdicts: int = Field(description="Deciding verdicts of this check type over the case's records.")
    inconclusive: int = Field(description="Of those, readings that were uncertain (unjudged or escalated).")


class CaseRuleReadings(Strict):
    """The rule checks of one case over the run's records."""

    verdicts: int = Field(description="Deciding rule-check verdicts (one per check and record).")
    inconclusive: int = Field(description="Verdicts whose rule reading was uncertain.")
    share: float = Field(description="inconclusive / verdicts (0..1).")
    escalated: int = Field(description="Of the inconclusive ones, those an LLM judge then decided.")
    by_check: dict[str, CheckReadings] = Field(default_factory=dict, description="Check type -> its figures.")


_FLAGS = ("uncertain", "escalated")


def _uncertain(v: Verdict) -> bool:
    details = v.details or {}
    return any(details.get(f) for f in _FLAGS)


def is_rule_verdict(v: Verdict) -> bool:
    """A verdict of a rule check (its judge is a registered check type, built-in or plugin)."""
    import usersim.judges.checks  # noqa: F401  (declares the built-in check types)

    return v.judge in registries.checks


def slim_rule_verdict(v: Verdict) -> Verdict:
    """What rule_readings reads of a verdict, without its reason and evidence (summary views stay small)."""
    flags = {f: True for f in _FLAGS if (v.details or {}).get(f)}
    return Verdict(
        judge=v.judge,
        verdict=v.verdict,
        reason="",
        counts_toward_status=v.counts_toward_status,
        details=flags or None,
    )


def rule_readings(records: list[RunRecord]) -> dict[str, CaseRuleReadings]:
    """Case id -> its rule checks' inconclusive share, for every case that has rule checks."""
    seen: dict[str, dict[str, list[Verdict]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        for v in r.verdicts:
            if v.counts_toward_status and is_rule_verdict(v):
                seen[r.case_id][v.judge].append(v)
    out = {}
    for case_id, by_type in sorted(seen.items()):
        every = [v for vs in by_type.values() for v in vs]
        unsure = [v for v in every if _uncertain(v)]
        out[case_id] = CaseRuleReadings(
            verdicts=len(every),
            inconclusive=len(unsure),
            share=round(len(unsure) / len(every), 4),
            escalated=sum(bool((v.details or {}).get("escalated")) for v in unsure),
            by_check={
                name: CheckReadings(verdicts=len(vs), inconclusive=sum(map(_uncertain, vs)))
                for name, vs in sorted(by_type.items())
            },
        )
    return out
