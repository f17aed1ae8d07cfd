import json

import pytest

from tests.judges.helpers import case
from usersim.core.registry import UnknownNameError
from usersim.judges.base import JudgeConfig
from usersim.judges.calibration import (
    agreement,
    cohen_kappa,
    compare_with_swap,
    judge_human,
    position_swap_consistency,
    rule_vs_llm,
    sample_ids,
)
from usersim.judges.select import select_judges


def table(pp, pf, fp, ff):
    """Two raters' labels from a 2x2 contingency table (rows rater A, columns rater B)."""
    a = ["p"] * (pp + pf) + ["f"] * (fp + ff)
    b = ["p"] * pp + ["f"] * pf + ["p"] * fp + ["f"] * ff
    return a, b


def test_cohen_kappa_known_tables():
    # Wikipedia's worked example: 20/5/10/15 -> po = 0.7, pe = 0.5, kappa = 0.4
    a, b = table(20, 5, 10, 15)
    assert agreement(a, b) == 0.7
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    a, b = table(45, 15, 25, 15)  # po 0.6, pe 0.54 -> 0.1304
    assert cohen_kappa(a, b) == pytest.approx(0.1304, abs=1e-4)
    assert cohen_kappa(["p", "f", "p"], ["p", "f", "p"]) == 1.0
    assert cohen_kappa(["p", "p"], ["p", "p"]) == 1.0
    assert cohen_kappa(["p", "f"], ["f", "p"]) == pytest.approx(-1.0)


def test_deterministic_twenty_percent_sample():
    ids = [f"case-{i}" for i in range(50)]
    s = sample_ids(ids)
    assert len(s) == 10 and s == sample_ids(ids) and s == sample_ids(list(reversed(ids)))[::-1]
    assert sample_ids(ids, salt="other") != s
    assert sample_ids(ids[:3]) and len(sample_ids(ids[:3])) == 1


def _rec(rid, rule, llm):
    return {
        "id": rid,
        "verdicts": [
            {"judge": "tool_called", "verdict": rule, "reason": "r"},
            {"judge": "llm_rubric", "verdict": llm, "reason": "l", "criterion": "c"},
        ],
    }


def test_rule_vs_llm_flags_deviation_over_ten_percent():
    agree = [_rec(f"r{i}", "pass", "pass") for i in range(9)] + [_rec("r9", "fail", "fail")]
    rep = rule_vs_llm(agree)
    assert (rep.items, rep.agreement, rep.kappa, rep.flagged) == (10, 1.0, 1.0, False)
    mixed = agree[:8] + [_rec("x1", "pass", "fail"), _rec("x2", "fail", "pass")]
    rep = rule_vs_llm(mixed)
    assert rep.agreement == 0.8 and rep.flagged and rep.disagreements == ["x1", "x2"]
    assert "seed 003" in rep.note
    unjudged = [{"id": "u", "verdicts": [{"judge": "llm_rubric", "verdict": "unjudged", "reason": "x"}]}]
    assert rule_vs_llm(unjudged).items == 0


def test_judge_human_agreement_target():
    recs = [_rec(f"r{i}", "pass", "pass") for i in range(10)]
    labels = [
        {"record_id": f"r{i}", "criterion": "c", "label": "pass" if i < 8 else "fail"} for i in range(10)
    ]
    rep = judge_human(recs, labels)
    assert rep.agreement == 0.8 and rep.flagged and rep.target == 0.85


def test_position_swap_consistency():
    assert position_swap_consistency([("A", "B"), ("B", "A"), ("tie", "tie"), ("A", "A")]) == 0.75


async def test_compare_with_swap_detects_position_bias():
    replies = iter([json.dumps({"winner": "A"}), json.dumps({"winner": "A"})])  # always the first position

    async def biased(messages):
        return next(replies)

    out = await compare_with_swap(
        biased, judge_model="openai:j", criterion="更准确", question="q", x="x", y="y"
    )
    assert out == {"winner": "inconsistent", "consistent": False, "answers": ["A", "A"]}
    replies = iter([json.dumps({"winner": "A"}), json.dumps({"winner": "B"})])
    out = await compare_with_swap(
        biased, judge_model="openai:j", criterion="更准确", question="q", x="x", y="y"
    )
    assert out["winner"] == "x" and out["consistent"]


def names(c, **cfg):
    return [j.name for j in select_judges(c, JudgeConfig(**cfg))]


def test_select_judges_per_design():
    assert names(case()) == ["rules"]
    assert names(case(methods=("llm_judge",))) == ["rules", "llm_rubric"]
    ms = [{"id": "a", "check": {"turns": {"max": 3}}}]
    assert names(case(milestones=ms, methods=("auto", "human"), human_review=["x"])) == [
        "rules",
        "milestones",
        "human",
    ]
    organic = names(case(mode="organic", methods=("llm_judge",)))
    assert organic[:3] == ["rules", "llm_rubric", "task_completion"]
    assert names(case(), extra_judges=["drift"]) == ["rules", "drift"]
    with pytest.raises(UnknownNameError, match="Unknown judge 'drfit'. Did you mean 'drift'?"):
        names(case(), extra_judges=["drfit"])


async def test_fidelity_wrapper_is_informational():
    from tests.judges.helpers import bot, state, user

    c = case(mode="organic")
    judges = {j.name: j for j in select_judges(c, JudgeConfig())}
    t = [user("我想暑假去日本玩"), bot("请问几天？")]
    out = await judges["fidelity"](transcript=t, case=c, state=state(t))
    assert out and all(v.counts_toward_status is False for v in out)
