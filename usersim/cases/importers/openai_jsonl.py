"""OpenAI chat-format JSONL: one conversation per line, `{"messages": [...], "tools": [...]}` (the
fine-tuning / logging export shape), or a bare list of messages per line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from usersim.cases.history import normalize_history
from usersim.cases.importers.conversation import Conversation, ImportFormatError, day_of, pair_tool_results
from usersim.core.messages import Message

# Where a log line keeps when the conversation happened (the case's current_date).
_TIME_KEYS = ("date", "created_at", "timestamp", "created", "start_time")


def openai_messages(raw: Any, where: str) -> list[Message]:
    """OpenAI chat-format message dicts as Messages; ImportFormatError naming `where` and the message."""
    try:
        normal = normalize_history(raw)
        if not isinstance(normal, list):
            raise ValueError(f"`messages` must be a list, got {type(raw).__name__}")
        msgs = [Message.model_validate(m) for m in normal]
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ImportFormatError(f"{where}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    except ValueError as exc:
        raise ImportFormatError(f"{where}: {exc}") from None
    return pair_tool_results(msgs)


def read_openai_jsonl(path: Path) -> list[Conversation]:
    """Every conversation of a JSONL file (blank lines skipped)."""
    out: list[Conversation] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{where}: not JSON ({exc.msg} at char {exc.pos})") from None
        if isinstance(row, list):
            row = {"messages": row}
        if not isinstance(row, dict) or "messages" not in row:
            raise ImportFormatError(f"{where}: a line must be an object with `messages` (OpenAI chat format)")
        raw_meta = row.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        cid = row.get("id") or meta.get("conversation_id") or f"{path.stem}-{n}"
        when = next((row.get(k) or meta.get(k) for k in _TIME_KEYS if row.get(k) or meta.get(k)), None)
        if day_of(when):
            meta = {**meta, "date": day_of(when)}
        out.append(
            Conversation(
                id=str(cid),
                source=where,
                messages=openai_messages(row["messages"], where),
                tools=[t for t in row.get("tools") or [] if isinstance(t, dict)],
                metadata=meta,
            )
        )
    return out
