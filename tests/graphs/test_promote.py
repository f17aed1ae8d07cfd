"""How a failure is promoted: which turn failed, and what a strict case asks of the one reply there."""

from __future__ import annotations

from tests.reports.factory import record
from usersim.cases.loader import find_case
from usersim.core.messages import Message, ToolCall
from usersim.core.record import TranscriptMessage
from usersim.core.verdict import Verdict
from usersim.graphs.promote import failing_turn, promoted_case, strict_judging
from usersim.personas.loader import resolve_persona

LISTING = "笔记本电脑推荐（8000 元以内）：1. 联想小新Pro 14 2024 ¥5,499 型号 …，京东自营有货"
ASK = "为了给您推荐合适的商品，还需要确认：商品：您指的是哪件商品？"


def _transcript(replies: list[str]) -> list[TranscriptMessage]:
    out = []
    for t, reply in enumerate(replies, start=1):
        out.append(TranscriptMessage(role="user", content=f"user line {t}", turn=t))
        out.append(TranscriptMessage(role="assistant", content=reply, turn=t))
    return out


def _forgetting_record():
    """Delivered at turn 2 (and repeated), then the persona's turn-5 budget change reopens the request
    and the agent never serves it again: the failure starts at turn 5."""
    replies = ["请问预算和用途？", LISTING, LISTING, LISTING, ASK, ASK, ASK]
    return record(
        "C2-E2E-04",
        status="failed",
        mode="organic",
        turns=len(replies),
        transcript=_transcript(replies),
        stop_reason="gave_up",
        verdicts=[Verdict(judge="task_completion", verdict="fail", reason="gave up", evidence_turn=3)],
    )


def test_the_failing_turn_is_where_the_reopened_request_was_never_served_again():
    case = find_case("C2-E2E-04")
    rec = _forgetting_record()
    # task_completion's evidence points at a delivery (msg 3, turn 2), not at the failure: ignored
    assert failing_turn(rec, resolve_persona(case), 15) == 5
    assert failing_turn(rec, None, 15) == rec.turns  # without a persona: the last turn


def test_a_check_citing_an_earlier_turn_moves_the_failing_turn_there():
    rec = _forgetting_record()
    rec.verdicts.append(Verdict(judge="tool_called", verdict="fail", reason="wrong origin", evidence_turn=1))
    assert failing_turn(rec, resolve_persona(find_case("C2-E2E-04")), 15) == 1


def test_strict_judging_keeps_reply_checks_not_met_before_and_asks_for_what_was_pending():
    case = find_case("C2-E2E-04")
    history = [
        Message(role="user", content="想买个笔记本"),
        Message(role="assistant", content="", tool_calls=[ToolCall(id="1", name="taobao_search_products")]),
        Message(role="tool", content="{}", name="taobao_search_products", tool_call_id="1"),
        Message(role="assistant", content=LISTING),
    ]
    j = strict_judging(case, history, ["model", "channel"], resolve_persona(case))
    kinds = [next(iter(c)) for c in j.checks]
    # conversation-shaped checks go; the search and the channel were already done before the turn
    assert "stop_reason" not in kinds and "turns" not in kinds and "asked_clarification" not in kinds
    assert "tool_called" not in kinds
    assert {"constraint"} <= set(kinds)
    pending = [c["keywords"]["any"] for c in j.checks if "keywords" in c]
    assert any("型号" in words for words in pending) and any("京东" in words for words in pending)
    assert j.milestones == [] and j.rubric == [] and j.scoring.methods == ["auto"]


def test_prefix_and_strict_forms_of_one_record():
    case = find_case("C2-E2E-04")
    rec = _forgetting_record()
    meta = {"run_id": "run-1"}
    prefix = promoted_case(rec, case, meta)
    assert prefix.mode == "organic" and prefix.input.message == "user line 1"
    assert prefix.input.script == [f"user line {t}" for t in range(2, 6)]  # turns 1..5 replayed
    assert prefix.promoted_from.failing_turn == 5 and prefix.promoted_from.seed == rec.seed
    assert prefix.judging == case.judging  # the case's own checks, the failed ones among them
    strict = promoted_case(rec, case, meta, form="strict")
    assert strict.mode == "static" and strict.input.message == "user line 5"
    assert len(strict.input.history) == 8 and strict.id.endswith("-T5")
    assert [m.content for m in strict.reference_transcript] == ["user line 5", ASK]


def test_an_organic_replayed_prefix_needs_its_opening_message():
    import pytest
    from pydantic import ValidationError

    from usersim.cases.schema import Case

    data = find_case("C2-E2E-04").model_dump(mode="json")
    data["input"] = {"script": ["第二句"]}
    with pytest.raises(ValidationError, match="replay `input.script` after `input.message`"):
        Case.model_validate(data)
