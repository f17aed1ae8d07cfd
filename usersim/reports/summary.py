"""summary.json: every metric of a run, computed from its RunRecords.

`build_summary(records, meta)` is what the runner calls after a run; `usersim report RUN_DIR`
calls it again from results.jsonl. The typed result is `reports.summary_models.Summary`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from math import comb
from pathlib import Path
from typing import Any

from usersim.core.gate import Tally, decide, fraction, pass_rate
from usersim.core.record import RunRecord
from usersim.core.secrets import redact_value
from usersim.judges.calibration import is_recheck
from usersim.judges.llm_rubric import C1_CRITERION, C1_DIMENSIONS
from usersim.reports.grades import complexity_curves, grade_distributions
from usersim.reports.judging import judge_stats
from usersim.reports.long_context import long_context_stats, mean
from usersim.reports.recheck import recheck_stats
from usersim.reports.rule_readings import is_rule_verdict, rule_readings, slim_rule_verdict
from usersim.reports.skill_impact import skill_impact
from usersim.reports.summary_models import (
    C1CaseScore,
    C1Scores,
    Rate,
    ReasonCount,
    RedLineHit,
    RepeatGroup,
    RepeatStats,
    Summary,
    TurnTokens,
    UsageTotal,
)

RED_LINE_TAG = "red_line"
DECAY_FILE = "decay.json"


def rate(records: list[RunRecord]) -> Rate:
    """Status counts, pass rate (the gate's rule: passed / (passed + failed + error), unjudged and
    inconclusive left out and counted) and mean score."""
    tally = Tally.of(r.status for r in records)
    figure = pass_rate(tally)
    return Rate(
        records=len(records),
        passed=tally.passed,
        failed=tally.failed,
        error=tally.error,
        unjudged=tally.unjudged,
        inconclusive=tally.inconclusive,
        judged=figure.denominator,
        left_out=figure.left_out,
        pass_rate=figure.value,
        pass_rate_text=figure.text,
        mean_score=mean(r.score for r in records),
    )


def _rates_by(records: list[RunRecord], key: Callable[[RunRecord], str]) -> dict[str, Rate]:
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    return {k: rate(v) for k, v in sorted(groups.items())}


def repeat_stats(records: list[RunRecord]) -> RepeatStats:
    """pass^k (all k repeats passed), pass@k and flip rate over case variants run more than once.

    The gate's rule: a variant is aggregated only when every repeat was judged (passed, failed or
    error; an error is not a pass). A variant with an unjudged or inconclusive repeat is left out and
    counted, since calling that repeat a pass or a failure would misstate the agent's consistency.
    """
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        variant = ",".join(
            f"{k}={v}" for k, v in r.variant.model_dump(exclude={"repeat"}).items() if v is not None
        )
        groups[f"{r.case_id}|{variant}"].append(r)
    details = []
    left_out: Counter[str] = Counter()
    for key, rs in sorted(groups.items()):
        if len(rs) < 2:
            continue
        tally = Tally.of(r.status for r in rs)
        judged = tally.judged() == len(rs)
        if not judged:  # named after the first left-out status found: inconclusive before unjudged
            left_out[
                "variants with an inconclusive repeat"
                if tally.inconclusive
                else "variants with an unjudged repeat"
            ] += 1
        details.append(
            RepeatGroup(
                key=key,
                case_id=rs[0].case_id,
                k=len(rs),
                passed=tally.passed,
                failed=tally.failed,
                error=tally.error,
                decided=judged,
                pass_all=tally.passed == len(rs),
                pass_any=tally.passed > 0,
                flip=tally.passed > 0 and tally.failed + tally.error > 0,
            )
        )
    decided = [g for g in details if g.decided]
    n = len(decided)
    hat_k = fraction(sum(g.pass_all for g in decided), n, left_out)
    at_k = fraction(sum(g.pass_any for g in decided), n, left_out)
    flip = fraction(sum(g.flip for g in decided), n, left_out)
    curve = {}
    for k in range(1, max((g.k for g in decided), default=0) + 1):
        # tau-bench's unbiased estimator: chance that k repeats drawn from the n run all pass
        vals = [comb(g.passed, k) / comb(g.k, k) for g in decided if g.k >= k]
        curve[k] = round(sum(vals) / len(vals), 4)
    return RepeatStats(
        groups=n,
        undecided=len(details) - n,
        left_out=dict(left_out),
        pass_hat_k=hat_k.value,
        pass_hat_k_text=hat_k.text,
        pass_at_k=at_k.value,
        pass_at_k_text=at_k.text,
        flip_rate=flip.value,
        flip_rate_text=flip.text,
        pass_hat_k_curve=curve,
        flips=[g for g in details if g.flip],
        details=details,
    )


def token_growth(records: list[RunRecord]) -> list[TurnTokens]:
    """Mean and max agent context tokens per user turn index (turn 1 = first entry)."""
    per_turn: dict[int, list[int]] = defaultdict(list)
    for r in records:
        for i, tokens in enumerate(r.context_tokens):
            per_turn[i + 1].append(tokens)
    return [
        TurnTokens(turn=t, conversations=len(v), mean_tokens=round(sum(v) / len(v), 1), max_tokens=max(v))
        for t, v in sorted(per_turn.items())
    ]


def usage_totals(records: list[RunRecord]) -> dict[str, UsageTotal]:
    """Usage per role (agent, simulator, judge ...) and a 'total' row."""
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in records:
        for role, u in r.usage.items():
            for name in (role, "total"):
                t = totals[name]
                t["calls"] += u.calls
                t["prompt_tokens"] += u.prompt_tokens
                t["completion_tokens"] += u.completion_tokens
                t["cached_calls"] += u.cached_calls
                t["cost_usd"] += u.cost_usd
    out = {}
    for role in sorted(totals, key=lambda k: (k == "total", k)):
        t = totals[role]
        out[role] = UsageTotal(
            calls=int(t["calls"]),
            prompt_tokens=int(t["prompt_tokens"]),
            completion_tokens=int(t["completion_tokens"]),
            cached_calls=int(t["cached_calls"]),
            cost_usd=round(t["cost_usd"], 6),
        )
    return out


def reason_counts(records: list[RunRecord], verdict: str) -> list[ReasonCount]:
    """Verdicts of one kind (unjudged / error) grouped by judge and reason, most frequent first.

    For `error`, harness errors (the conversation could not run) are listed under judge 'harness'.
    """
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in records:
        for v in r.verdicts:
            if v.verdict == verdict:
                found[(v.judge, v.reason)].append(r.id)
        if verdict == "error" and r.error:
            found[("harness", r.error)].append(r.id)
    rows = [
        ReasonCount(judge=j, reason=reason, verdicts=len(ids), records=sorted(set(ids)))
        for (j, reason), ids in found.items()
    ]
    return sorted(rows, key=lambda c: (-c.verdicts, c.judge, c.reason))


def _is_c1(criterion: str | None) -> bool:
    return criterion == C1_CRITERION or (criterion or "").startswith(C1_CRITERION.split(":")[0])


def _c1_total(details: dict[str, Any]) -> int | None:
    """The C1 rubric's 0-5 total: details['total'], else the sum of the five dimension scores
    (floored at 0, as the judge does); None when the verdict carries neither."""
    total = details.get("total")
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        return int(total)
    found = details.get("dimensions")
    dims: dict[str, Any] = found if isinstance(found, dict) else details
    scores = [dims.get(d) for d in C1_DIMENSIONS]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores):
        return max(0, int(sum(scores)))  # type: ignore[arg-type]
    return None


def c1_scores(records: list[RunRecord]) -> C1Scores | None:
    """Seed 004's 0-5 C1 rubric over the run: distribution, mean, per dimension and per case.
    None when no record carries a C1 rubric verdict."""
    totals: dict[str, list[int]] = defaultdict(list)
    dims: dict[str, list[float]] = defaultdict(list)
    unscored = 0
    for r in records:
        for v in r.verdicts:
            if v.judge != "llm_rubric" or not _is_c1(v.criterion):
                continue
            details = v.details or {}
            total = _c1_total(details)
            if total is None:
                unscored += 1
                continue
            totals[r.case_id].append(total)
            found = details.get("dimensions")
            d: dict[str, Any] = found if isinstance(found, dict) else details
            for name in C1_DIMENSIONS:
                if isinstance(d.get(name), (int, float)) and not isinstance(d.get(name), bool):
                    dims[name].append(float(d[name]))
    if not totals and not unscored:
        return None
    every = [t for ts in totals.values() for t in ts]

    def dist(ts: list[int]) -> dict[int, int]:
        c = Counter(ts)
        return {n: c[n] for n in range(6)}

    return C1Scores(
        scored=len(every),
        unscored=unscored,
        distribution=dist(every) if every else {},
        mean_total=mean(every),
        dimensions={name: mean(dims[name]) for name in C1_DIMENSIONS if dims[name]},
        cases=[
            C1CaseScore(case_id=cid, totals=ts, mean_total=mean(ts), distribution=dist(ts))
            for cid, ts in sorted(totals.items())
        ],
    )


def persona_traits(records: list[RunRecord]) -> dict[str, dict[str, Any]]:
    """Per persona: how its traits were followed, from the fidelity.traits measurements."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    passed: Counter[str] = Counter()
    for r in records:
        v = next((v for v in r.verdicts if v.judge == "fidelity.traits" and v.details), None)
        if v is None or v.details is None or not r.persona or not v.details.get("user_turns"):
            continue
        groups[r.persona].append(v.details)
        passed[r.persona] += v.verdict == "pass"
    out = {}
    for pid, ds in sorted(groups.items()):
        turns = sum(d["user_turns"] for d in ds)
        out[pid] = {
            "conversations": len(ds),
            "verbosity": ds[0]["verbosity"],
            "mean_chars": round(sum(d["mean_chars"] * d["user_turns"] for d in ds) / turns, 1),
            "reveal_policy": ds[0]["reveal_policy"],
            "mean_facts_per_turn": round(
                sum(d["mean_facts_per_turn"] * d["user_turns"] for d in ds) / turns, 2
            ),
            "max_facts_in_turn": max(d["max_facts_in_turn"] for d in ds),
            "trait_check_pass_rate": round(passed[pid] / len(ds), 4),
        }
    return out


