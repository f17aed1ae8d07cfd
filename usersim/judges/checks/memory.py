"""memory_recall: seed 003's Memory Recall Score (exact hit 1/n, fuzzy hit 0.5/n)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.judges.checks.vacuity import Problems, never_fails

if TYPE_CHECKING:
    from usersim.cases.schema import Case


def fuzzy_match(expected: str, output: str) -> bool:
    """Seed 003's _fuzzy_match: prefix/suffix/containment — any substring of `expected` of length
    len-1 down to 2 found in the output ("测试工程师" matches "做测试的")."""
    if len(expected) <= 2:
        return expected in output
    if output.find(expected) >= 0:
        return True
    for substr_len in range(max(2, len(expected) - 1), 1, -1):
        for start in range(len(expected) - substr_len + 1):
            if expected[start : start + substr_len] in output:
                return True
    return False


def compute_memory_recall_score(output: str, key_info: dict[str, str]) -> float:
    """Seed 003's compute_memory_recall_score, exactly: each of n facts scores 1/n on an exact
    hit, 0.5/n on a fuzzy hit; rounded to 2 decimals."""
    score = 0.0
    total = len(key_info)
    for expected in key_info.values():
        if expected in output:
            score += 1.0 / total
        elif fuzzy_match(expected, output):
            score += 0.5 / total
    return round(score, 2)


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too

    expected: str = Field(min_length=1, description="The fact as the user stated it, e.g. 测试工程师.")
    fuzzy: list[str] = Field(
        default_factory=list, description="Other wordings that count as a fuzzy (half) hit, e.g. 做测试."
    )


class MemoryRecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too

    facts: list[Fact] = Field(min_length=1, description="Key facts to recall.")
    threshold: float = Field(default=0.5, ge=0, le=1, description="Pass when the score reaches this.")
    scope: Literal["final", "assistant", "first"] = Field(default="final", description="Replies to read.")

    def case_problems(self, case: Case) -> Problems:
        """A threshold of 0 (every score reaches it) and a blank fact or fuzzy wording (found in
        every reply: credit for nothing)."""
        out: Problems = []
        if self.threshold == 0:
            why = "every recall score reaches a threshold of 0"
            out.append(
                (
                    ("threshold",),
                    never_fails("memory_recall", why, "Give the share of facts needed, e.g. 0.5"),
                )
            )
        for i, fact in enumerate(self.facts):
            if not fact.expected.strip():
                out.append((("facts", i, "expected"), "a blank fact is in every reply; write the fact"))
            for j, alt in enumerate(fact.fuzzy):
                if not alt.strip():
                    out.append(
                        (("facts", i, "fuzzy", j), "a blank fuzzy wording is in every reply; remove it")
                    )
        return out


@check_registry.register("memory_recall", MemoryRecallParams)
def memory_recall(params: MemoryRecallParams, ctx: CheckContext) -> Outcome:
    """Memory Recall Score (seed 003) of the scoped replies against the key facts."""
    texts = ctx.texts(params.scope)
    output = "\n".join(t for _, t in texts)
    n = len(params.facts)
    parts, score = [], 0.0
    for fact in params.facts:
        if fact.expected in output:
            score += 1.0 / n
            parts.append(f"{fact.expected}: exact")
        elif fuzzy_match(fact.expected, output):
            score += 0.5 / n
            parts.append(f"{fact.expected}: fuzzy")
        elif (syn := next((f for f in fact.fuzzy if f in output), None)) is not None:
            score += 0.5 / n
            parts.append(f"{fact.expected}: fuzzy via '{syn}'")
        else:
            parts.append(f"{fact.expected}: missing")
    score = round(score, 2)
    verdict = score >= params.threshold
    cmp = ">=" if verdict else "<"
    evidence = texts[-1][0] if texts else None
    return Outcome(
        verdict,
        f"memory recall score {score:.2f} {cmp} threshold {params.threshold} ({'; '.join(parts)})",
        score=score,
        evidence_turn=evidence,
    )
