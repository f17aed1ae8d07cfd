import csv
import json

import pytest

from tests.judges.helpers import bot, case, state, user
from usersim.core.verdict import Verdict
from usersim.judges.completion import TaskCompletionJudge
from usersim.judges.human import (
    QUEUED,
    HumanJudge,
    apply_labels,
    read_labels,
    read_records,
    review_items,
    write_items,
)
from usersim.personas.schema import Persona

PERSONA = Persona.model_validate(
    {
        "id": "japan-first-trip",
        "name": "小林",
        "identity": "第一次去日本",
        "goal": {
            "description": "规划包含机票、行程、酒店的完整方案",
            "required": ["flights", "itinerary", "hotel"],
            "deliverable_keywords": {
                "flights": ["航班", "机票"],
                "itinerary": ["Day 1", "第一天"],
                "hotel": ["酒店", "住宿"],
            },
        },
    }
)
T = [user("我想暑假去日本玩"), bot("推荐这班航班：MU523"), user("行程呢"), bot("Day 1 浅草寺")]


async def completion(t, stop="goal_met", persona=PERSONA):
    c = case(mode="organic")
    return (await TaskCompletionJudge()(transcript=t, case=c, state=state(t, stop=stop, persona=persona)))[0]


async def test_task_completion_names_delivered_and_missing():
    v = await completion(T)
    assert v.verdict == "fail" and v.score == pytest.approx(0.6667)
    assert v.reason == (
        "stopped: goal_met; delivered 2/3: flights ('航班' in msg 1), itinerary ('Day 1' in msg 3); "
        "missing: hotel (none of 酒店, 住宿); no deciding case checks"
    )
    full = T + [user("住哪"), bot("推荐新宿的酒店")]
    v = await completion(full)
    assert v.verdict == "pass" and v.score == 1.0
    # the stop is evidence, not the verdict: a user that never stopped does not undo a delivered goal
    # (this asserted a fail before issue #22)
    v = await completion(full, stop="max_turns")
    assert v.verdict == "pass" and v.reason.startswith("stopped: max_turns; delivered 3/3")
    assert "the user never said the goal was met, but every item in force is evidenced" in v.reason


async def test_task_completion_accepts_persona_dict_and_no_persona():
    assert (await completion(T, persona=PERSONA.model_dump())).reason.startswith(
        "stopped: goal_met; delivered 2/3"
    )
    v = await completion(T, persona=None)
    assert v.verdict == "pass" and "no required deliverables" in v.reason
    assert (await completion(T, stop="max_turns", persona=None)).verdict == "fail"  # no evidence at all


async def test_human_judge_queues_criteria():
    c = case(methods=("auto", "human"), human_review=["判断是否有多余反问"])
    out = await HumanJudge()(transcript=T, case=c, state=state(T))
    assert [(v.judge, v.verdict, v.reason, v.criterion) for v in out] == [
        ("human", "unjudged", QUEUED, "判断是否有多余反问")
    ]
    assert await HumanJudge()(transcript=T, case=case(), state=state(T)) == []


def _record(rid, verdicts):
    vs = [Verdict(**v).model_dump() for v in verdicts]
    return {
        "id": rid,
        "case_id": rid.split("|")[0],
        "status": "unjudged",
        "score": None,
        "verdicts": vs,
        "transcript": [{"role": "user", "content": "帮我查酒店"}, {"role": "assistant", "content": "查到了"}],
    }


def test_review_export_and_label_import_roundtrip(tmp_path):
    records = [
        _record(
            "B1-EI-03|r0",
            [
                {"judge": "tool_called", "verdict": "pass", "reason": "ok", "criterion": "tool_called {}"},
                {
                    "judge": "human",
                    "verdict": "unjudged",
                    "reason": QUEUED,
                    "criterion": "判断是否有多余反问",
                },
            ],
        ),
        *[
            _record(
                f"C1-ST-0{i}|r0",
                [{"judge": "llm_rubric", "verdict": "pass", "reason": "fine", "criterion": "c"}],
            )
            for i in range(1, 6)
        ],
    ]
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    loaded = read_records(run)
    items = review_items(loaded)
    assert [i.source for i in items] == ["queued", "calibration_sample"]  # 20% of 5 LLM-judged records = 1
    assert items[0].criterion == "判断是否有多余反问" and items[0].final_reply == "查到了"
    assert review_items(loaded) == items  # deterministic
    path = write_items(items, tmp_path / "review.csv")
    # fill the labels the way a reviewer would
    with path.open(encoding="utf-8-sig") as f:
        data = list(csv.DictReader(f))
    data[0]["label"], data[1]["label"] = "pass", "fail"
    with path.open("w", encoding="utf-8-sig", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(data[0]))
        w.writeheader()
        w.writerows(data)
    labels = read_labels(path)
    counts = apply_labels(loaded, labels)
    assert counts == {"applied": 1, "calibration": 1}
    b1 = loaded[0]
    assert b1["verdicts"][1]["verdict"] == "pass" and b1["verdicts"][1]["reason"] == "human label: pass"
    assert b1["status"] == "passed" and b1["score"] == 1.0
    sampled = next(r for r in loaded if r["id"] == data[1]["record_id"])
    assert (
        sampled["verdicts"][0]["verdict"] == "pass"
    )  # the LLM verdict stays; the label is recorded beside it
    assert sampled["verdicts"][0]["details"] == {"human_label": "fail"}


def test_label_errors_name_file_line_and_suggest(tmp_path):
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"record_id": "a", "criterion": "c", "label": "maybe"}\n', encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"labels.jsonl:1: .*label 'maybe' is not pass / fail / inconclusive"
    ):
        read_labels(bad)
    records = [
        _record(
            "B1-EI-03|r0",
            [{"judge": "human", "verdict": "unjudged", "reason": QUEUED, "criterion": "多余反问"}],
        )
    ]
    good = tmp_path / "ok.jsonl"
    good.write_text(
        '{"record_id": "B1-EI-03|r1", "criterion": "多余反问", "label": "pass"}\n', encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"unknown record 'B1-EI-03\|r1'. Did you mean 'B1-EI-03\|r0'\?"):
        apply_labels(records, read_labels(good))
