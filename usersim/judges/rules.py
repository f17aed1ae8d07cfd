"""The `rules` judge: every case check -> one verdict (judge = check type, criterion = compact spec).

A check whose reading was uncertain (the language layer's cues conflict, or none is confident)
says `unjudged` "uncertain: ...". With a judge model configured, those checks are escalated: the
LLM judge decides the check's intent on the transcript, and the verdict records that it was
escalated (details.escalated, the rule's own reason kept in details.rule_reason). Without a judge
model an uncertain check stays unjudged — never a guessed pass or fail.
"""

from __future__ import annotations

from usersim.cases.schema import Case, Criterion
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.checks import run_check
from usersim.judges.checks.registry import check_registry

ESCALATION = (
    "A rule check on this conversation could not be decided from the wording alone. "
    "The check: `{criterion}` ({doc}). The rule reading was uncertain: {why}. "
    "Decide from the conversation whether the assistant's behaviour satisfies what this check requires."
)


class RulesJudge:
    """Runs `case.judging.checks`; a bad check spec yields an `error` verdict for that check only.
    `complete` (tests) answers the escalation judge instead of the configured model."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "rules"

    def __init__(self, config: JudgeConfig | None = None, complete=None) -> None:
        self.config = config or JudgeConfig()
        self._complete = complete
        self.usage = None  # the escalation judge's tokens, when it ran

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        verdicts = [
            await run_check(spec, transcript=transcript, case=case, state=state)
            for spec in case.judging.checks
        ]
        unsure = [i for i, v in enumerate(verdicts) if (v.details or {}).get("uncertain")]
        if unsure and self.config.judge_model:
            decided = await self._escalate([verdicts[i] for i in unsure], transcript, case, state)
            for i, v in zip(unsure, decided):
                verdicts[i] = v
        return verdicts

    async def _escalate(
        self, verdicts: list[Verdict], transcript: list[Message], case: Case, state: JudgeState
    ) -> list[Verdict]:
        from usersim.judges.llm_rubric import LLMRubricJudge

        judge = LLMRubricJudge(self.config.judge_model, self._complete, samples=self.config.judge_samples)
        criteria = [
            Criterion(
                text=ESCALATION.format(
                    criterion=v.criterion or v.judge,
                    doc=_doc(v.judge),
                    why=v.reason.removeprefix("uncertain:").strip(),
                )
            )
            for v in verdicts
        ]
        answers = await judge.judge_criteria(criteria, transcript=transcript, case=case, state=state)
        self.usage = judge.usage
        out = []
        for rule, llm in zip(verdicts, answers):
            details = {**(llm.details or {}), "escalated": True, "rule_reason": rule.reason}
            if rule.details:  # what the rule read (e.g. a graded check's scale), kept beside the LLM's
                details["rule_details"] = rule.details
            out.append(
                rule.model_copy(
                    update={
                        "verdict": llm.verdict,
                        "reason": f"escalated to the LLM judge (rule reading {rule.reason}): {llm.reason}",
                        "evidence_turn": llm.evidence_turn,
                        "details": details,
                    }
                )
            )
        return out


def _doc(check_type: str) -> str:
    try:
        return check_registry.get(check_type).doc or check_type
    except ValueError:
        return check_type


@judge_registry.register("rules")
def make_rules(config: JudgeConfig) -> RulesJudge:
    """Every case check -> one verdict (judge = check type); uncertain ones escalated to the LLM judge."""
    return RulesJudge(config)