def load_decay(run_dir: Path | None) -> dict[str, Any] | None:
    """DIR/decay.json as the decay sweep wrote it, or None when absent or unreadable."""
    if run_dir is None:
        return None
    path = Path(run_dir) / DECAY_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None  # a half-written decay file must not stop the main report
    return data if isinstance(data, dict) else {"data": data}


def summarize(records: list[RunRecord], meta: dict[str, Any], *, run_dir: Path | None = None) -> Summary:
    """The typed summary. `run_dir` (else meta['run_dir'] / meta['args']['out']) is searched for decay.json."""
    if run_dir is None:
        given = meta.get("args")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        found = meta.get("run_dir") or meta.get("out") or args.get("out")
        run_dir = Path(found) if found else None
    return Summary(
        meta=redact_value(dict(meta)),
        totals=rate(records),
        by_dimension=_rates_by(records, lambda r: r.dimension),
        by_dimension_difficulty={
            dim: _rates_by(
                [r for r in records if r.dimension == dim], lambda r: r.difficulty or "unspecified"
            )
            for dim in sorted({r.dimension for r in records})
        },
        by_category=_rates_by([r for r in records if r.category], lambda r: f"{r.dimension}-{r.category}"),
        repeats=repeat_stats(records),
        skill_impact=skill_impact(records),
        red_line_hits=[
            RedLineHit(record_id=r.id, case_id=r.case_id, status=r.status)
            for r in records
            if RED_LINE_TAG in r.tags and r.status == "failed"
        ],
        long_context=long_context_stats(records),
        c1_rubric=c1_scores(records),
        decay=load_decay(run_dir),
        token_growth=token_growth(records),
        stop_reasons=dict(Counter(r.stop_reason or "none" for r in records).most_common()),
        usage=usage_totals(records),
        unjudged=reason_counts(records, "unjudged"),
        errors=reason_counts(records, "error"),
        judging=judge_stats(records),
        rule_readings=rule_readings(records),
        recheck=recheck_stats(records, meta),
        grades=grade_distributions(records),
        complexity=complexity_curves(records),
        blame=dict(Counter(r.blame for r in records if r.status != "passed" and r.blame).most_common()),
        simulator_suspects=[r.id for r in records if r.simulator_suspect],
        inconclusive=[r.id for r in records if r.status == "inconclusive"],
        gate={"default": decide(records), "strict": decide(records, strict=True)},
        persona_traits=persona_traits(records),
    )


