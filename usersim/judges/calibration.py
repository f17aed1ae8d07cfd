"""Judge calibration (seeds 003/004): rule-vs-LLM agreement with Cohen's kappa (flag when the
deviation exceeds 10%), a deterministic 20% sample for human review, judge–human agreement
(target >= 85%), and position-swap consistency for pairwise comparisons."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from usersim.core.verdict import Verdict, combine_status
from usersim.judges.llm import Complete, JudgeModelError, ask_structured, prompt

MAX_RULE_LLM_DEVIATION = 0.10  # seed 003: 偏差超过 10% 需要检查规则是否过于粗放
HUMAN_AGREEMENT_TARGET = 0.85  # seed 004: judge 与人工评分的一致率目标 ≥ 85%
REVIEW_SAMPLE_RATE = 0.20  # seeds 003/004: 抽样 20% 复核


def _rank(salt: str, key: str) -> str:
    return hashlib.sha256(f"{salt}|{key}".encode()).hexdigest()


def sample_k(ids: Sequence[str], k: int, *, salt: str = "review") -> list[str]:
    """A deterministic sample of k ids: the lowest sha256(salt|id), in input order."""
    chosen = set(sorted(ids, key=lambda i: _rank(salt, i))[: max(0, k)])
    return [i for i in ids if i in chosen]


def sample_size(n: int, rate: float = REVIEW_SAMPLE_RATE) -> int:
    """ceil(rate * n), at most n (0 for an empty set or a zero rate)."""
    return 0 if n <= 0 or rate <= 0 else min(n, math.ceil(rate * n - 1e-9))


def sample_ids(ids: Sequence[str], *, rate: float = REVIEW_SAMPLE_RATE, salt: str = "review") -> list[str]:
    """A deterministic sample of ceil(rate * n) ids: the lowest sha256(salt|id), in input order."""
    return sample_k(ids, sample_size(len(ids), rate), salt=salt)


def stratified_sample(
    groups: Mapping[str, Sequence[str]], *, rate: float = REVIEW_SAMPLE_RATE, salt: str = "review"
) -> dict[str, list[str]]:
    """ceil(rate * N) ids of all N, apportioned over the groups (dimensions) by largest remainder:
    each group gets floor(rate * n) or ceil(rate * n) of its n ids, the extra ones going to the
    groups with the largest remainders (ties by sha256(salt|group)). So the whole sample is exactly
    ceil(20%) and every group's share is within one id of 20% of it; each group's ids are then
    sampled with `sample_k`."""
    sizes = {g: len(ids) for g, ids in groups.items()}
    total = sample_size(sum(sizes.values()), rate)
    quota = {g: math.floor(rate * n + 1e-9) for g, n in sizes.items()}
    spare = total - sum(quota.values())
    order = sorted(
        (g for g in groups if quota[g] < sizes[g]),
        key=lambda g: (-(rate * sizes[g] - quota[g]), _rank(salt, g)),
    )
    for g in order[: max(0, spare)]:
        quota[g] += 1
    return {g: sample_k(list(ids), quota[g], salt=salt) for g, ids in groups.items()}


def agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Share of positions where the two raters agree."""
    if len(a) != len(b):
        raise ValueError(f"rater lists differ in length: {len(a)} vs {len(b)}")
    if not a:
        return float("nan")
    return sum(x == y for x, y in zip(a, b)) / len(a)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa = (po - pe) / (1 - pe); 1.0 when both raters are constant and agree."""
    po = agreement(a, b)
    n = len(a)
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / (n * n)
    if pe == 1:
        return 1.0 if po == 1 else 0.0
    return (po - pe) / (1 - pe)


class AgreementReport(BaseModel):
    """Agreement between two raters on the same items."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="What was compared, e.g. rules vs llm_rubric.")
    items: int = Field(description="Items both raters decided.")
    agreement: float | None = Field(description="Share of items with the same decision.")
    kappa: float | None = Field(description="Cohen's kappa.")
    target: float = Field(description="Agreement the seeds ask for.")
    flagged: bool = Field(description="Agreement below target (or deviation above the allowed maximum).")
    disagreements: list[str] = Field(default_factory=list, description="Item ids where the raters differ.")
    note: str = Field(default="", description="What the flag means / what to do.")


def _report(
    name: str, ids: list[str], a: list[str], b: list[str], target: float, note: str
) -> AgreementReport:
    if not ids:
        return AgreementReport(
            name=name,
            items=0,
            agreement=None,
            kappa=None,
            target=target,
            flagged=False,
            note="no items decided by both raters",
        )
    agr = agreement(a, b)
    return AgreementReport(
        name=name,
        items=len(ids),
        agreement=round(agr, 4),
        kappa=round(cohen_kappa(a, b), 4),
        target=target,
        flagged=agr < target,
        disagreements=[i for i, x, y in zip(ids, a, b) if x != y],
        note=note if agr < target else "",
    )


