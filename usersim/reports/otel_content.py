"""What `--no-content` keeps out of a trace: every value the user, the agent or a tool said.

The message text, tool arguments and tool results are simply not exported; what is exported as
text of usersim's own (a criterion, an error's description) may still quote them — a check spec
naming the transaction id the agent passed, an exception message with the argument it failed on.
`ContentScrub` collects the conversation's values and replaces each occurrence in such text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from usersim.core.record import RunRecord

PLACEHOLDER = "[content]"
# shorter values (a count of 2, "no") are everywhere in ordinary words; scrubbing them would
# shred the text without protecting anything a reader could tie to a person
_MIN_LEN = 3


def _leaves(value: Any) -> list[str]:
    """Every scalar inside a JSON-like value, as text."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def _text_leaves(text: str) -> list[str]:
    """A tool result or argument string: its JSON leaves when it parses, and the text itself."""
    try:
        parsed = json.loads(text)
    except (TypeError, ValueError):
        return [text]
    return [text, *_leaves(parsed)]


class ContentScrub:
    """The conversation's content values; `__call__` replaces them in a text, longest first."""

    def __init__(self, record: RunRecord) -> None:
        values: set[str] = set()
        for m in record.transcript:
            if m.content:
                values.update(_text_leaves(m.content))
            for call in m.tool_calls or []:
                args = call.get("arguments")
                values.update(_text_leaves(args) if isinstance(args, str) else _leaves(args))
        for event in record.tool_trace:
            values.update(_leaves(event.arguments))
            values.update(_text_leaves(event.result))
        kept = sorted((v.strip() for v in values if len(v.strip()) >= _MIN_LEN), key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, kept))) if kept else None

    def __call__(self, text: str | None) -> str | None:
        if text is None or self._pattern is None:
            return text
        return self._pattern.sub(PLACEHOLDER, text)
