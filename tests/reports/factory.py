"""Crafted RunRecords for the report tests."""

from __future__ import annotations

from typing import Any

from usersim.core.events import SkillEvent, ToolEvent, Usage
from usersim.core.record import RunRecord, TranscriptMessage, Variant
from usersim.core.verdict import Verdict


def record(
    case_id: str = "B1-EI-01",
    *,
    status: str = "passed",
    score: float | None = None,
    dimension: str | None = None,
    category: str | None = None,
    difficulty: str | None = "easy",
    group: str | None = None,
    length: str | None = None,
    position: str | None = None,
    repeat: int = 0,
    tags: list[str] | None = None,
    triggered: bool = False,
    verdicts: list[Verdict] | None = None,
    **extra: Any,
) -> RunRecord:
    """A minimal valid record; dimension/category default from the case id (B1-EI-01 -> B1, EI)."""
    parts = case_id.split("-")
    variant = Variant(group=group, length=length, position=position, repeat=repeat)
    if verdicts is None:
        verdicts = [
            Verdict(judge="tool_called", verdict="pass" if status == "passed" else "fail", reason="checked")
        ]
    fields: dict[str, Any] = {
        "id": f"{case_id}|{variant.key()}",
        "run_id": "run-test",
        "case_id": case_id,
        "dimension": dimension or parts[0],
        "category": category or (parts[1] if len(parts) > 2 else None),
        "difficulty": difficulty,
        "mode": "static",
        "scoring": "auto",
        "tags": tags or [],
        "variant": variant,
        "seed": 1,
        "status": status,
        "score": score,
        "turns": 1,
        "verdicts": verdicts,
        "skill_events": [SkillEvent(turn=1, skill="s", kind="triggered")] if triggered else [],
        "agent": "reference",
        "started_at": "2026-04-07T00:00:00Z",
        "duration_s": 0.1,
    }
    fields.update(extra)
    return RunRecord(**fields)


def transcript_record() -> RunRecord:
    """A record with user/assistant/tool messages, an intercepted error result and hostile text."""
    transcript = [
        TranscriptMessage(
            role="user", content="帮我搜一下 6 月中旬从上海飞大阪的机票 <script>alert(1)</script>", turn=1
        ),
        TranscriptMessage(
            role="assistant",
            content="",
            tool_calls=[
                {"id": "c1", "name": "search_flights", "arguments": {"origin": "上海", "destination": "大阪"}}
            ],
            turn=1,
        ),
        TranscriptMessage(
            role="tool",
            content='{"error": "timeout"}',
            tool_call_id="c1",
            name="search_flights",
            is_error=True,
            turn=1,
        ),
        TranscriptMessage(role="assistant", content='抱歉，查询超时 & 请稍后 "重试"', turn=1),
    ]
    trace = [
        ToolEvent(
            turn=1,
            message_index=2,
            call_number=1,
            name="search_flights",
            arguments={"origin": "上海", "destination": "大阪"},
            result='{"error": "timeout"}',
            is_error=True,
            intercepted=True,
        )
    ]
    verdicts = [
        Verdict(
            judge="tool_called",
            verdict="pass",
            reason="search_flights called with origin=上海",
            evidence_turn=1,
        ),
        Verdict(judge="llm_rubric", verdict="unjudged", reason="no judge model configured"),
    ]
    return record(
        "B1-EI-01",
        status="unjudged",
        verdicts=verdicts,
        transcript=transcript,
        tool_trace=trace,
        stop_reason="replay_complete",
        context_tokens=[120],
        usage={"agent": Usage(calls=2, prompt_tokens=300)},
    )
