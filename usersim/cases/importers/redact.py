"""Personal data out of recorded conversations before anything is drafted from them
(`usersim import --redact-pii`).

Every text of every conversation (message contents, tool arguments, tool results, ids, metadata)
goes through one `lang.pii.Redactor`: first learnt (a name is learnt where the speaker gives it),
then replaced, so one value has one placeholder across the conversations and in everything drafted
from them: a drafted check and the history still agree, and no title, id, persona fact or mock
result can keep a fragment of the original.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usersim.cases.importers.conversation import Conversation
from usersim.core.messages import Message
from usersim.lang.pii import Redactor


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def _texts(conv: Conversation) -> list[tuple[Any, bool]]:
    """(value, whether its keys name fields) for every text of a conversation."""
    out: list[tuple[Any, bool]] = [(conv.id, False), (conv.metadata, True)]
    for m in conv.messages:
        value = _json_or_text(m.content) if m.role == "tool" else m.content
        out.append((value, m.role == "tool"))
        out += [(tc.arguments, True) for tc in m.tool_calls]
    return out


def _redact_message(m: Message, r: Redactor) -> Message:
    content = m.content
    if m.role == "tool":
        value = _json_or_text(content)
        if isinstance(value, str):
            content = r.redact(value)
        else:
            content = json.dumps(r.redact_value(value, fields=True), ensure_ascii=False)
    else:
        content = r.redact(content)
    calls = [
        tc.model_copy(update={"arguments": r.redact_value(tc.arguments, fields=True)}) for tc in m.tool_calls
    ]
    return m.model_copy(update={"content": content, "tool_calls": calls})


def redact_conversations(convs: list[Conversation], redactor: Redactor) -> list[Conversation]:
    """`convs` with every personal value replaced by its placeholder (the same value, the same
    placeholder in all of them)."""
    for conv in convs:
        for value, fields in _texts(conv):
            redactor.learn_value(value, fields=fields)
    return [
        conv.model_copy(
            update={
                "id": redactor.redact(conv.id),
                "source": redactor.redact(conv.source),
                "metadata": redactor.redact_value(conv.metadata, fields=True),
                "messages": [_redact_message(m, redactor) for m in conv.messages],
            }
        )
        for conv in convs
    ]


def named_source(conv: Conversation, path: Path) -> Conversation:
    """`conv` with its source naming the input file by its name only: no drafted file carries
    the absolute (or any) path it was read from."""
    source = conv.source
    for prefix in (str(path), str(path.resolve()), path.as_posix()):
        if source.startswith(prefix):
            source = path.name + source[len(prefix) :]
            break
    else:
        source = source.replace(str(path.resolve()), path.name).replace(str(path), path.name)
    return conv.model_copy(update={"source": source})
