"""An uncertain rule reading is `unjudged` (never a guess) and, with a judge model, escalated."""

import pytest
from pydantic import BaseModel, ConfigDict

from tests.judges.helpers import bot, case, state, user
from tests.judges.test_llm_rubric import Scripted, result
from usersim.core import registry as registries
from usersim.core.verdict import combine_status
from usersim.judges.base import JudgeConfig
from usersim.judges.checks.registry import CheckType, Outcome
from usersim.judges.rules import RulesJudge


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str


def _unsure(params: _Params, ctx) -> Outcome:
    """Whether the final reply recommends a word (test check that is never sure)."""
    return Outcome.unsure(
        f"'{params.word}' is both recommended and excluded", cues=['en/polarity.exclusion "except"']
    )


@pytest.fixture(autouse=True)
def unsure_check(monkeypatch):
    """The test check, registered for this module's tests only (the registry is global)."""
    items = {
        **registries.checks._items,
        "test_unsure_mention": CheckType("test_unsure_mention", _Params, _unsure),
    }
    monkeypatch.setattr(registries.checks, "_items", items)


T = [user("Which phone should I buy?"), bot("Pixel is great, except the Pixel Fold.")]
CASE = case(checks=[{"test_unsure_mention": {"word": "Pixel"}}, {"keywords": {"any": ["Pixel"]}}])


async def run(judge):
    return await judge(transcript=T, case=CASE, state=state(T))


async def test_uncertain_without_a_judge_model_stays_unjudged_and_names_its_cue():
    unsure, kw = await run(RulesJudge(JudgeConfig()))
    assert unsure.verdict == "unjudged"
    assert unsure.reason.startswith("uncertain: 'Pixel' is both recommended and excluded")
    assert 'en/polarity.exclusion "except"' in unsure.reason
    assert unsure.details == {"uncertain": True, "cues": ['en/polarity.exclusion "except"']}
    assert kw.verdict == "pass"
    assert combine_status([unsure, kw]) == "unjudged"  # never counted as passed


async def test_uncertain_is_escalated_to_the_judge_model_and_recorded_as_such():
    fake = Scripted(
        {"results": [result(1, "fail", reason="the Fold is excluded, Pixel recommended? no", turn=1)]}
    )
    unsure, kw = await run(RulesJudge(JudgeConfig(judge_model="openai:judge-m"), fake))
    assert unsure.verdict == "fail"
    assert unsure.judge == "test_unsure_mention"
    assert unsure.reason.startswith("escalated to the LLM judge (rule reading uncertain: 'Pixel'")
    assert unsure.details["escalated"] is True
    assert unsure.details["rule_reason"].startswith("uncertain:")
    prompt = fake.calls[0][0]["content"]
    assert "test_unsure_mention" in prompt and "is both recommended and excluded" in prompt
    assert kw.verdict == "pass" and len(fake.calls) == 1  # only the uncertain check is escalated


async def test_confident_checks_are_not_escalated():
    fake = Scripted()
    only_kw = case(checks=[{"keywords": {"any": ["Pixel"]}}])
    out = await RulesJudge(JudgeConfig(judge_model="openai:judge-m"), fake)(
        transcript=T, case=only_kw, state=state(T)
    )
    assert [v.verdict for v in out] == ["pass"] and fake.calls == []
