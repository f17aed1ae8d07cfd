"""decay.json for one sweep: the curves of the five seed-003 dimensions, their breakpoints, token
cost and the SLA marks.

Every curve point is the mean score of the conversations at that turn count (repeats, and the four
conflict levels, averaged as the seed does). A breakpoint is the first turn count whose mean score
is below 0.5, named with the seed's term: memory half-life (半衰期, roughly exponential decay),
reference fail point (失效点, step-shaped at the window edge), stable-interval lower bound
(稳定区间下限) for topic switching, conflict handling and semantic drift (理解一致性保持).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import SlaThreshold

DECAY_TESTS = ("memory", "reference", "switch", "conflict", "drift")
HALF = 0.5  # the seed's "降到 50% 以下"
MEASURE = {
    "memory": "half_life",
    "reference": "fail_point",
    "switch": "stable_lower",
    "conflict": "stable_lower",
    "drift": "stable_lower",
}
# Seed 003's expected recall by conversation length (1-3: ≥90%, 4-6: ≥70%, 7-10: ≥50%, >10: ≥30%).
_EXPECTED_RECALL = [(3, 0.9), (6, 0.7), (10, 0.5)]


def expected_recall(n_turns: int) -> float:
    """Seed 003's 期望召回率 for a conversation of n turns."""
    return next((v for limit, v in _EXPECTED_RECALL if n_turns <= limit), 0.3)


class DecayPoint(BaseModel):
    """One turn count of one curve."""

    model_config = ConfigDict(extra="forbid")

    turns: int = Field(
        description="The seed's turn count n: probe, min(n - 1, 12) intervening turns, then the check."
    )
    score: float | None = Field(
        description="Mean score over repeats (and conflict levels); null if nothing scored."
    )
    runs: int = Field(description="Conversations that scored.")
    scores: list[float] = Field(default_factory=list, description="Each conversation's score.")
    mean_context_tokens: float | None = Field(
        default=None,
        description="Mean peak prompt tokens the harness sent the agent (the whole conversation).",
    )
    mean_agent_tokens: float | None = Field(
        default=None,
        description="Token cost: mean prompt tokens per conversation the agent reported using (its own "
        "context after its strategy: a window, a summary, extracted facts, retrieved memory).",
    )
    expected_min: float | None = Field(
        default=None, description="Seed 003's expected recall at this length (memory)."
    )
    meets_expectation: bool | None = Field(default=None, description="score >= expected_min (memory).")


class SlaMark(BaseModel):
    """One business SLA (seed 003: 客服 Agent ≥ 80% @ 10 轮) checked against a curve."""

    model_config = ConfigDict(extra="forbid")

    scenario: str | None = Field(default=None, description="Whose SLA, e.g. 客服 Agent.")
    min_score: float = Field(description="Lowest acceptable score.")
    at_turn: int = Field(description="Conversation length the SLA is stated for.")
    source: str | None = Field(default=None, description="File the SLA came from.")
    checked_turn: int | None = Field(
        default=None,
        description="The measured turn count it was checked at: at_turn itself, else the first measured "
        "length beyond it (a longer conversation is the stricter test); null if none reaches it.",
    )
    score: float | None = Field(default=None, description="The curve's score at checked_turn.")
    met: bool | None = Field(default=None, description="score >= min_score; null when not measured.")
    below_turns: list[int] = Field(
        default_factory=list,
        description="Every measured turn count up to checked_turn whose score is below min_score: where "
        "the curve falls below the SLA line.",
    )

    @property
    def label(self) -> str:
        who = f"{self.scenario} " if self.scenario else ""
        return f"{who}≥ {self.min_score:.0%} @ {self.at_turn} 轮"


class DecayCurve(BaseModel):
    """One test's score by turn count, with the system configuration it measures."""

    model_config = ConfigDict(extra="forbid")

    test: str = Field(description="memory / reference / switch / conflict / drift.")
    measure: Literal["half_life", "fail_point", "stable_lower"] = Field(
        description="The seed's term for this decay."
    )
    breakpoint: int | None = Field(description="First turn count whose score is below 0.5; null if none.")
    system: dict[str, Any] = Field(
        description="Agent configuration: window, profile injection, memory, temperature."
    )
    points: list[DecayPoint] = Field(description="Ascending turn counts.")
    sla: list[SlaMark] = Field(default_factory=list, description="The SLAs stated for this dimension.")


