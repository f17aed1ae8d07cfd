"""Static cases drafted from a recorded conversation.

One case per chosen user turn (`at: last | each`): the recorded conversation before that turn is
the case's history (its environment writes are applied first, usersim.cases.history), the turn's
user message is the live message, and the recorded tool calls and results are the fixtures: every
tool the recording called (that the environment does not provide) becomes a mock tool answering
the recorded arguments with the recorded result, so a replay answers the same. The checks are
drafted from what the agent did in that turn (each tool called with its arguments; with an
environment, the state it left), tagged `draft` and with a review note, for a human to keep the
ones that say what the agent SHOULD do. The recorded turn (its user message and the agent's
messages after it) is the case's `reference_transcript`: the divergence judge compares the
replayed turn with it.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim import lang
from usersim.cases.environment import Environment, EnvState, Tables, table_key
from usersim.cases.history import recorded_calls
from usersim.cases.importers.conversation import Conversation
from usersim.cases.importers.env_source import EnvSource
from usersim.core.messages import Message
from usersim.core.secrets import redact_value
from usersim.lang.pii import Redactor


class DraftOptions(BaseModel):
    """How to draft cases from conversations."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    out_dir: Path = Field(description="Folder the cases are written to (relative paths are for it).")
    at: Literal["last", "each"] = Field(default="last", description="Draft the last user turn, or each.")
    dimension: str = Field(default="IMPORT", description="The cases' dimension.")
    environment: Path | None = Field(
        default=None, description="A case or suite file whose environment, policy and context the cases use."
    )
    redactor: Redactor | None = Field(
        default=None,
        description="With --redact-pii: the redactor the conversations went through; drafted data "
        "from elsewhere (the environment's rows) gets the same placeholders.",
    )


def texts(language: str) -> dict[str, str]:
    """The drafted files' texts in `language` (usersim/lang/data/<code>/drafts.yaml)."""
    res = lang.resources(language if language in lang.language_codes() else "en")
    return {k: v for k, v in res.topic("drafts").items() if isinstance(v, str)}


def small_talk(language: str) -> list[str]:
    """The greetings and pleasantries a user opens with in `language` (drafts.yaml `small_talk`)."""
    res = lang.resources(language if language in lang.language_codes() else "en")
    return [str(p) for p in res.topic("drafts").get("small_talk") or []]


def language_of(conv: Conversation) -> str:
    """The conversation's language, from the user's messages (the agent's when the user wrote none)."""
    users = " ".join(m.content for m in conv.messages if m.role == "user")
    return lang.detect(users or " ".join(m.content for m in conv.messages))


def slug(text: str) -> str:
    """An id-safe form of `text` (letters, digits, . _ -)."""
    out = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-.")
    return (out or "conv")[:48]