def rule_decision(verdicts: list[Verdict]) -> str | None:
    """The rule checks' combined decision on a record ("pass" / "fail"), None when undecided."""
    from usersim.judges.checks import check_registry

    names = set(check_registry.names())
    return _decision([v for v in verdicts if v.judge in names and v.counts_toward_status])


def _decision(verdicts: list[Verdict]) -> str | None:
    status = combine_status(verdicts) if verdicts else None
    return {"passed": "pass", "failed": "fail"}.get(status or "")


def is_recheck(v: Verdict) -> bool:
    """An informational LLM verdict of seed 003's rule-to-LLM re-check."""
    return v.judge == "llm_rubric" and bool((v.details or {}).get("recheck"))


def _llm_decision(verdicts: list[Verdict]) -> str | None:
    """The LLM rubric's decision: its deciding verdicts, or the re-check's informational ones."""
    llm = [
        v.model_copy(update={"counts_toward_status": True})
        for v in verdicts
        if v.judge == "llm_rubric" and (v.counts_toward_status or is_recheck(v))
    ]
    return _decision(llm)


def rule_vs_llm(records: list[dict[str, Any]], *, recheck_only: bool = False) -> AgreementReport:
    """Per record: the rule checks' combined decision vs the LLM rubric's, where both decided.
    `recheck_only`: only the records of seed 003's 20% rule-to-LLM re-check sample."""
    from usersim.judges.checks import check_registry

    rule_checks = set(check_registry.names())
    ids, rule, llm = [], [], []
    for r in records:
        vs = [Verdict.model_validate(v) for v in r.get("verdicts", [])]
        if recheck_only and not any(is_recheck(v) for v in vs):
            continue
        d_rule = _decision([v for v in vs if v.judge in rule_checks])
        d_llm = _llm_decision(vs)
        if d_rule and d_llm:
            ids.append(r["id"])
            rule.append(d_rule)
            llm.append(d_llm)
    return _report(
        "rules vs LLM re-check (seed 003: 20% of rule-passed auto-only conversations)"
        if recheck_only
        else "rules vs llm_rubric",
        ids,
        rule,
        llm,
        1 - MAX_RULE_LLM_DEVIATION,
        "rule/LLM deviation above 10% (seed 003): check whether the rules are too coarse",
    )


def judge_human(records: list[dict[str, Any]], labels: list[Any]) -> AgreementReport:
    """LLM-judge verdicts vs human labels (Label objects or dicts) on the same criteria."""
    index = {
        (r["id"], v.get("criterion") or v.get("judge")): v.get("verdict")
        for r in records
        for v in r.get("verdicts", [])
        if v.get("judge") == "llm_rubric"
    }
    ids, judge, human = [], [], []
    for lab in labels:
        lab = lab if isinstance(lab, dict) else lab.model_dump()
        got = index.get((lab["record_id"], lab["criterion"]))
        if got in ("pass", "fail", "inconclusive"):
            ids.append(f"{lab['record_id']}::{lab['criterion'][:40]}")
            judge.append(got)
            human.append(lab["label"])
    return _report(
        "llm_rubric vs human",
        ids,
        judge,
        human,
        HUMAN_AGREEMENT_TARGET,
        "judge-human agreement below 85% (seed 004): check the judge prompt's reading of the skill / criteria",
    )


Winner = Literal["A", "B", "tie"]
_SWAP = {"A": "B", "B": "A", "tie": "tie"}


def position_swap_consistency(pairs: list[tuple[Winner, Winner]]) -> float:
    """Share of pairwise comparisons whose winner survives swapping the two positions: the first
    element judged (x, y), the second judged (y, x); consistent when second == swap(first)."""
    if not pairs:
        return float("nan")
    return sum(_SWAP[first] == second for first, second in pairs) / len(pairs)


class PairwiseOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(
        default="",
        validation_alias=AliasChoices("reasoning", "reason"),
        description="Why (before the winner).",
    )
    winner: Winner = Field(description="A, B or tie.")


