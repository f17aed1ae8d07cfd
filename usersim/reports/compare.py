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
from usersim.core.secrets import redact
from usersim.reports import compare_stats as st
from usersim.reports.compare_figures import (
    METHOD_FAMILY,
    METHOD_TEST,
    MIN_PAIRED,
    criteria,
    noise,
    side_figures,
    verdict,
    warnings,
)
from usersim.reports.compare_models import (
    CaseResult,
    CaseVerdict,
    Comparison,
    Delta,
    Interval,
    Method,
    Pair,
    SuiteResult,
)
from usersim.reports.compare_pairs import Matched, change, divergence, pair_records, verdict_moves

BOOTSTRAP_SEED = 0


class CompareError(ValueError):
    """A run folder that cannot be compared (missing, no results): one clear line."""


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


def label(n: int, worse: int, better: int, rejected: bool, interval: Interval | None) -> CaseVerdict:
    """What a difference shows, from the corrected test and the interval together: significant only
    when both say so (the test rejects, the interval excludes 0 on the side of the change), within
    noise only when neither does; when they disagree it is inconclusive, never either of those."""
    if not n:
        return "undecided"
    if not worse + better:
        return "no change"
    side = -1 if worse > better else 1 if better > worse else 0
    off_zero = interval is not None and ((side < 0 and interval.high < 0) or (side > 0 and interval.low > 0))
    if rejected and off_zero:
        return "significantly worse" if side < 0 else "significantly better"
    if not rejected and not (interval is not None and (interval.high < 0 or interval.low > 0)):
        return "within noise"
    return "inconclusive"


def case_confidence(alpha: float, members: int) -> float:
    """The per-case interval's confidence: simultaneous over the family (Bonferroni at the weight
    Holm gives a case, alpha / (2m)), so a case interval off 0 means what the corrected test means."""
    return 1 - alpha * (0.5 / members if members > 1 else 1.0)


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
    verdict = label(n, worse, better, rejected, interval)
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
    min_paired: float = MIN_PAIRED,
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
    case_conf = case_confidence(alpha, sum(family.in_family))
    cases = [
        _case(c, by_case[c], family.case_p[i], family.in_family[i], family.case_rejected[i], case_conf)
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
        verdict=label(decided, worse, better, family.suite_rejected, interval),
    )
    side_a = side_figures(names[0], a, [m.a for m in matched], meta[0], conf)
    side_b = side_figures(names[1], b, [m.b for m in matched], meta[1], conf)
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
            case_interval="Newcombe's paired score interval (method 10, from scipy's Wilson intervals) at "
            f"{case_conf:.2%}, simultaneous over the family's cases (Bonferroni at a case's Holm weight): "
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
        criteria=criteria(pairs, matched),
        noise=noise(side_a, side_b, pairs),
        costs={k: Delta(a=round(x, 6), b=round(y, 6), delta=round(y - x, 6)) for k, (x, y) in costs.items()},
        unpaired=unpaired,
        unpaired_reasons=dict(Counter(u.reason for u in unpaired).most_common()),
        warnings=warnings(side_a, side_b, pairs, unpaired),
        verdict=verdict(suite, cases, alpha, (len(matched), max(len(a), len(b))), min_paired),
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
    run_a: Path,
    run_b: Path,
    out: Path,
    *,
    alpha: float = 0.05,
    same_seed_only: bool = False,
    min_paired: float = MIN_PAIRED,
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
        min_paired=min_paired,
    )
    return comparison, a, b


def write_comparison(
    out: Path, comparison: Comparison, a: list[RunRecord], b: list[RunRecord]
) -> tuple[Path, Path]:
    """OUT/compare.json and OUT/compare.html."""
    from usersim.reports.compare_html import write_compare_html

    out.mkdir(parents=True, exist_ok=True)
    path = out / "compare.json"
    path.write_text(redact(comparison.model_dump_json(indent=2)) + "\n", encoding="utf-8")
    return path, write_compare_html(out / "compare.html", comparison, a, b)
