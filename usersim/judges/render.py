"""Transcripts rendered for LLM judges and review exports: indexed lines, tool calls, truncation."""

from __future__ import annotations

import json

from usersim.core.messages import Message


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_transcript(transcript: list[Message], history_len: int = 0, *, limit: int = 1500) -> str:
    """One block per message: `[i] ROLE: text`; [i] is the index a judge cites as evidence_turn."""
    lines = []
    for i, m in enumerate(transcript):
        tag = " (replayed history)" if i < history_len else ""
        if m.role == "tool":
            err = " ERROR" if m.is_error else ""
            lines.append(f"[{i}] TOOL RESULT {m.name or ''}{err}{tag}: {_clip(m.content, limit // 2)}")
            continue
        if m.content.strip():
            lines.append(f"[{i}] {m.role.upper()}{tag}: {_clip(m.content, limit)}")
        for tc in m.tool_calls:
            args = json.dumps(tc.arguments, ensure_ascii=False)
            lines.append(f"[{i}] ASSISTANT CALLS {tc.name}({_clip(args, 400)}){tag}")
    return "\n".join(lines)
