"""summary.json `rule_readings`: per case, the share of its rule-check verdicts whose reading was
uncertain, from verdicts the real checks gave on real replies, rebuilt by `usersim report`."""

from __future__ import annotations

import asyncio
import json

from click.testing import CliRunner

from tests.judges.helpers import state as judge_state
from tests.judges.seed_wordings import Wording, case_by_id, transcript
from usersim.cli.report import report
from usersim.core.verdict import Verdict
from usersim.judges.checks import run_check

from .factory import record

# an open hypothetical about an excluded brand: the constraint check cannot tell whether it is put
# forward, so its reading is uncertain (never a guessed pass or fail)
PHONES_OPEN = "推荐荣耀X50（1399 元）。如果您能接受小米的话，Redmi Note 13 也值得看看。"
PHONES_PLAIN = "推荐：vivo Y200、荣耀X50、华为畅享70、iQOO Z9、一加Ace 3V。"
LAPTOP = "推荐华为MateBook 14 2024：5999 元，1.31kg，续航好。"


def verdicts(case_id: str, reply: str) -> list[Verdict]:
    case = case_by_id(case_id)
    w = Wording(case_id, "correct", "plain", reply, (), ())
    messages, history_len = transcript(case, w)
    st = judge_state(messages, history_len=history_len)

    async def every():
        return [await run_check(s, transcript=messages, case=case, state=st) for s in case.judging.checks]

    return asyncio.run(every())


def test_rule_readings_per_case_count_the_uncertain_ones_and_leave_llm_verdicts_out(tmp_path):
    open_ = verdicts("C2-SR-03", PHONES_OPEN)
    constraint = [v for v in open_ if v.judge == "constraint"]
    assert any(v.verdict == "unjudged" and v.reason.startswith("uncertain:") for v in constraint), [
        v.reason for v in constraint
    ]
    plain = verdicts("C2-SR-03", PHONES_PLAIN)
    laptop = verdicts("C5-LC-01", LAPTOP)
    assert all(v.verdict != "unjudged" for v in plain + laptop), [v.reason for v in plain + laptop]
    rubric = Verdict(judge="llm_rubric", verdict="unjudged", reason="no judge model configured")
    escalated = constraint[0].model_copy(
        update={"verdict": "pass", "details": {**(constraint[0].details or {}), "escalated": True}}
    )
    others = [v for v in open_ if v is not constraint[0]]
    records = [
        record("C2-SR-03", status="unjudged", repeat=0, verdicts=open_),
        record("C2-SR-03", status="passed", repeat=1, verdicts=plain),
        record("C2-SR-03", status="passed", repeat=2, verdicts=[escalated, *others]),
        record("C5-LC-01", status="unjudged", verdicts=[*laptop, rubric]),
    ]
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(report, [str(run)])
    assert result.exit_code == 0, result.output
    readings = json.loads((run / "summary.json").read_text(encoding="utf-8"))["rule_readings"]

    phones = readings["C2-SR-03"]
    checks = len(open_)  # the same checks on each of the three records
    uncertain = sum(v.verdict == "unjudged" for v in open_)
    assert phones["verdicts"] == 3 * checks
    # the open readings of the first record, the escalated one and the rest of the third's
    expected = uncertain + 1 + sum(v.verdict == "unjudged" for v in others)
    assert phones["inconclusive"] == expected and phones["escalated"] == 1
    assert phones["share"] == round(expected / (3 * checks), 4)
    assert phones["by_check"]["constraint"]["verdicts"] == 3 * len(constraint)
    assert phones["by_check"]["count"] == {"verdicts": 3, "inconclusive": 0}

    laptops = readings["C5-LC-01"]  # the rubric's unjudged verdict is not a rule reading
    assert laptops["verdicts"] == len(laptop) and laptops["inconclusive"] == 0 and laptops["share"] == 0
    assert "llm_rubric" not in laptops["by_check"]
