"""summary.json `recheck` and its report paragraph: seed 003's 20% rule-to-LLM re-check — how many
rule-passed auto-only conversations were eligible and sampled (overall and per dimension, from the
run meta that graphs/recheck.py writes), and the agreement between the rule and LLM verdicts on
them, flagged when they deviate by more than 10% ("如果偏差超过 10%，需要检查规则是否过于粗放")."""

from __future__ import annotations

from html import escape
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.record import RunRecord
from usersim.judges.calibration import MAX_RULE_LLM_DEVIATION, AgreementReport, rule_vs_llm


class RecheckStats(BaseModel):
    """The re-check of one run."""

    model_config = ConfigDict(extra="forbid")

    rate: float = Field(description="Share of the eligible conversations sampled (0.2).")
    seed: int = Field(description="Run seed the sample was drawn with (the same seed, the same sample).")
    eligible: int = Field(description="Rule-passed conversations of auto-only cases.")
    sampled: int = Field(description="Conversations re-checked: ceil(rate * eligible).")
    by_dimension: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Dimension -> {eligible, sampled}: floor or ceil of rate x eligible, summing to `sampled`.",
    )
    agreement: AgreementReport = Field(description="Rule vs LLM decisions on the sampled conversations.")
    agreement_by_dimension: dict[str, AgreementReport] = Field(
        default_factory=dict, description="The same per dimension."
    )
    deviation: float | None = Field(
        description="1 - agreement; null when no sampled conversation was decided."
    )
    max_deviation: float = Field(default=MAX_RULE_LLM_DEVIATION, description="Seed 003's allowed deviation.")
    flagged: bool = Field(description="Deviation above 10%: check whether the rules are too coarse.")


def recheck_stats(records: list[RunRecord], meta: dict[str, Any]) -> RecheckStats | None:
    """None when the run had no re-check (no judge model, or a run from before the sample)."""
    plan = meta.get("recheck")
    if not isinstance(plan, dict):
        return None
    chosen = set(plan.get("ids") or [])
    sampled = [r for r in records if r.id in chosen]
    dumped = [r.model_dump(mode="json") for r in sampled]
    overall = rule_vs_llm(dumped, recheck_only=True)
    per_dim = {
        d: rule_vs_llm([x for x in dumped if x["dimension"] == d], recheck_only=True)
        for d in sorted({r.dimension for r in sampled})
    }
    eligible, picked = plan.get("eligible") or {}, plan.get("sampled") or {}
    deviation = None if overall.agreement is None else round(1 - overall.agreement, 4)
    return RecheckStats(
        rate=float(plan.get("rate", 0.2)),
        seed=int(plan.get("seed", 0)),
        eligible=sum(eligible.values()),
        sampled=sum(picked.values()),
        by_dimension={d: {"eligible": n, "sampled": int(picked.get(d, 0))} for d, n in eligible.items()},
        agreement=overall,
        agreement_by_dimension=per_dim,
        deviation=deviation,
        flagged=deviation is not None and deviation > MAX_RULE_LLM_DEVIATION + 1e-12,
    )


def recheck_section(stats: RecheckStats | None) -> str:
    """The report's "Rule-to-LLM re-check" section ('' without a re-check)."""
    from usersim.reports.html_parts import cell, pct, section, table

    if stats is None:
        return ""
    agr = stats.agreement
    flag = (
        f' <b class="failed">Deviation {escape(pct(stats.deviation))} is above 10%: {escape(agr.note)}.</b>'
        if stats.flagged
        else ""
    )
    head = (
        f"<p>Seed 003: {stats.sampled} of {stats.eligible} rule-passed auto-only conversations "
        f"(ceil {stats.rate:.0%}, seed {stats.seed}) re-checked by the LLM judge; {agr.items} decided by both, "
        f"agreement {escape(pct(agr.agreement))}, kappa {escape('—' if agr.kappa is None else f'{agr.kappa:.2f}')}.{flag}</p>"
    )
    rows = []
    for d, n in stats.by_dimension.items():
        a = stats.agreement_by_dimension.get(d)
        rows.append(
            [
                cell(d),
                cell(n["eligible"], "num"),
                cell(n["sampled"], "num"),
                cell(a.items if a else 0, "num"),
                cell(pct(a.agreement) if a else "—", "num"),
                cell(", ".join(a.disagreements) if a and a.disagreements else "—"),
            ]
        )
    body = head + table(["dimension", "eligible", "sampled", "decided", "agreement", "disagreements"], rows)
    return section("Rule-to-LLM re-check", body, "recheck")