class DecaySummary(BaseModel):
    """decay.json: the curves and seed 003's summary numbers."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=2, description="decay.json format version (2: drift, token cost, SLA).")
    agent: str | None = Field(default=None, description="Agent SPEC.")
    system: dict[str, Any] = Field(default_factory=dict, description="Agent configuration under test.")
    curves: dict[str, DecayCurve] = Field(description="Per test.")
    memory_half_life: int | None = Field(default=None, description="信息记忆半衰期 (turns).")
    reference_fail_point: int | None = Field(default=None, description="指代消解失效点 (turns).")
    switch_stable_lower: int | None = Field(default=None, description="话题切换稳定区间下限 (turns).")
    conflict_stable_lower: int | None = Field(default=None, description="冲突处理稳定区间下限 (turns).")
    drift_stable_lower: int | None = Field(
        default=None, description="语义漂移（理解一致性保持）稳定区间下限 (turns)."
    )
    mean_agent_tokens: float | None = Field(
        default=None, description="Token cost: mean agent prompt tokens per conversation over the sweep."
    )
    sla_violations: list[str] = Field(
        default_factory=list,
        description="One line per SLA a curve misses, e.g. 'memory: 客服 Agent ≥ 80% @ 10 轮 …'.",
    )


def _get(rec: Any, key: str, default: Any = None) -> Any:
    return rec.get(key, default) if isinstance(rec, dict) else getattr(rec, key, default)


def _record_score(rec: Any) -> float | None:
    score = _get(rec, "score")
    if score is not None:
        return float(score)
    return {"passed": 1.0, "failed": 0.0}.get(_get(rec, "status"))


def _agent_tokens(rec: Any) -> int | None:
    usage = _get(rec, "usage") or {}
    agent = usage.get("agent") if isinstance(usage, dict) else None
    tokens = _get(agent, "prompt_tokens") if agent is not None else None
    return int(tokens) if tokens else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def check_sla(points: list[DecayPoint], sla: SlaThreshold, source: str | None = None) -> SlaMark:
    """Where a curve stands against one SLA. The SLA holds for conversations up to `at_turn`
    turns, so a point below the line at fewer turns misses it too, even when the sweep stops short
    of `at_turn`; met is null only when nothing below was seen and no point reaches `at_turn`."""
    scored = [p for p in points if p.score is not None]
    at = next((p for p in scored if p.turns >= sla.at_turn), None)
    mark = SlaMark(scenario=sla.scenario, min_score=sla.min_score, at_turn=sla.at_turn, source=source)
    if at is not None:
        mark.checked_turn, mark.score = at.turns, at.score
    limit = at.turns if at is not None else sla.at_turn
    mark.below_turns = [p.turns for p in scored if p.turns <= limit and (p.score or 0.0) < sla.min_score]
    if mark.below_turns:
        mark.met = False
    elif at is not None:
        mark.met = True
    return mark


def summarize_decay(
    records: list[Any],
    *,
    system: dict[str, Any] | None = None,
    agent: str | None = None,
    sla: list[tuple[SlaThreshold, str | None]] | None = None,
) -> DecaySummary:
    """Curves, breakpoints, token cost and SLA marks from run records (RunRecord or dicts with
    case_id, score, status, usage, context_tokens)."""
    from usersim.graphs.decay import parse_decay_id

    grouped: dict[str, dict[int, list[tuple[float, Any]]]] = {}
    for rec in records:
        parsed = parse_decay_id(_get(rec, "case_id", ""))
        score = _record_score(rec)
        if parsed is None or score is None:
            continue
        test, _, n = parsed
        grouped.setdefault(test, {}).setdefault(n, []).append((score, rec))
    if system is None:
        system = next((_get(r, "system_config") for r in records if _get(r, "system_config")), None) or {}
    curves: dict[str, DecayCurve] = {}
    all_tokens: list[float] = []
    for test in [t for t in DECAY_TESTS if t in grouped]:
        points = []
        for n in sorted(grouped[test]):
            vals = [s for s, _ in grouped[test][n]]
            peaks = [max(c) for _, r in grouped[test][n] if (c := _get(r, "context_tokens"))]
            own = [float(t) for _, r in grouped[test][n] if (t := _agent_tokens(r)) is not None]
            all_tokens += own
            mean = round(sum(vals) / len(vals), 4)
            exp = expected_recall(n) if test == "memory" else None
            points.append(
                DecayPoint(
                    turns=n,
                    score=mean,
                    runs=len(vals),
                    scores=vals,
                    mean_context_tokens=_mean(peaks),
                    mean_agent_tokens=_mean(own),
                    expected_min=exp,
                    meets_expectation=None if exp is None else mean >= exp,
                )
            )
        brk = next((p.turns for p in points if p.score is not None and p.score < HALF), None)
        marks = [check_sla(points, s, src) for s, src in sla or [] if s.dimension == test]
        curves[test] = DecayCurve(
            test=test,
            measure=MEASURE[test],  # type: ignore[arg-type]
            breakpoint=brk,
            system=system,
            points=points,
            sla=marks,
        )
    brk_of = {t: c.breakpoint for t, c in curves.items()}
    violations = [
        f"{t}: {m.label} — below the line at {', '.join(map(str, m.below_turns))} turns"
        + (f" ({m.score:.0%} at {m.checked_turn} turns)" if m.score is not None else "")
        for t, c in curves.items()
        for m in c.sla
        if m.met is False
    ]
    return DecaySummary(
        agent=agent,
        system=system,
        curves=curves,
        memory_half_life=brk_of.get("memory"),
        reference_fail_point=brk_of.get("reference"),
        switch_stable_lower=brk_of.get("switch"),
        conflict_stable_lower=brk_of.get("conflict"),
        drift_stable_lower=brk_of.get("drift"),
        mean_agent_tokens=_mean(all_tokens),
        sla_violations=violations,
    )