def build_summary(
    records: Iterable[RunRecord], meta: dict[str, Any], *, run_dir: Path | None = None
) -> dict[str, Any]:
    """summary.json content (JSON-ready dict) for a run's records; see `summarize`.

    One pass over `records` (a list, or a stream from the store or results.jsonl): each record is
    reduced to its `summary_view` as it comes, so memory holds the small views, never the
    transcripts. The result is the same as `summarize` over the full records."""
    recheck = meta.get("recheck")
    sampled = frozenset((recheck.get("ids") or []) if isinstance(recheck, dict) else [])
    views = [summary_view(r, sampled) for r in records]
    return summarize(views, meta, run_dir=run_dir).model_dump(mode="json")


# The verdicts a summary part reads besides the status: judge_stats, c1_scores (llm_rubric),
# grade_distributions (graded), persona_traits (fidelity.traits), reason_counts (unjudged, error);
# rule_readings reads every rule check's verdict, kept slim (judge, verdict, the uncertain flags).
_SUMMARY_JUDGES = frozenset({"llm_rubric", "graded", "fidelity.traits"})
_SUMMARY_VERDICTS = frozenset({"unjudged", "error"})
# what no summary part reads: the conversation itself and its traces
_DROPPED: dict[str, Any] = {
    "transcript": [],
    "attempts": [],
    "timeline": [],
    "tool_trace": [],
    "sim_events": [],
    "traceback": None,
    "system_config": {},
    "suspect_reason": "",
    "stop_detail": "",
    "stop": None,
}


