"""How far the LLM judges can be trusted in a run: judge agreement per criterion (across
--judge-samples and judge-model ensembles), how many verdicts were inconclusive, what the
evidence budget left out, and seed 003's rule-vs-LLM re-check agreement.

Apart from the agent's flip rate (reports.summary.repeat_stats): a judge that disagrees with
itself shows up here, not as an agent that flips.
"""

from __future__ import annotations

from collections import defaultdict
from html import escape

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.record import RunRecord
from usersim.judges.calibration import AgreementReport, is_recheck, rule_vs_llm


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CriterionAgreement(Strict):
    """Judge agreement on one criterion of one case, over the run's records."""

    case_id: str = Field(description="Case id.")
    criterion: str = Field(description="The criterion text (first 120 characters).")
    verdicts: int = Field(description="LLM verdicts on it (one per record).")
    mean_agreement: float | None = Field(description="Mean share of votes agreeing with the top verdict.")
    inconclusive: int = Field(description="Verdicts that were inconclusive (incl. no majority).")
    no_majority: int = Field(description="Verdicts where the samples / models split without a majority.")
    per_model: dict[str, float] = Field(
        default_factory=dict, description="Judge model -> mean agreement of its own samples."
    )


class JudgeStats(Strict):
    """summary.json `judging`."""

    samples: int = Field(description="Samples per criterion and judge model (largest seen).")
    models: list[str] = Field(default_factory=list, description="Judge models (an ensemble when several).")
    llm_verdicts: int = Field(description="Deciding LLM rubric verdicts.")
    inconclusive: int = Field(description="Deciding LLM verdicts that were inconclusive.")
    no_majority: int = Field(description="Of those, verdicts whose votes split without a majority.")
    errors: int = Field(description="Deciding LLM verdicts that were errors.")
    shortened_transcripts: int = Field(
        description="LLM verdicts whose transcript was shortened to fit the judge's context."
    )
    criteria: list[CriterionAgreement] = Field(default_factory=list, description="Per case and criterion.")
    recheck: AgreementReport | None = Field(
        default=None, description="Seed 003 rule-to-LLM re-check: agreement on the sampled auto-only cases."
    )


def _shortened(details: dict) -> bool:
    info = details.get("transcript") or {}
    if "shortened" in info:
        return bool(info["shortened"])
    return any(bool((v or {}).get("shortened")) for v in info.values() if isinstance(v, dict))


def judge_stats(records: list[RunRecord]) -> JudgeStats | None:
    """None when no LLM judge decided anything in the run."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    samples, models = 1, []
    totals = {"llm": 0, "inconclusive": 0, "no_majority": 0, "errors": 0, "shortened": 0}
    recheck = False
    for r in records:
        for v in r.verdicts:
            if v.judge != "llm_rubric":
                continue
            if is_recheck(v):
                recheck = True
                continue
            details = v.details or {}
            if not v.counts_toward_status or v.verdict == "unjudged":
                continue
            totals["llm"] += 1
            totals["inconclusive"] += v.verdict == "inconclusive"
            split = v.verdict == "inconclusive" and v.reason.startswith("no majority")
            totals["no_majority"] += split
            totals["errors"] += v.verdict == "error"
            totals["shortened"] += _shortened(details)
            samples = max(samples, int(details.get("samples") or 1))
            for m in details.get("models") or []:
                if m not in models:
                    models.append(m)
            groups[(r.case_id, v.criterion or "")].append((v, details, split))
    if not totals["llm"] and not recheck:
        return None
    criteria = []
    for (case_id, criterion), items in sorted(groups.items()):
        agreements = [d["agreement"] for _, d, _ in items if d.get("agreement") is not None]
        per_model: dict[str, list[float]] = defaultdict(list)
        for _, d, _ in items:
            for m, pm in (d.get("per_model") or {}).items():
                per_model[m].append(pm.get("agreement") or 0.0)
        criteria.append(
            CriterionAgreement(
                case_id=case_id,
                criterion=criterion[:120],
                verdicts=len(items),
                mean_agreement=round(sum(agreements) / len(agreements), 4) if agreements else None,
                inconclusive=sum(v.verdict == "inconclusive" for v, _, _ in items),
                no_majority=sum(split for _, _, split in items),
                per_model={m: round(sum(a) / len(a), 4) for m, a in per_model.items() if a},
            )
        )
    return JudgeStats(
        samples=samples,
        models=models,
        llm_verdicts=totals["llm"],
        inconclusive=totals["inconclusive"],
        no_majority=totals["no_majority"],
        errors=totals["errors"],
        shortened_transcripts=totals["shortened"],
        criteria=criteria,
        recheck=rule_vs_llm([r.model_dump(mode="json") for r in records], recheck_only=True)
        if recheck
        else None,
    )


def judging_section(stats: JudgeStats | None) -> str:
    """The report's "LLM judge agreement" section ('' when no LLM judge decided anything)."""
    from usersim.reports.html_parts import cell, pct, section, table  # html_parts reads summary_models

    if stats is None:
        return ""
    head = (
        f"<p>{stats.llm_verdicts} LLM verdicts, {stats.samples} sample(s) per criterion and model"
        f"{', models: ' + escape(', '.join(stats.models)) if stats.models else ''}. "
        f"<b>{stats.inconclusive}</b> inconclusive ({stats.no_majority} without a majority), "
        f"{stats.errors} errors, {stats.shortened_transcripts} judged on a shortened transcript. "
        "Judge agreement is the judge's consistency, apart from the agent's flip rate.</p>"
    )
    rows = [
        [
            cell(c.case_id),
            cell(c.criterion),
            cell(c.verdicts),
            cell(pct(c.mean_agreement)),
            cell(c.inconclusive),
            cell(", ".join(f"{m} {pct(a)}" for m, a in c.per_model.items()) if len(c.per_model) > 1 else "—"),
        ]
        for c in stats.criteria
    ]
    body = head + table(["case", "criterion", "verdicts", "agreement", "inconclusive", "per model"], rows)
    rc = stats.recheck
    if rc is not None:
        agreement = "—" if rc.agreement is None else pct(rc.agreement)
        body += (
            f"<p>Rule-to-LLM re-check (seed 003, seeded 20% of the rule-passed auto-only conversations): {rc.items} records decided by both, "
            f"agreement {escape(agreement)}{' — ' + escape(rc.note) if rc.flagged else ''}.</p>"
        )
    return section("LLM judge agreement", body, "judging")
