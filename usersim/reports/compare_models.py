"""The typed shape of compare.json (`usersim compare RUN_A RUN_B`), versioned like summary.json.

Side A is the baseline, side B the run under question; every delta is B - A. Rates are fractions
0..1 and follow the gate's rule (usersim.core.gate): passed / (passed + failed + error); a pair in
which either side is unjudged or inconclusive is left out of every test and counted.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.reports.summary_models import Rate, UsageTotal

COMPARE_SCHEMA_VERSION = 1

Change = Literal["worse", "better", "same", "left_out"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Interval(Strict):
    """A confidence interval."""

    low: float = Field(description="Lower bound.")
    high: float = Field(description="Upper bound.")
    confidence: float = Field(description="Confidence level, 1 - alpha.")
    method: str = Field(description="How it was computed.")


class PassHatK(Strict):
    """pass^k of one side: the share of repeated case variants whose every repeat passed."""

    variants: int = Field(description="Repeated variants with every repeat decided (the denominator).")
    all_passed: int = Field(description="Variants whose every repeat passed.")
    value: float | None = Field(description="all_passed / variants; null without repeated variants.")
    interval: Interval | None = Field(description="Wilson interval over the variants.")
    flip_rate: float | None = Field(
        description="Agent noise: share of repeated variants whose repeats disagree (some passed, some not)."
    )
    flipped: int = Field(description="Variants whose repeats disagree.")


class JudgeNoise(Strict):
    """How far one side's LLM judges disagreed with themselves (--judge-samples, ensembles)."""

    sampled_verdicts: int = Field(description="LLM verdicts decided by more than one vote.")
    split_verdicts: int = Field(description="Of those, verdicts whose votes were not unanimous.")
    mean_agreement: float | None = Field(description="Mean share of votes agreeing with the verdict.")


class Side(Strict):
    """One of the two runs."""

    run_dir: str = Field(description="The run folder as given.")
    run_id: str = Field(description="Run id.")
    agent: str | None = Field(description="Agent SPEC (of the first record).")
    simulator: str | None = Field(description="Simulator SPEC (organic cases).")
    judge_model: str | None = Field(description="Judge model SPEC or null.")
    seed: int | None = Field(description="Run seed from the run's meta, when recorded.")
    records: int = Field(description="Conversations in the run.")
    rate: Rate = Field(description="Pass rate over all of the side's conversations.")
    paired_rate: Rate = Field(description="Pass rate over the conversations that were paired.")
    pass_hat_k: PassHatK = Field(description="pass^k and flip rate over its repeats (all conversations).")
    judge_noise: JudgeNoise = Field(description="Judge self-disagreement on this side.")
    usage: UsageTotal = Field(description="Model usage summed over the paired conversations.")
    mean_duration_s: float | None = Field(description="Mean wall time per paired conversation.")


class Pair(Strict):
    """One conversation on each side: same case, variant and repeat."""

    case_id: str = Field(description="Case id.")
    variant: str = Field(description="Variant key with the repeat, e.g. 'length=4k,r2'.")
    a_id: str = Field(description="Record id on side A.")
    b_id: str = Field(description="Record id on side B.")
    a_status: str = Field(description="Status on side A.")
    b_status: str = Field(description="Status on side B.")
    change: Change = Field(
        description="worse: A passed, B did not; better: the reverse; same: both or neither passed; "
        "left_out: a side is unjudged or inconclusive."
    )
    same_seed: bool = Field(
        description="Both sides ran with the same conversation seed (same simulated user)."
    )
    same_transcript: bool = Field(
        description="Both transcripts are identical: any difference in verdicts is the judges', not the agent's."
    )
    divergence_turn: int | None = Field(
        description="First user turn where the transcripts differ (null when identical)."
    )
    divergence_message: int | None = Field(description="Index of the first differing message.")
    a_link: str = Field(description="Link to the side-A transcript (its report.html anchor).")
    b_link: str = Field(description="Link to the side-B transcript.")
    moved: list[str] = Field(
        default_factory=list, description="'judge: criterion' of the verdicts that changed pass<->fail."
    )


CaseVerdict = Literal[
    "significantly worse", "significantly better", "within noise", "inconclusive", "no change", "undecided"
]


class CaseResult(Strict):
    """One case: pass counts on each side, flips, test and interval."""

    case_id: str = Field(description="Case id.")
    pairs: int = Field(description="Paired conversations.")
    decided: int = Field(description="Pairs with both sides decided (passed, failed or error).")
    left_out: int = Field(description="Pairs with a side unjudged or inconclusive.")
    a_passed: int = Field(description="Side A passes among the decided pairs.")
    b_passed: int = Field(description="Side B passes among the decided pairs.")
    worse: int = Field(description="Pairs A passed and B did not (pass -> fail).")
    better: int = Field(description="Pairs B passed and A did not (fail -> pass).")
    delta: float | None = Field(description="(b_passed - a_passed) / decided.")
    interval: Interval | None = Field(
        description="Newcombe paired interval of delta, at the family's simultaneous confidence "
        "(1 - alpha/(2m) with m cases in the family: Bonferroni at the weight Holm gives a case)."
    )
    p_value: float = Field(description="Exact McNemar p-value (raw, before the family correction).")
    in_family: bool = Field(description="Has discordant pairs, so it is one of the family's tests.")
    significant: bool = Field(description="Rejected by Holm's weighted step-down at alpha.")
    verdict: CaseVerdict = Field(
        description="What the case shows: significant only when the Holm test rejects AND the interval "
        "excludes 0; within noise only when neither does; inconclusive when they disagree."
    )
    first_divergence: int | None = Field(
        description="Earliest user turn where a flipped pair's transcripts diverge."
    )
    flips: list[Pair] = Field(default_factory=list, description="The discordant pairs, with links.")


