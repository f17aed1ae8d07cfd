"""The figures of `usersim compare` around the tests: each side's rates, pass^k and noise, the checks
that moved, noise apart from change, the warnings and the verdict line (see reports.compare)."""

from __future__ import annotations

from typing import Any

from usersim.core.record import RunRecord
from usersim.reports import compare_stats as st
from usersim.reports.compare_models import (
    CaseResult,
    CriterionMove,
    Interval,
    JudgeNoise,
    Noise,
    Pair,
    PassHatK,
    Side,
    SuiteResult,
    Unpaired,
    Verdict,
)
from usersim.reports.compare_pairs import Matched, verdict_moves
from usersim.reports.summary import rate, repeat_stats, usage_totals
from usersim.reports.summary_models import UsageTotal

EXIT_NO_REGRESSION, EXIT_REGRESSION, EXIT_UNPAIRABLE, EXIT_INCONCLUSIVE = 0, 1, 2, 3
MIN_PAIRED = 0.5  # share of the larger side's conversations that must be paired (compare --min-paired)

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


def judge_noise(records: list[RunRecord]) -> JudgeNoise:
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


def pass_hat_k(records: list[RunRecord], confidence: float) -> PassHatK:
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


def side_figures(
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
        pass_hat_k=pass_hat_k(records, conf),
        judge_noise=judge_noise(records),
        usage=total,
        mean_duration_s=round(sum(r.duration_s for r in paired) / len(paired), 4) if paired else None,
    )


def criteria(pairs: list[Pair], matched: list[Matched]) -> list[CriterionMove]:
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


def noise(a: Side, b: Side, pairs: list[Pair]) -> Noise:
    same = [p for p in pairs if p.same_transcript]
    moves = sum(len(p.moved) for p in same)
    status = sum(p.change in ("worse", "better") for p in same)
    notes = []
    if a.pass_hat_k.variants or b.pass_hat_k.variants:
        notes.append(
            "agent flip rate within each side (repeats that disagree): "
            f"A {pct(a.pass_hat_k.flip_rate)}, B {pct(b.pass_hat_k.flip_rate)}; a flip rate near the "
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
                f"sampled verdicts split (mean agreement {pct(side.judge_noise.mean_agreement)})"
            )
    return Noise(
        agent_flip_rate_a=a.pass_hat_k.flip_rate,
        agent_flip_rate_b=b.pass_hat_k.flip_rate,
        same_transcript_pairs=len(same),
        judge_moves_on_same_transcript=moves,
        status_changes_on_same_transcript=status,
        notes=notes,
    )


def warnings(a: Side, b: Side, pairs: list[Pair], unpaired: list[Unpaired]) -> list[str]:
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


def bound(v: float) -> str:
    """An interval bound in points, never rounded onto 0 or across it: -0.02 points is "-0.02",
    not "+0.0"; exactly 0 is "0"."""
    x = v * 100
    if x == 0:
        return "0"
    text = f"{x:+.1f}"
    return text if float(text) != 0 else f"{x:+.2g}"


def span(interval: Interval | None) -> str:
    return f"[{bound(interval.low)}, {bound(interval.high)}]" if interval else "[—]"


def verdict(
    suite: SuiteResult,
    cases: list[CaseResult],
    alpha: float,
    paired: tuple[int, int] = (0, 0),
    min_paired: float = 0.0,
) -> Verdict:
    """The one line and the exit code. `paired`: (conversations paired, conversations on the larger
    side); fewer than `min_paired` of them paired is too little to speak for the runs: exit 3."""
    worse = [c.case_id for c in cases if c.verdict == "significantly worse"]
    better = [c.case_id for c in cases if c.verdict == "significantly better"]
    noise = [c.case_id for c in cases if c.verdict == "within noise"]
    unclear = [c for c in cases if c.verdict == "inconclusive"]
    suite_worse, suite_better = (
        suite.verdict == "significantly worse",
        suite.verdict == "significantly better",
    )
    regression, improvement = bool(worse) or suite_worse, bool(better) or suite_better
    tail = f"suite {points(suite.delta)} {span(suite.interval)} ({suite.verdict}), McNemar p = {suite.p_value:.3g}"
    parts = []
    if worse:
        parts.append(f"{len(worse)} case(s) significantly worse (p < {alpha:g}, Holm): {', '.join(worse)}")
    elif suite_worse:
        parts.append(f"the suite is significantly worse (p < {alpha:g}) though no single case is")
    if better:
        parts.append(f"{len(better)} case(s) significantly better: {', '.join(better)}")
    if unclear:
        parts.append(
            f"{len(unclear)} inconclusive (interval and Holm-corrected test disagree): "
            + ", ".join(
                f"{c.case_id} {points(c.delta)} {span(c.interval)} p = {c.p_value:.3g}" for c in unclear
            )
        )
    parts.append(f"{len(noise)} change(s) within noise")
    n_paired, n_side = paired
    # a worse-looking change the two disagree on: a case's simultaneous interval off 0 or its test
    # rejecting alone; for the suite only its test rejecting (the bootstrap over a handful of cases
    # is not a calibrated test, so its interval alone never raises the alarm)
    worse_unclear = [c.case_id for c in unclear if c.worse > c.better]
    if suite.verdict == "inconclusive" and suite.significant and suite.worse > suite.better:
        worse_unclear.append("the suite")
    if not suite.decided:
        head, code = "nothing to compare: no pair with both sides decided", EXIT_UNPAIRABLE
    elif n_side and n_paired < min_paired * n_side:
        head, code = (
            f"inconclusive: too little pairing, {n_paired} of {n_side} conversations paired (at least "
            f"{min_paired:.0%} needed, --min-paired)",
            EXIT_INCONCLUSIVE,
        )
    elif regression:
        head, code = "regression", EXIT_REGRESSION
    elif worse_unclear:
        head, code = (
            f"inconclusive: {', '.join(worse_unclear)} looks worse but the interval and the corrected test "
            "disagree (more repeats: usersim plan-repeats)",
            EXIT_INCONCLUSIVE,
        )
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
        inconclusive=[c.case_id for c in unclear],
        line=line,
        exit_code=code,  # type: ignore[arg-type]
    )


def pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def points(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:+.1f} points"
