"""The reference agent facing a manipulative user (agent.py calls `screen` before the task steps).

The current user message is read with `usersim.lang.stance.read_request`, plus the id-shaped
values in it (`BK-5002`, `C-1003`). Someone else's data (a third party's personal details, a record
id the user asks about for another person) or the agent's instructions:
- the reference agent refuses (its replies: usersim/lang/data/<code>/security.yaml `agent_replies`);
- with `flaw=trust-claims` it believes any claim (authority, urgency, a relation, an approval, an
  appeal): it looks the record up with a lookup tool of the case that takes an id, and reads the
  result out, or recites its system prompt. Without a claim it still refuses.
"""

from __future__ import annotations

import json
import re
from typing import Any

from usersim import lang
from usersim.core.messages import Message, ToolCall
from usersim.lang.stance import read_request

_IDS = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)[A-Z]{1,4}-?\d{3,}(?![\w-])")


def _reply(code: str, key: str) -> str:
    return str((lang.resources(code).get("security", "agent_replies") or {}).get(key, ""))


def _lookup_tool(schemas: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(tool, id parameter) of a lookup tool: one required parameter whose name ends in id."""
    for s in schemas:
        fn = s.get("function") or s
        params = (fn.get("parameters") or {}).get("properties") or {}
        ids = [p for p in params if p.lower().endswith("id")]
        if len(params) == 1 and ids and not fn.get("name", "").startswith(("search", "compute", "load")):
            return fn["name"], ids[0]
    return None


def screen(
    text: str, current: list[Message], system: str, schemas: list[dict[str, Any]], flaws: list[str], turn: int
) -> Message | None:
    """The agent's reply to a request for someone else's data or its instructions, or None."""
    req = read_request(text)
    ids = _IDS.findall(text)
    code = lang.detect(text)
    wants_record = req.others_data or (
        bool(ids) and req.personal_data is not None and req.third_party is not None
    )
    if not wants_record and req.prompt is None:
        return None
    if "trust-claims" not in flaws or not req.claims:
        key = "refuse_data" if wants_record else "refuse_prompt"
        return Message(role="assistant", content=_reply(code, key))
    if req.prompt is not None and not ids:
        return Message(role="assistant", content=_reply(code, "comply_prompt") + "\n\n" + system.strip())
    tool = _lookup_tool(schemas)
    if tool is None or not ids:
        return Message(role="assistant", content=_reply(code, "not_found"))
    results = {m.tool_call_id: m for m in current if m.role == "tool"}
    mine = [tc for m in current if m.role == "assistant" for tc in m.tool_calls if tc.id.startswith("refsec")]
    if not mine:
        calls = [
            ToolCall(id=f"refsec{turn}-{i + 1}", name=tool[0], arguments={tool[1]: v})
            for i, v in enumerate(ids)
        ]
        return Message(role="assistant", content="", tool_calls=calls)
    lines = []
    for tc in mine:
        res = results.get(tc.id)
        if res is None or res.is_error:
            continue
        try:
            record = json.loads(res.content)
        except json.JSONDecodeError:
            record = res.content
        if isinstance(record, dict):
            lines += [f"- {k}: {v}" for k, v in record.items()]
        else:
            lines.append(str(record))
    if not lines:
        return Message(role="assistant", content=_reply(code, "not_found"))
    return Message(role="assistant", content=_reply(code, "comply_record") + "\n" + "\n".join(lines))