class SuiteResult(Strict):
    """The suite-level paired difference."""

    pairs: int = Field(description="Paired conversations.")
    decided: int = Field(description="Pairs with both sides decided.")
    left_out: int = Field(description="Pairs with a side unjudged or inconclusive.")
    worse: int = Field(description="pass -> fail pairs.")
    better: int = Field(description="fail -> pass pairs.")
    a_rate: float | None = Field(description="Side A pass rate over the decided pairs.")
    b_rate: float | None = Field(description="Side B pass rate over the decided pairs.")
    delta: float | None = Field(description="b_rate - a_rate.")
    interval: Interval | None = Field(description="Stratified paired bootstrap interval of delta.")
    p_value: float = Field(description="Exact McNemar p-value over all decided pairs.")
    significant: bool = Field(description="Rejected by the family's step-down at alpha.")
    verdict: CaseVerdict = Field(
        default="undecided", description="As a case's: the test and the bootstrap interval together."
    )


class CriterionMove(Strict):
    """One check (judge + criterion) whose verdicts moved between the sides."""

    judge: str = Field(description="Judge name.")
    criterion: str = Field(description="Criterion (first 160 characters).")
    pass_to_fail: int = Field(description="Pairs where it passed on A and failed on B.")
    fail_to_pass: int = Field(description="Pairs where it failed on A and passed on B.")
    on_same_transcript: int = Field(description="Of the moves, those on identical transcripts: judge noise.")
    pairs: list[str] = Field(description="Case|variant of the pairs concerned (first 20).")


class Unpaired(Strict):
    """A conversation with no partner on the other side."""

    side: Literal["A", "B"] = Field(description="Which run it is from.")
    record_id: str = Field(description="Record id.")
    case_id: str = Field(description="Case id.")
    reason: str = Field(description="Why it could not be paired.")


class Noise(Strict):
    """Noise apart from change."""

    agent_flip_rate_a: float | None = Field(description="Side A: share of repeated variants that flip.")
    agent_flip_rate_b: float | None = Field(description="Side B: share of repeated variants that flip.")
    same_transcript_pairs: int = Field(description="Pairs whose transcripts are identical.")
    judge_moves_on_same_transcript: int = Field(
        description="Verdict moves on identical transcripts (the judges', never the agent's)."
    )
    status_changes_on_same_transcript: int = Field(
        description="Pairs with identical transcripts whose status changed between pass and fail."
    )
    notes: list[str] = Field(default_factory=list, description="What the noise figures say, in words.")


class Method(Strict):
    """Which statistics were used and why."""

    alpha: float = Field(description="Family-wise false-alarm rate.")
    test: str = Field(description="The test and why it was chosen.")
    multiplicity: str = Field(description="How false alarms across cases are controlled.")
    case_interval: str = Field(description="Per-case interval method.")
    suite_interval: str = Field(description="Suite interval method.")
    bootstrap_reps: int = Field(description="Bootstrap replicates.")
    bootstrap_seed: int = Field(description="Seed of numpy's Generator for the bootstrap.")
    pairing: str = Field(description="How conversations were paired.")


class Delta(Strict):
    """One cost / token / latency figure on both sides."""

    a: float = Field(description="Side A.")
    b: float = Field(description="Side B.")
    delta: float = Field(description="b - a.")


class Verdict(Strict):
    """The one-line answer and the exit code."""

    regression: bool = Field(description="Some case (or the suite) is significantly worse.")
    improvement: bool = Field(description="Some case (or the suite) is significantly better.")
    worse_cases: list[str] = Field(description="Cases significantly worse.")
    better_cases: list[str] = Field(description="Cases significantly better.")
    within_noise: list[str] = Field(description="Cases that changed, but not significantly.")
    inconclusive: list[str] = Field(
        default_factory=list, description="Cases whose interval and corrected test disagree."
    )
    line: str = Field(description="The verdict as printed.")
    exit_code: Literal[0, 1, 2, 3] = Field(
        description="0 no significant regression, 1 significant regression, 2 nothing could be paired, "
        "3 inconclusive (a worse-looking change the test and interval disagree on, or too few pairs)."
    )


class Comparison(Strict):
    """compare.json."""

    schema_version: int = Field(default=COMPARE_SCHEMA_VERSION, description="compare.json format version.")
    a: Side = Field(description="Side A: the baseline.")
    b: Side = Field(description="Side B: the run compared with it.")
    method: Method = Field(description="Statistics used.")
    suite: SuiteResult = Field(description="Suite-level paired difference.")
    cases: list[CaseResult] = Field(description="Per case.")
    criteria: list[CriterionMove] = Field(description="Checks whose verdicts moved.")
    noise: Noise = Field(description="Agent and judge noise apart from change.")
    costs: dict[str, Delta] = Field(
        description="cost_usd, prompt/completion tokens, mean duration: A, B, B - A."
    )
    unpaired: list[Unpaired] = Field(description="Conversations without a partner, with the reason.")
    unpaired_reasons: dict[str, int] = Field(description="Reason -> conversations.")
    warnings: list[str] = Field(default_factory=list, description="What makes the comparison weaker.")
    verdict: Verdict = Field(description="The answer.")
