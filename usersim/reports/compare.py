"""`usersim compare RUN_A RUN_B`: is the difference between two runs a regression, or noise?

`compare_records(a, b, ...)` is the core (records in, a typed `Comparison` out); `compare_runs`
reads two run folders; `write_comparison` writes compare.json and compare.html. The statistics
are in reports.compare_stats, the pairing in reports.compare_pairs, the shape in
reports.compare_models. numpy and scipy (the `compare` extra) are imported only when it runs.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from usersim.core.record import RunRecord
from usersim.reports import compare_stats as st
from usersim.reports.compare_models import (
    CaseResult,
    Comparison,
    CriterionMove,
    Delta,
    Interval,
    JudgeNoise,
    Method,
    Noise,
    Pair,
    PassHatK,
    Side,
    SuiteResult,
    Unpaired,
    Verdict,
)
from usersim.reports.compare_pairs import Matched, change, divergence, pair_records, verdict_moves
from usersim.reports.summary import rate, repeat_stats, usage_totals
from usersim.reports.summary_models import UsageTotal

EXIT_NO_REGRESSION, EXIT_REGRESSION, EXIT_UNPAIRABLE = 0, 1, 2
BOOTSTRAP_SEED = 0


class CompareError(ValueError):
    """A run folder that cannot be compared (missing, no results): one clear line."""


def _judge_noise(records: list[RunRecord]) -> JudgeNoise:
    sampled = split = 0
    agreements: list[float] = []
    for r in records:
        for v in r.verdicts:
            votes = (v.details or {}).get("votes")
            if not isinstance(votes, dict) or sum(int(n) for n in votes.values()) <= 1:
                continue
            sampled += 1
            agreement = (v.details or {}).get("agreement")
            if isinstance(agreement, (int, float)):
                agreements.append(float(agreement))
                split += agreement < 1
    mean = round(sum(agreements) / len(agreements), 4) if agreements else None
    return JudgeNoise(sampled_verdicts=sampled, split_verdicts=split, mean_agreement=mean)


def _pass_hat_k(records: list[RunRecord], confidence: float) -> PassHatK:
    rep = repeat_stats(records)
    decided = [g for g in rep.details if g.decided]
    n, k = len(decided), sum(g.pass_all for g in decided)
    low, high = st.wilson(k, n, confidence)
    return PassHatK(
        variants=n,
        all_passed=k,
        value=rep.pass_hat_k,
        interval=Interval(low=low, high=high, confidence=confidence, method="Wilson score over variants")
        if n
        else None,
        flip_rate=rep.flip_rate,
        flipped=sum(g.flip for g in decided),
    )


def _side(
    run_dir: str, records: list[RunRecord], paired: list[RunRecord], meta: dict[str, Any], conf: float
) -> Side:
    first = records[0] if records else None
    seed = meta.get("seed")
    total = usage_totals(paired).get("total", UsageTotal())
    return Side(
        run_dir=run_dir,
        run_id=str(meta.get("run_id") or (first.run_id if first else run_dir)),
        agent=first.agent if first else None,
        simulator=next((r.simulator for r in records if r.simulator), None),
        judge_model=first.judge_model if first else None,
        seed=seed if isinstance(seed, int) else None,
        records=len(records),
        rate=rate(records),
        paired_rate=rate(paired),
        pass_hat_k=_pass_hat_k(records, conf),
        judge_noise=_judge_noise(records),
        usage=total,
        mean_duration_s=round(sum(r.duration_s for r in paired) / len(paired), 4) if paired else None,
    )


def _link(report: str, index: int) -> str:
    return f"{report}#r{index}"


def _pair(m: Matched, links: tuple[str, str]) -> Pair:
    turn, msg = divergence(m.a.transcript, m.b.transcript)
    return Pair(
        case_id=m.a.case_id,
        variant=m.a.variant.key(),
        a_id=m.a.id,
        b_id=m.b.id,
        a_status=m.a.status,
        b_status=m.b.status,
        change=change(m.a.status, m.b.status),
        same_seed=m.a.seed == m.b.seed,
        same_transcript=msg is None,
        divergence_turn=turn,
        divergence_message=msg,
        a_link=_link(links[0], m.a_index),
        b_link=_link(links[1], m.b_index),
        moved=[f"{j}: {c}" for j, c, _ in verdict_moves(m.a, m.b)],
    )


def _case(
    case_id: str, pairs: list[Pair], p: float, in_family: bool, rejected: bool, conf: float
) -> CaseResult:
    decided = [x for x in pairs if x.change != "left_out"]
    worse = sum(x.change == "worse" for x in decided)
    better = sum(x.change == "better" for x in decided)
    a_passed = sum(x.a_status == "passed" for x in decided)
    b_passed = sum(x.b_status == "passed" for x in decided)
    both = sum(x.a_status == "passed" and x.b_status == "passed" for x in decided)
    n = len(decided)
    interval = None
    if n:
        low, high = st.newcombe_paired(both, worse, better, n - both - worse - better, conf)
        interval = Interval(low=low, high=high, confidence=conf, method="Newcombe paired score (method 10)")
    if not n:
        verdict = "undecided"
    elif rejected:
        verdict = "significantly worse" if worse > better else "significantly better"
    else:
        verdict = "within noise" if worse + better else "no change"
    flips = [x for x in decided if x.change in ("worse", "better")]
    turns = [x.divergence_turn for x in flips if x.divergence_turn is not None]
    return CaseResult(
        case_id=case_id,
        pairs=len(pairs),
        decided=n,
        left_out=len(pairs) - n,
        a_passed=a_passed,
        b_passed=b_passed,
        worse=worse,
        better=better,
        delta=round((b_passed - a_passed) / n, 4) if n else None,
        interval=interval,
        p_value=p,
        in_family=in_family,
        significant=rejected,
        verdict=verdict,  # type: ignore[arg-type]
        first_divergence=min(turns) if turns else None,
        flips=flips,
    )


def _criteria(pairs: list[Pair], matched: list[Matched]) -> list[CriterionMove]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for pair, m in zip(pairs, matched):
        for judge, crit, way in verdict_moves(m.a, m.b):
            row = found.setdefault(
                (judge, crit), {"pass_to_fail": 0, "fail_to_pass": 0, "same": 0, "pairs": []}
            )
            row[way] += 1
            row["same"] += pair.same_transcript
            row["pairs"].append(f"{pair.case_id}|{pair.variant}")
    rows = [
        CriterionMove(
            judge=j,
            criterion=c,
            pass_to_fail=v["pass_to_fail"],
            fail_to_pass=v["fail_to_pass"],
            on_same_transcript=v["same"],
            pairs=v["pairs"][:20],
        )
        for (j, c), v in found.items()
    ]
    return sorted(rows, key=lambda r: (-(r.pass_to_fail + r.fail_to_pass), r.judge, r.criterion))


def _noise(a: Side, b: Side, pairs: list[Pair]) -> Noise:
    same = [p for p in pairs if p.same_transcript]
    moves = sum(len(p.moved) for p in same)
    status = sum(p.change in ("worse", "better") for p in same)
    notes = []
    if a.pass_hat_k.variants or b.pass_hat_k.variants:
        notes.append(
            "agent flip rate within each side (repeats that disagree): "
            f"A {_pct(a.pass_hat_k.flip_rate)}, B {_pct(b.pass_hat_k.flip_rate)}; a flip rate near the "
            "change you see means the change may be the agent's own run-to-run noise"
        )
    else:
        notes.append("no repeats on either side: agent noise cannot be measured (run with --repeats)")
    if same:
        notes.append(
            f"{len(same)} pair(s) have identical transcripts: their {moves} verdict move(s) and {status} "
            "status change(s) are judge noise (or a judge change), not the agent's"
        )
    for name, side in (("A", a), ("B", b)):
        if side.judge_noise.sampled_verdicts:
            notes.append(
                f"judges on {name}: {side.judge_noise.split_verdicts} of {side.judge_noise.sampled_verdicts} "
                f"sampled verdicts split (mean agreement {_pct(side.judge_noise.mean_agreement)})"
            )
    return Noise(
        agent_flip_rate_a=a.pass_hat_k.flip_rate,
        agent_flip_rate_b=b.pass_hat_k.flip_rate,
        same_transcript_pairs=len(same),
        judge_moves_on_same_transcript=moves,
        status_changes_on_same_transcript=status,
        notes=notes,
    )


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def _points(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:+.1f} points"


METHOD_TEST = (
    "exact McNemar: a two-sided binomial test (scipy.stats.binomtest) of the pass->fail pairs among the "
    "discordant pairs against 1/2; exact at the few repeats a case gets, and paired, so what both sides "
    "share (the case, the simulated user on a shared seed) cancels out"
)
METHOD_FAMILY = (
    "the suite test and one test per case with discordant pairs form one family, decided by Holm's "
    "weighted step-down (suite weight 1/2, each of the m cases 1/(2m)): the chance of any false "
    "'significant', and so of a false regression verdict, is at most alpha for equal agents; the "
    "per-case p-values shown are raw"
)


def _verdict(suite: SuiteResult, cases: list[CaseResult], alpha: float) -> Verdict:
    worse = [c.case_id for c in cases if c.verdict == "significantly worse"]
    better = [c.case_id for c in cases if c.verdict == "significantly better"]
    noise = [c.case_id for c in cases if c.verdict == "within noise"]
    suite_worse = suite.significant and suite.worse > suite.better
    suite_better = suite.significant and suite.better > suite.worse
    regression, improvement = bool(worse) or suite_worse, bool(better) or suite_better
    interval = f" {suite.interval.low * 100:+.1f}..{suite.interval.high * 100:+.1f}" if suite.interval else ""
    tail = f"suite {_points(suite.delta)} [{interval.strip()}], McNemar p = {suite.p_value:.3g}"
    parts = []
    if worse:
        parts.append(f"{len(worse)} case(s) significantly worse (p < {alpha:g}, Holm): {', '.join(worse)}")
    elif suite_worse:
        parts.append(f"the suite is significantly worse (p < {alpha:g}) though no single case is")
    if better:
        parts.append(f"{len(better)} case(s) significantly better: {', '.join(better)}")
    parts.append(f"{len(noise)} change(s) within noise")
    if not suite.decided:
        head, code = "nothing to compare: no pair with both sides decided", EXIT_UNPAIRABLE
    elif regression:
        head, code = "regression", EXIT_REGRESSION
    elif improvement:
        head, code = "improvement", EXIT_NO_REGRESSION
    else:
        head, code = "no significant change", EXIT_NO_REGRESSION
    line = f"{head}: {'; '.join(parts)}; {tail}" if suite.decided else head
    return Verdict(
        regression=regression,
        improvement=improvement,
        worse_cases=worse,
        better_cases=better,
        within_noise=noise,
        line=line,
        exit_code=code,  # type: ignore[arg-type]
    )


def _warnings(a: Side, b: Side, pairs: list[Pair], unpaired: list[Unpaired]) -> list[str]:
    out = []
    if pairs and not any(p.same_seed for p in pairs):
        out.append(
            f"the runs used different seeds (A {a.seed}, B {b.seed}): pairs are matched by repeat index, "
            "the simulated users differ, so the test is still valid but has less power"
        )
    if pairs and all(p.same_transcript for p in pairs):
        out.append(
            "every pair has identical transcripts (a rescore of the same run?): every difference here is the "
            "judges' (judge noise or a judge change), none is the agent's"
        )
    if (a.judge_model or "") != (b.judge_model or ""):
        out.append(f"the judges differ (A {a.judge_model}, B {b.judge_model}): a change may be the judge's")
    if unpaired:
        out.append(f"{len(unpaired)} conversation(s) could not be paired and are not compared")
    return out


def compare_records(
    a: list[RunRecord],
    b: list[RunRecord],
    *,
    alpha: float = 0.05,
    names: tuple[str, str] = ("A", "B"),
    meta: tuple[dict[str, Any], dict[str, Any]] = ({}, {}),
    links: tuple[str, str] = ("A/report.html", "B/report.html"),
    same_seed_only: bool = False,
    bootstrap_seed: int = BOOTSTRAP_SEED,
) -> Comparison:
    """Pair the two record sets and test every difference (side A is the baseline)."""
    st.require()
    conf = 1 - alpha
    matched, unpaired = pair_records(a, b, same_seed_only=same_seed_only)
    pairs = [_pair(m, links) for m in matched]
    by_case: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        by_case[p.case_id].append(p)
    ids = sorted(by_case)
    counts = [
        (sum(x.change == "worse" for x in by_case[c]), sum(x.change == "better" for x in by_case[c]))
        for c in ids
    ]
    family = st.decide_family(counts, alpha)
    cases = [
        _case(c, by_case[c], family.case_p[i], family.in_family[i], family.case_rejected[i], conf)
        for i, c in enumerate(ids)
    ]
    decided = sum(c.decided for c in cases)
    worse, better = sum(c.worse for c in cases), sum(c.better for c in cases)
    a_rate = sum(c.a_passed for c in cases) / decided if decided else None
    b_rate = sum(c.b_passed for c in cases) / decided if decided else None
    interval = None
    if decided:
        low, high = st.bootstrap_delta(
            [(c.worse, c.better, c.decided - c.worse - c.better) for c in cases], conf, bootstrap_seed
        )
        interval = Interval(
            low=low,
            high=high,
            confidence=conf,
            method="two-stage paired bootstrap (cases, then pairs within cases)",
        )
    suite = SuiteResult(
        pairs=len(pairs),
        decided=decided,
        left_out=len(pairs) - decided,
        worse=worse,
        better=better,
        a_rate=None if a_rate is None else round(a_rate, 4),
        b_rate=None if b_rate is None else round(b_rate, 4),
        delta=None if a_rate is None or b_rate is None else round(b_rate - a_rate, 4),
        interval=interval,
        p_value=family.suite_p,
        significant=family.suite_rejected,
    )
    side_a = _side(names[0], a, [m.a for m in matched], meta[0], conf)
    side_b = _side(names[1], b, [m.b for m in matched], meta[1], conf)
    costs = {
        "cost_usd": (side_a.usage.cost_usd, side_b.usage.cost_usd),
        "prompt_tokens": (side_a.usage.prompt_tokens, side_b.usage.prompt_tokens),
        "completion_tokens": (side_a.usage.completion_tokens, side_b.usage.completion_tokens),
        "mean_duration_s": (side_a.mean_duration_s or 0.0, side_b.mean_duration_s or 0.0),
    }
    return Comparison(
        a=side_a,
        b=side_b,
        method=Method(
            alpha=alpha,
            test=METHOD_TEST,
            multiplicity=METHOD_FAMILY,
            case_interval="Newcombe's paired score interval (method 10, from scipy's Wilson intervals): "
            "sensible at 0 or all discordant pairs, where a bootstrap collapses to a point",
            suite_interval="two-stage paired bootstrap: cases redrawn with replacement, then each drawn "
            "case's pairs (the two sides of a pair kept together); it covers case-to-case spread too, so it "
            f"is wider than the test, which speaks about this suite's cases; {st.BOOTSTRAP_REPS} replicates, numpy Generator seed {bootstrap_seed}, percentile interval",
            bootstrap_reps=st.BOOTSTRAP_REPS,
            bootstrap_seed=bootstrap_seed,
            pairing="case + variant, matched by conversation seed (the same simulated user), else by repeat "
            "index" + (" (same seed only)" if same_seed_only else ""),
        ),
        suite=suite,
        cases=cases,
        criteria=_criteria(pairs, matched),
        noise=_noise(side_a, side_b, pairs),
        costs={k: Delta(a=round(x, 6), b=round(y, 6), delta=round(y - x, 6)) for k, (x, y) in costs.items()},
        unpaired=unpaired,
        unpaired_reasons=dict(Counter(u.reason for u in unpaired).most_common()),
        warnings=_warnings(side_a, side_b, pairs, unpaired),
        verdict=_verdict(suite, cases, alpha),
    )


def load_run(run_dir: Path) -> tuple[list[RunRecord], dict[str, Any]]:
    """results.jsonl and the summary's meta of a run folder."""
    from usersim.reports.rebuild import read_records

    results = Path(run_dir) / "results.jsonl"
    if not results.is_file():
        raise CompareError(f"{results} not found: point at the --out folder of `usersim run`")
    records = read_records(results)
    if not records:
        raise CompareError(f"{results} holds no conversations")
    meta: dict[str, Any] = {}
    try:
        found = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8")).get("meta")
        meta = found if isinstance(found, dict) else {}
    except (OSError, ValueError, AttributeError):
        pass  # the meta only adds the run seed; the records carry the rest
    return records, meta


def compare_runs(
    run_a: Path, run_b: Path, out: Path, *, alpha: float = 0.05, same_seed_only: bool = False
) -> tuple[Comparison, list[RunRecord], list[RunRecord]]:
    """Compare two run folders (and return their records); report links are relative to OUT, where
    compare.json goes."""
    a, meta_a = load_run(run_a)
    b, meta_b = load_run(run_b)
    links = (
        Path(os.path.relpath(Path(run_a) / "report.html", out)).as_posix(),
        Path(os.path.relpath(Path(run_b) / "report.html", out)).as_posix(),
    )
    comparison = compare_records(
        a,
        b,
        alpha=alpha,
        names=(str(run_a), str(run_b)),
        meta=(meta_a, meta_b),
        links=links,
        same_seed_only=same_seed_only,
    )
    return comparison, a, b


def write_comparison(
    out: Path, comparison: Comparison, a: list[RunRecord], b: list[RunRecord]
) -> tuple[Path, Path]:
    """OUT/compare.json and OUT/compare.html."""
    from usersim.reports.compare_html import write_compare_html

    out.mkdir(parents=True, exist_ok=True)
    path = out / "compare.json"
    path.write_text(comparison.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path, write_compare_html(out / "compare.html", comparison, a, b)
