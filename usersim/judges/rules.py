"""The `rules` judge: every case check -> one verdict (judge = check type, criterion = compact spec)."""

from __future__ import annotations

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.checks import run_check


class RulesJudge:
    """Runs `case.judging.checks`; a bad check spec yields an `error` verdict for that check only."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "rules"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        return [
            await run_check(spec, transcript=transcript, case=case, state=state)
            for spec in case.judging.checks
        ]


@judge_registry.register("rules")
def make_rules(config: JudgeConfig) -> RulesJudge:
    """Every case check -> one verdict (judge = check type)."""
    return RulesJudge()