def snippet(text: str, n: int = 48) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _result_value(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def _schema_of(value: Any) -> dict[str, Any]:
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return {"type": kind.get(type(value), "string")}


def mock_tools(conv: Conversation, skip: set[str]) -> list[dict[str, Any]]:
    """A mock tool per tool the recording called (outside `skip`): the recorded schema when the
    source kept one, else one read from the arguments seen; one answer per distinct arguments."""
    results = {m.tool_call_id: m for m in conv.messages if m.role == "tool"}
    recorded = {
        t.get("function", t).get("name"): t.get("function", t) for t in conv.tools if isinstance(t, dict)
    }
    tools: dict[str, dict[str, Any]] = {}
    for m in conv.messages:
        for tc in m.tool_calls:
            if tc.name in skip:
                continue
            spec = recorded.get(tc.name) or {}
            tool = tools.setdefault(
                tc.name,
                {
                    "name": tc.name,
                    "description": spec.get("description") or f"{tc.name} (recorded tool)",
                    "parameters": copy.deepcopy(spec.get("parameters"))
                    or {"type": "object", "properties": {}},
                    "responses": [],
                },
            )
            props = tool["parameters"].setdefault("properties", {})
            for k, v in tc.arguments.items():
                props.setdefault(k, _schema_of(v))
            answer = results.get(tc.id)
            if answer is None or any(r["when"] == tc.arguments for r in tool["responses"]):
                continue
            tool["responses"].append(
                {
                    "when": dict(tc.arguments),
                    "content": _result_value(answer.content),
                    "is_error": answer.is_error,
                }
            )
    return [t for t in tools.values() if t["responses"]]


def _turn_span(conv: Conversation, user_index: int) -> tuple[int, int]:
    """(index of the turn's user message, index after the agent's last message of that turn)."""
    starts = conv.user_turns()
    k = starts.index(user_index)
    return user_index, starts[k + 1] if k + 1 < len(starts) else len(conv.messages)


def tool_checks(turn: list[Message]) -> list[dict[str, Any]]:
    """`tool_called` with the recorded arguments, one per distinct call the agent made in the turn."""
    out: list[dict[str, Any]] = []
    for m in turn:
        for tc in m.tool_calls:
            check = {"tool_called": {"tool": tc.name, "args": dict(tc.arguments)}}
            if check not in out:
                out.append(check)
    return out


def _diff(env: Environment, before: Tables, after: Tables) -> dict[str, Any]:
    expect: dict[str, list[dict[str, Any]]] = {}
    absent: dict[str, list[str]] = {}
    for table in sorted(set(before) | set(after)):
        key = table_key(before if table in before else after, env.keys, table)
        old = {str(r.get(key)): r for r in before.get(table, [])}
        new = {str(r.get(key)): r for r in after.get(table, [])}
        for k, rec in new.items():
            if k not in old:
                expect.setdefault(table, []).append(dict(rec))
            elif rec != old[k]:
                changed = {f: v for f, v in rec.items() if old[k].get(f) != v}
                expect.setdefault(table, []).append({key: rec.get(key), **changed})
        gone = [k for k in old if k not in new]
        if gone:
            absent[table] = gone
    out: dict[str, Any] = {}
    if expect:
        out["expect"] = expect
    if absent:
        out["absent"] = absent
    return out


def final_state_check(env: Environment, recorded: list[Message]) -> dict[str, Any]:
    """`final_state` expecting the records the recording's environment calls left changed (strict:
    nothing else may change)."""
    st = EnvState(env, prelude=False)
    before = st.snapshot()
    for _, _, name, args, failed in recorded_calls(recorded):
        if name in st.tools and not failed:
            st.call(name, args)
    return {"final_state": _diff(env, before, st.tables)}


def draft_cases(
    conv: Conversation,
    opts: DraftOptions,
    source: EnvSource | None = None,
) -> list[dict[str, Any]]:
    """The case data (one mapping per chosen user turn) drafted from `conv` (redacted already when
    personal data is to be left out: usersim.cases.importers.redact)."""
    language = language_of(conv)
    t = texts(language)
    users = conv.user_turns()
    if not users:
        return []
    chosen = users if opts.at == "each" else users[-1:]
    env_tools = source.tool_names() if source else set()
    system = next((m.content for m in conv.messages if m.role == "system"), "")
    mocks = mock_tools(conv, env_tools)
    cases = []
    for user_index in chosen:
        start, end = _turn_span(conv, user_index)
        turn_no = users.index(user_index) + 1
        history = [m for m in conv.messages[:start] if m.role != "system"]
        checks = tool_checks(conv.messages[start + 1 : end])
        if source is not None and source.env is not None:
            checks.append(final_state_check(source.env, conv.messages[:end]))
        notes = [t["review"]]
        if system:
            notes.append(t["system_prompt_dropped"].format(chars=len(system)))
        data: dict[str, Any] = {
            "id": f"{slug(conv.id)}-t{turn_no}",
            "dimension": opts.dimension,
            "title": t["import_title"].format(
                source=conv.id, turn=turn_no, opening=snippet(conv.messages[user_index].content)
            ),
            "mode": "static",
            "source": conv.source,
            "tags": ["imported", "draft"],
            "language": language if language in ("zh", "en") else None,
            "input": {
                "history": [_message_data(m) for m in history],
                "message": conv.messages[user_index].content,
            },
        }
        if conv.metadata.get("date"):
            data["context"] = {"current_date": conv.metadata["date"]}
        if source is not None:  # the conversation's own language wins over the source's
            data.update(
                {
                    k: v
                    for k, v in copy.deepcopy(source.data).items()
                    if k != "language" or not data["language"]
                }
            )
        else:
            data["tools"] = []  # the recorded tools only, not usersim's travel tools
        if mocks:
            data["mock_tools"] = copy.deepcopy(mocks)
        data["judging"] = {
            "scoring": {"methods": ["auto"]},
            "checks": checks,
        }
        data["notes"] = " ".join(notes)
        # the recorded turn itself: the divergence judge numbers the live turns from the message on
        data["reference_transcript"] = [_message_data(m) for m in conv.messages[start:end]]
        cases.append(clean(data, opts))
    return cases


def draft_organic(
    conv: Conversation,
    opts: DraftOptions,
    persona_ref: str,
    source: EnvSource | None = None,
    opening: str | None = None,
) -> dict[str, Any]:
    """An organic case that lets the drafted persona (`persona_ref`, a path relative to out_dir)
    talk to the agent from `opening` (the persona's; else the recording's first user message),
    judged by what the whole recording did."""
    language = language_of(conv)
    t = texts(language)
    users = conv.user_turns()
    if opening is None:
        opening = conv.messages[users[0]].content if users else ""
    checks = tool_checks(conv.messages)
    if source is not None and source.env is not None:
        checks.append(final_state_check(source.env, conv.messages))
    data: dict[str, Any] = {
        "id": f"{slug(conv.id)}-sim",
        "dimension": opts.dimension,
        "title": t["organic_title"].format(source=conv.id, opening=snippet(opening)),
        "mode": "organic",
        "source": conv.source,
        "tags": ["imported", "draft"],
        "language": language if language in ("zh", "en") else None,
        "persona": persona_ref,
        "max_turns": max(len(users) + 2, 4),
        "input": {"message": opening},
    }
    if conv.metadata.get("date"):
        data["context"] = {"current_date": conv.metadata["date"]}
    if source is not None:
        data.update(
            {k: v for k, v in copy.deepcopy(source.data).items() if k != "language" or not data["language"]}
        )
    else:
        data["tools"] = []
    mocks = mock_tools(conv, source.tool_names() if source else set())
    if mocks:
        data["mock_tools"] = mocks
    data["judging"] = {"scoring": {"methods": ["auto"]}, "checks": checks}
    data["notes"] = t["review"]
    data["reference_transcript"] = [_message_data(m) for m in conv.messages if m.role != "system"]
    return clean(data, opts)


def _message_data(m: Message) -> dict[str, Any]:
    """A message as written in a case file: OpenAI chat format, as users export it."""
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [tc.to_openai() for tc in m.tool_calls]
    if m.role == "tool":
        out["tool_call_id"] = m.tool_call_id
        if m.is_error:
            out["is_error"] = True
    return out


def clean(data: dict[str, Any], opts: DraftOptions) -> dict[str, Any]:
    """Secrets redacted (always), empty values dropped; with a redactor, anything personal the
    drafting brought in from outside the conversation (the environment's rows) replaced by the
    same placeholders the conversation got."""
    # `tools: []` stays: it keeps usersim's travel tools away from an agent that had only the recorded ones
    out = redact_value(
        {k: v for k, v in data.items() if v not in (None, [], {}) or (k == "tools" and v == [])}
    )
    return opts.redactor.redact_value(out) if opts.redactor is not None else out