async def compare_with_swap(
    complete: Complete, *, judge_model: str, criterion: str, question: str, x: str, y: str
) -> dict[str, Any]:
    """Ask the judge twice (x as A, then y as A). Returns the winner in x/y terms, or
    'inconsistent' when the preference flips with position (a position bias)."""
    answers: list[Winner] = []
    for a, b in ((x, y), (y, x)):
        msg = prompt("pairwise", criterion=criterion, question=question, a=a, b=b)
        try:
            out = await ask_structured(
                complete, [{"role": "user", "content": msg}], PairwiseOutput, judge_model=judge_model
            )
        except JudgeModelError as exc:
            return {"winner": "error", "consistent": False, "reason": str(exc)}
        answers.append(out.winner)
    first, second = answers
    consistent = _SWAP[first] == second
    winner = {"A": "x", "B": "y", "tie": "tie"}[first] if consistent else "inconsistent"
    return {"winner": winner, "consistent": consistent, "answers": answers}


class SwapPair(BaseModel):
    """Two replies to the same request, compared in both orders."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="case id and the two record ids.")
    criterion: str = Field(description="What 'better' means: the case's criteria.")
    question: str = Field(description="The user request both replies answer.")
    x: str = Field(description="The first reply.")
    y: str = Field(description="The second reply.")


class SwapReport(BaseModel):
    """Position-swap consistency of a pairwise judge: the share of pairs whose winner survives
    swapping the two positions. No pass line is set; inconsistent pairs show a position bias."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="pairwise position swap", description="What was checked.")
    judge_model: str = Field(description="The judge model SPEC.")
    pairs: int = Field(description="Pairs compared in both orders (errors excluded).")
    consistency: float | None = Field(description="Share of pairs with the same winner in both orders.")
    inconsistent: list[str] = Field(
        default_factory=list, description="Pairs whose winner followed the position."
    )
    first_position_wins: int = Field(default=0, description="Answers (of 2 per pair) naming position A.")
    errors: list[str] = Field(default_factory=list, description="Pairs the judge gave no usable answer on.")


def _final_reply(record: dict[str, Any]) -> tuple[str, str]:
    """(last user message, last assistant reply) of a stored record."""
    msgs = record.get("transcript") or []
    reply_at = max(
        (i for i, m in enumerate(msgs) if m.get("role") == "assistant" and m.get("content")), default=-1
    )
    if reply_at < 0:
        return "", ""
    question = next((m["content"] for m in reversed(msgs[:reply_at]) if m.get("role") == "user"), "")
    return question, msgs[reply_at]["content"]


def swap_pairs(
    records: list[dict[str, Any]],
    against: list[dict[str, Any]] | None = None,
    *,
    criteria: dict[str, str] | None = None,
    max_pairs: int = 20,
) -> list[SwapPair]:
    """Pairs of final replies to the same case: RECORDS vs AGAINST (first record of each case in
    both), else within RECORDS (the first two records of a case whose replies differ)."""
    criteria = criteria or {}
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_case.setdefault(r.get("case_id", ""), []).append(r)
    other: dict[str, list[dict[str, Any]]] = {}
    for r in against or []:
        other.setdefault(r.get("case_id", ""), []).append(r)
    pairs: list[SwapPair] = []
    for case_id, rs in by_case.items():
        if len(pairs) >= max_pairs:
            break
        candidates = [rs[0], other[case_id][0]] if against is not None and case_id in other else rs
        chosen: list[tuple[dict[str, Any], str, str]] = []
        for r in candidates:
            q, reply = _final_reply(r)
            if reply and all(reply != c[2] for c in chosen):
                chosen.append((r, q, reply))
            if len(chosen) == 2:
                break
        if len(chosen) < 2 or (against is not None and case_id not in other):
            continue
        (ra, q, a), (rb, _, b) = chosen
        pairs.append(
            SwapPair(
                id=f"{case_id}: {ra.get('id')} vs {rb.get('id')}",
                criterion=criteria.get(case_id) or "Which reply better serves the user's request?",
                question=q,
                x=a,
                y=b,
            )
        )
    return pairs


async def swap_check(pairs: list[SwapPair], complete: Complete, *, judge_model: str) -> SwapReport:
    """Every pair judged in both orders; position consistency over the pairs the judge answered."""
    results = [
        await compare_with_swap(
            complete, judge_model=judge_model, criterion=p.criterion, question=p.question, x=p.x, y=p.y
        )
        for p in pairs
    ]
    answered = [(p, r) for p, r in zip(pairs, results, strict=True) if r["winner"] != "error"]
    return SwapReport(
        judge_model=judge_model,
        pairs=len(answered),
        consistency=round(position_swap_consistency([tuple(r["answers"]) for _, r in answered]), 4)
        if answered
        else None,
        inconsistent=[p.id for p, r in answered if not r["consistent"]],
        first_position_wins=sum(a == "A" for _, r in answered for a in r["answers"]),
        errors=[
            f"{p.id}: {r['reason']}" for p, r in zip(pairs, results, strict=True) if r["winner"] == "error"
        ],
    )