def summary_view(record: RunRecord, recheck_ids: frozenset[str] = frozenset()) -> RunRecord:
    """The record as the summary sees it: the fields `summarize` reads, without the transcript,
    attempts and traces, and only the verdicts a summary part reads (a record of the rule-to-LLM
    re-check keeps every verdict: its rule checks are compared with the LLM's). A few KB instead
    of ~100 KB, so a 10,000-conversation summary fits in memory."""
    keep_all = record.id in recheck_ids or any(is_recheck(v) for v in record.verdicts)
    verdicts = (
        record.verdicts
        if keep_all
        else [
            v if v.judge in _SUMMARY_JUDGES or v.verdict in _SUMMARY_VERDICTS else slim_rule_verdict(v)
            for v in record.verdicts
            if v.judge in _SUMMARY_JUDGES or v.verdict in _SUMMARY_VERDICTS or is_rule_verdict(v)
        ]
    )
    skills = [e for e in record.skill_events if e.kind == "triggered"][:1]  # skill_impact: any triggered
    return record.model_copy(update={**_DROPPED, "verdicts": verdicts, "skill_events": skills})


def write_summary(path: Path, summary: dict[str, Any]) -> Path:
    """Write summary.json (UTF-8, Chinese kept readable)."""
    path = Path(path)
    path.write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path
