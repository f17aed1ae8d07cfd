"""The typed shape of summary.json (the machine-readable report beside report.html).

Every number the HTML report shows comes from these models, so a user can script against
summary.json and see the same figures. Rates are fractions 0..1 (not percents).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.gate import Gate
from usersim.reports.judging import JudgeStats
from usersim.reports.recheck import RecheckStats
from usersim.reports.rule_readings import CaseRuleReadings

# 2: long-context accuracy = passed / decided, lost in the middle per case, c1_rubric
# 3: one denominator rule (usersim.core.gate): error counts as judged, inconclusive and unjudged are
#    left out and shown; `*_text`, `left_out`, `gate`, `inconclusive`; `suspect` counts removed
SUMMARY_SCHEMA_VERSION = 3


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rate(Strict):
    """Status counts and pass rate of a set of conversations (the gate's rule, usersim.core.gate).

    `pass_rate` is passed / (passed + failed + error); unjudged and inconclusive conversations are
    left out of it and counted beside it (`left_out`), never counted as passes.
    """

    records: int = Field(default=0, description="Conversations in the set.")
    passed: int = Field(default=0, description="Status passed.")
    failed: int = Field(default=0, description="Status failed.")
    error: int = Field(default=0, description="Status error (agent crash, harness, judge or case error).")
    unjudged: int = Field(default=0, description="Status unjudged (e.g. needs an LLM judge).")
    inconclusive: int = Field(
        default=0, description="Status inconclusive: no clean simulated conversation, even re-simulated."
    )
    judged: int = Field(default=0, description="The pass rate's denominator: passed + failed + error.")
    left_out: dict[str, int] = Field(
        default_factory=dict,
        description="Left out of the denominator: unjudged, inconclusive (non-zero only).",
    )
    pass_rate: float | None = Field(default=None, description="passed / judged; null if nothing was judged.")
    pass_rate_text: str = Field(
        default="0/0 = —", description="The pass rate as shown: '6/28 = 21.4% (left out: 2 unjudged)'."
    )
    mean_score: float | None = Field(default=None, description="Mean of the non-null record scores.")


class RepeatGroup(Strict):
    """The repeats of one case variant (same case and variant except `repeat`)."""

    key: str = Field(description="case_id|variant key without the repeat index.")
    case_id: str = Field(description="Case id.")
    k: int = Field(description="Number of repeats run.")
    passed: int = Field(description="Repeats that passed.")
    failed: int = Field(description="Repeats that failed.")
    error: int = Field(default=0, description="Repeats that errored (not passes).")
    decided: bool = Field(
        description="Every repeat was judged (passed, failed or error; none unjudged or inconclusive)."
    )
    pass_all: bool = Field(description="pass^k: every one of the k repeats passed.")
    pass_any: bool = Field(description="pass@k: at least one repeat passed.")
    flip: bool = Field(description="The repeats disagree: some passed and some failed or errored.")


class RepeatStats(Strict):
    """Consistency across repeats (tau-bench pass^k) and flip rate, over the repeated variants whose
    every repeat was judged (the gate's rule: unjudged and inconclusive repeats are never passes
    and never failures, so their variants are left out and counted)."""

    groups: int = Field(
        default=0, description="Repeated case variants with every repeat judged: the denominator."
    )
    undecided: int = Field(
        default=0, description="Repeated variants left out: some repeat unjudged or inconclusive."
    )
    left_out: dict[str, int] = Field(
        default_factory=dict,
        description="Why variants were left out -> how many ('variants with an unjudged repeat', ...).",
    )
    pass_hat_k: float | None = Field(
        default=None, description="Share of repeated variants whose repeats all passed."
    )
    pass_hat_k_text: str = Field(default="0/0 = —", description="pass^k as shown, with what was left out.")
    pass_at_k: float | None = Field(
        default=None, description="Share of repeated variants with at least one pass."
    )
    pass_at_k_text: str = Field(default="0/0 = —", description="pass@k as shown, with what was left out.")
    flip_rate: float | None = Field(
        default=None, description="Share of repeated variants whose repeats disagree."
    )
    flip_rate_text: str = Field(default="0/0 = —", description="Flip rate as shown, with what was left out.")
    pass_hat_k_curve: dict[int, float] = Field(
        default_factory=dict,
        description="k -> mean over variants with n >= k repeats of C(c,k)/C(n,k) (c passes of n).",
    )
    flips: list[RepeatGroup] = Field(
        default_factory=list, description="Variants whose repeats both passed and failed or errored."
    )
    details: list[RepeatGroup] = Field(default_factory=list, description="Every repeated variant.")


class SkillCase(Strict):
    """One case run in Group A (skills off) and Group B (skills on), seed 002."""

    case_id: str = Field(description="Case id.")
    dimension: str = Field(description="Sub-dimension row key, e.g. B1-CL.")
    rate_a: float | None = Field(default=None, description="Group A pass rate over the case's repeats.")
    rate_b: float | None = Field(default=None, description="Group B pass rate over the case's repeats.")
    delta: float | None = Field(default=None, description="skill_impact_delta = rate_b - rate_a.")
    skill_triggered_b: bool = Field(
        default=False, description="A skill was loaded in some Group B conversation."
    )
    b_failures_skill_triggered: bool = Field(
        default=False,
        description="Every failing Group B conversation had loaded a skill (failure caused by a trigger).",
    )
    diagnosis: Literal["ok", "agent", "skill", "incomplete"] = Field(
        description="Seed 002 失败定性: ok; agent = Group A failed (model/prompt); skill = only B failed "
        "(fix the skill); incomplete = a group did not run or decided nothing."
    )
    override: bool = Field(
        default=False, description="Tagged [skill-trigger-override] (exempted drop, for review)."
    )


class SkillDimension(Strict):
    """skill_impact_delta of one sub-dimension with the seed's thresholds and exemptions."""

    dimension: str = Field(description="Row key, e.g. B1-CL (dimension-category).")
    cases: int = Field(description="Cases that ran and were decided in both groups.")
    rate_a: float | None = Field(default=None, description="Mean Group A pass rate of the cases.")
    rate_b: float | None = Field(default=None, description="Mean Group B pass rate of the cases.")
    delta: float | None = Field(default=None, description="rate_b - rate_a.")
    group_a_bar_met: bool | None = Field(
        default=None, description="Group A pass rate >= 70% (the seed's floor)."
    )
    target: float = Field(description="Summary target: delta >= this (0, or -0.10 for B1 CL/IF).")
    target_met: bool | None = Field(default=None, description="delta >= target.")
    exemption_limit: float | None = Field(
        default=None, description="Largest drop the seed exempts (B1 CL 0.10 with a skill trigger, IF 0.05)."
    )
    exempt: bool = Field(
        default=False, description="The drop is within the exemption (not a skill regression)."
    )
    red_line: bool = Field(
        default=False, description="delta < -0.15: the skill must be fixed before release."
    )
    verdict: Literal["pass", "exempt", "fail", "red_line", "incomplete"] = Field(description="Row outcome.")
    note: str = Field(default="", description="Why the row got its verdict.")


class SkillImpact(Strict):
    """Group A/B comparison (seed 002 双组评测)."""

    cases: list[SkillCase] = Field(default_factory=list, description="Per paired case.")
    dimensions: list[SkillDimension] = Field(default_factory=list, description="Per sub-dimension.")
    by_dimension: dict[str, float | None] = Field(
        default_factory=dict, description="Top-level dimension (B1, C1 ..) -> mean delta of its paired cases."
    )
    overrides: list[str] = Field(
        default_factory=list, description="Case ids tagged [skill-trigger-override]."
    )
    red_line_dimensions: list[str] = Field(
        default_factory=list, description="Sub-dimensions with delta < -15%."
    )
    skill_negative_rate: float | None = Field(
        default=None,
        description="Share of paired cases worse in B, leaving out [skill-trigger-override] cases.",
    )


class Accuracy(Strict):
    """Seed 000's accuracy of a set of long-context conversations: passed / decided, the gate's
    rule (decided = passed + failed + error). Unjudged and inconclusive conversations decided
    nothing about the agent: left out of `accuracy` and counted beside it."""

    records: int = Field(default=0, description="Conversations in the set.")
    passed: int = Field(default=0, description="Status passed.")
    failed: int = Field(default=0, description="Status failed.")
    unjudged: int = Field(default=0, description="Status unjudged: left out.")
    error: int = Field(default=0, description="Status error: decided, not a pass.")
    inconclusive: int = Field(default=0, description="Status inconclusive: left out.")
    decided: int = Field(default=0, description="passed + failed + error: the denominator.")
    accuracy: float | None = Field(default=None, description="passed / decided; null if none decided.")
    accuracy_text: str = Field(
        default="0/0 = —", description="The accuracy as shown: '1/3 = 33.3% (left out: 1 unjudged)'."
    )
    mean_score: float | None = Field(
        default=None, description="Mean partial score of the decided records (informational)."
    )


class CaseGradient(Strict):
    """One long-context case across lengths and positions (seed 000)."""

    case_id: str = Field(description="Case id.")
    by_length: dict[str, float | None] = Field(description="4k/16k/32k -> accuracy (passed / decided).")
    by_position: dict[str, float | None] = Field(
        description="beginning/middle/end -> accuracy (passed / decided) of this case's runs."
    )
    length_counts: dict[str, Accuracy] = Field(
        default_factory=dict, description="4k/16k/32k -> passed, decided, unjudged, error."
    )
    position_counts: dict[str, Accuracy] = Field(
        default_factory=dict, description="beginning/middle/end -> passed, decided, unjudged, error."
    )
    degradation_rate: float | None = Field(
        default=None, description="(short - long) / short accuracy; lower is better."
    )
    middle_drop: float | None = Field(
        default=None,
        description="beginning - middle accuracy over position_lengths (null without a verdict).",
    )
    lost_in_the_middle: bool | None = Field(
        default=None,
        description="Middle accuracy below both beginning and end; null when the case lacks a decided "
        "run at one of the three positions (see lost_in_the_middle_note).",
    )
    lost_in_the_middle_note: str = Field(
        default="", description="Why there is no lost-in-the-middle verdict, or what it compared."
    )
    position_lengths: list[str] = Field(
        default_factory=list,
        description="Context lengths whose beginning/middle/end runs the verdict compared (those with "
        "a decided run at all three positions).",
    )


class LongContext(Strict):
    """Gradient curves, degradation_rate and the per-case lost-in-the-middle table (seed 000).

    Accuracy is passed / decided (the seed's pass rate); lost in the middle is decided per case,
    from runs of the same case at beginning / middle / end, never by pooling different cases.
    """

    by_length: dict[str, float | None] = Field(
        default_factory=dict, description="Length -> accuracy (passed / decided, all cases)."
    )
    length_counts: dict[str, Accuracy] = Field(
        default_factory=dict, description="Length -> passed, decided, unjudged, error (all cases)."
    )
    degradation_rate: float | None = Field(
        default=None, description="(short - long) / short accuracy over all cases."
    )
    cases: list[CaseGradient] = Field(default_factory=list, description="Per case.")
    lost_in_the_middle_cases: list[str] = Field(
        default_factory=list, description="Cases whose middle accuracy is below beginning and end."
    )
    position_checked: list[str] = Field(
        default_factory=list,
        description="Cases with a decided run at each of beginning, middle and end (a verdict exists).",
    )
    position_incomplete: list[str] = Field(
        default_factory=list,
        description="Cases run at some position but lacking a decided run at one of the three: no verdict.",
    )


class TurnTokens(Strict):
    """Agent context size at one user turn, across conversations."""

    turn: int = Field(description="1-based user turn.")
    conversations: int = Field(description="Conversations that reached this turn.")
    mean_tokens: float = Field(description="Mean prompt tokens the agent saw.")
    max_tokens: int = Field(description="Largest context at this turn.")


class UsageTotal(Strict):
    """Model usage of one role summed over the run."""

    calls: int = Field(default=0, description="Model calls.")
    prompt_tokens: int = Field(default=0, description="Prompt tokens.")
    completion_tokens: int = Field(default=0, description="Completion tokens.")
    cached_calls: int = Field(default=0, description="Calls answered from the LLM cache.")
    cost_usd: float = Field(default=0.0, description="Estimated cost.")


class ReasonCount(Strict):
    """How often one judge gave one reason."""

    judge: str = Field(description="Judge name.")
    reason: str = Field(description="The verdict reason.")
    verdicts: int = Field(description="Verdicts with this judge and reason.")
    records: list[str] = Field(description="Record ids concerned.")


class RedLineHit(Strict):
    """A failed conversation of a case tagged red_line."""

    record_id: str = Field(description="Record id.")
    case_id: str = Field(description="Case id.")
    status: str = Field(description="Record status.")


class C1CaseScore(Strict):
    """Seed 004's 0-5 skill rubric totals of one C1 case over its scored runs."""

    case_id: str = Field(description="Case id.")
    totals: list[int] = Field(description="The 0-5 total of each scored run, in record order.")
    mean_total: float | None = Field(default=None, description="Mean of the totals.")
    distribution: dict[int, int] = Field(default_factory=dict, description="Total 0..5 -> runs.")


class C1Scores(Strict):
    """Seed 004's 0-5 C1 skill rubric (trigger, process, constraints, output contract, anti-pattern).

    Informational: the seed sets no pass line, so the score never decides a case; each case's own
    Pass/Fail criteria do. Shown as a score and its distribution.
    """

    scored: int = Field(default=0, description="Runs with a 0-5 total.")
    unscored: int = Field(
        default=0, description="C1 rubric verdicts without a total (judge error, no judge model)."
    )
    distribution: dict[int, int] = Field(
        default_factory=dict, description="Total 0..5 -> runs (every total listed, zeros included)."
    )
    mean_total: float | None = Field(default=None, description="Mean 0-5 total over scored runs.")
    dimensions: dict[str, float | None] = Field(
        default_factory=dict, description="Dimension -> mean score over runs that report it."
    )
    cases: list[C1CaseScore] = Field(default_factory=list, description="Per C1 case.")


class GradeLevelCount(Strict):
    """How many conversations reached one level of a grading scale."""

    level: str = Field(description="Level code, e.g. confirmed.")
    name: str = Field(description="The seed's name, e.g. 确认后纠正.")
    points: int = Field(description="The level's points (0..100).")
    count: int = Field(description="Conversations graded at this level.")


class GradeDistribution(Strict):
    """Seed 003 graded levels of one dimension and scale (reports.grades)."""

    dimension: str = Field(description="Case dimension.")
    scale: str = Field(description="conflict | implicit_conflict | reference | topic_switch.")
    conversations: int = Field(description="Conversations with a graded verdict on this scale.")
    uncertain: int = Field(
        description="Of those, graded 'uncertain' (unjudged; escalated with a judge model)."
    )
    escalated: dict[str, int] = Field(
        default_factory=dict, description="Uncertain ones the LLM judge decided: verdict -> conversations."
    )
    passed: int = Field(description="Conversations whose level reached the case's pass line.")
    mean_points: float | None = Field(description="Mean points of the decided levels.")
    levels: list[GradeLevelCount] = Field(description="Every level of the scale, in the seed's order.")
    cases: list[str] = Field(default_factory=list, description="Case ids graded on this scale.")


class ComplexityPoint(Strict):
    """Success at one task-step count."""

    steps: int = Field(description="Task steps (case `steps`).")
    cases: list[str] = Field(description="Case ids with this many steps.")
    conversations: int = Field(description="Conversations.")
    passed: int = Field(description="Passed conversations.")
    judged: int = Field(description="Conversations in the pass-rate denominator (the gate's rule).")
    success_rate: float | None = Field(description="passed / judged; null when none was judged.")
    mean_score: float | None = Field(description="Mean score.")


class ComplexityCurve(Strict):
    """Seed 001 复杂度衰减曲线: success rate against task steps, for one dimension."""

    dimension: str = Field(description="Case dimension, e.g. C2.")
    points: list[ComplexityPoint] = Field(description="One point per step count, ascending.")


class Summary(Strict):
    """summary.json."""

    schema_version: int = Field(default=SUMMARY_SCHEMA_VERSION, description="Summary format version.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Run meta (secrets redacted).")
    totals: Rate = Field(description="All conversations.")
    by_dimension: dict[str, Rate] = Field(default_factory=dict, description="Dimension -> rate.")
    by_dimension_difficulty: dict[str, dict[str, Rate]] = Field(
        default_factory=dict, description="Dimension -> difficulty -> rate."
    )
    by_category: dict[str, Rate] = Field(
        default_factory=dict, description="dimension-category (B1-CL) -> rate."
    )
    repeats: RepeatStats = Field(default_factory=RepeatStats, description="pass^k and flip rate.")
    skill_impact: SkillImpact = Field(
        default_factory=SkillImpact, description="Group A/B skill_impact_delta."
    )
    red_line_hits: list[RedLineHit] = Field(
        default_factory=list, description="Failed records of red_line cases."
    )
    long_context: LongContext = Field(default_factory=LongContext, description="Gradients and positions.")
    c1_rubric: C1Scores | None = Field(
        default=None, description="Seed 004's 0-5 C1 skill rubric totals and distribution; null if none."
    )
    decay: dict[str, Any] | None = Field(
        default=None, description="DIR/decay.json as written by the decay sweep."
    )
    token_growth: list[TurnTokens] = Field(default_factory=list, description="Context tokens per user turn.")
    stop_reasons: dict[str, int] = Field(default_factory=dict, description="Stop reason -> conversations.")
    usage: dict[str, UsageTotal] = Field(default_factory=dict, description="Role -> usage, plus 'total'.")
    unjudged: list[ReasonCount] = Field(
        default_factory=list, description="Unjudged verdicts by judge and reason."
    )
    errors: list[ReasonCount] = Field(default_factory=list, description="Error verdicts and harness errors.")
    blame: dict[str, int] = Field(
        default_factory=dict,
        description="Non-passing conversations by who they are charged to: agent, simulator, infrastructure, case, none.",
    )
    simulator_suspects: list[str] = Field(
        default_factory=list,
        description="Record ids flagged simulator_suspect (display only: the status decides every rate).",
    )
    inconclusive: list[str] = Field(
        default_factory=list, description="Every record id with status inconclusive (the full list)."
    )
    gate: dict[str, Gate] = Field(
        default_factory=dict,
        description="The gate's decision (usersim.core.gate): 'default' and 'strict' (unjudged turns it red); "
        "the CLI's exit code and RunResult.passed are the same decision.",
    )
    persona_traits: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Persona id -> traits measured on its simulated turns (fidelity.traits): verbosity and "
        "mean characters per turn, reveal policy and mean known facts per turn, trait check pass rate.",
    )
    grades: list[GradeDistribution] = Field(
        default_factory=list,
        description="Seed 003 graded levels per dimension and scale (conflict 100/80/40/0, implicit 100/0, "
        "reference and topic switch 100/80/60).",
    )
    complexity: list[ComplexityCurve] = Field(
        default_factory=list,
        description="Seed 001 complexity curve: success rate against the cases' task steps, per dimension.",
    )
    recheck: RecheckStats | None = Field(
        default=None,
        description="Seed 003's 20% rule-to-LLM re-check: the sample per dimension and the rule/LLM agreement "
        "(reports.recheck); null without a judge model.",
    )
    rule_readings: dict[str, CaseRuleReadings] = Field(
        default_factory=dict,
        description="Case id -> how many of its rule-check verdicts were uncertain readings (unjudged "
        "'uncertain: ...' or escalated to the LLM judge) and their share, per check type (reports.rule_readings).",
    )
    judging: JudgeStats | None = Field(
        default=None,
        description="LLM judge agreement per criterion, inconclusive verdicts, rule-vs-LLM re-check (reports.judging).",
    )
