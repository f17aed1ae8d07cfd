"""What one A2A exchange said, read from the SDK's events (`usersim.adapters.a2a_agent`).

A turn's events — agent messages, task snapshots, status and artifact updates — become assistant
messages of the transcript: each agent message once (by message id), its reported tool calls
(data parts `{"tool_call": {name, arguments, result, is_error}}`) as an assistant tool call plus
its tool result, its text (other data parts as JSON); then each artifact once per task (by
artifact id; `append` updates extend it). Imported only when the A2A SDK is installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers.proto_helpers import get_data_parts
from a2a.types import Role, TaskState

from usersim.adapters.base import AgentError
from usersim.core.messages import Message, ToolCall


@dataclass(frozen=True)
class Thread:
    """The A2A side of one conversation: its context, the task waiting for input, artifacts seen."""

    context_id: str
    task_id: str | None = None
    artifacts_seen: frozenset[str] = frozenset()


@dataclass
class Turn:
    """What one turn of the agent produced: its messages in order, then its artifacts."""

    sent_id: str  # the message id of the user's message this turn answers
    thread: Thread | None
    where: str  # "A2A agent URL", for errors
    messages: list[Message] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # agent message ids recorded
    artifacts: dict[str, Message] = field(default_factory=dict)
    task_id: str | None = None
    context_id: str | None = None
    state: str | None = None  # TaskState name, e.g. TASK_STATE_INPUT_REQUIRED
    status_text: str = ""

    def replies(self) -> list[Message]:
        return self.messages + list(self.artifacts.values())

    def _ids(self, task_id: str, context_id: str) -> None:
        self.task_id, self.context_id = task_id or self.task_id, context_id or self.context_id

    def read_event(self, event: Any) -> None:
        """One StreamResponse (the blocking call's answer arrives as one, too)."""
        if event.HasField("message"):
            self.record(event.message)
            self.context_id = event.message.context_id or self.context_id
        elif event.HasField("task"):
            self.read_task(event.task)
        elif event.HasField("status_update"):
            self._ids(event.status_update.task_id, event.status_update.context_id)
            self.status(event.status_update.status)
        elif event.HasField("artifact_update"):
            update = event.artifact_update
            self._ids(update.task_id, update.context_id)
            self.artifact(update.artifact, append=update.append)
        else:
            raise AgentError(f"{self.where} sent an event with no task, message or update")

    def read_task(self, task: Any) -> None:
        """A task snapshot: the agent messages after ours in its history, its status, its artifacts."""
        self._ids(task.id, task.context_id)
        history = list(task.history)
        ours = next((i for i, m in enumerate(history) if m.message_id == self.sent_id), None)
        if ours is not None:  # earlier turns of the task were recorded when they happened
            for m in history[ours + 1 :]:
                if m.role == Role.ROLE_AGENT:
                    self.record(m)
        self.status(task.status)
        for artifact in task.artifacts:
            self.artifact(artifact, append=False)

    def status(self, status: Any) -> None:
        self.state = str(TaskState.Name(status.state))
        if status.HasField("message"):
            self.status_text = self.record(status.message) or self.status_text

    def artifact(self, artifact: Any, *, append: bool) -> None:
        aid = artifact.artifact_id
        if self.thread is not None and aid in self.thread.artifacts_seen:
            return  # recorded in an earlier turn of this task
        text = parts_text(artifact.parts)
        known = self.artifacts.get(aid)
        if known is not None:
            known.content = known.content + text if append else (text or known.content)
        elif text:
            self.artifacts[aid] = Message(role="assistant", content=text)

    def record(self, message: Any) -> str:
        """Record an agent message once (by id): its reported tool calls, then its text."""
        text = parts_text(message.parts)
        if message.message_id and message.message_id in self.seen:
            return text
        self.seen.add(message.message_id)
        for i, data in enumerate(get_data_parts(message.parts)):
            call = data.get("tool_call") if isinstance(data, dict) else None
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                self.messages += reported_call(call, f"a2a-{message.message_id or len(self.messages)}-{i}")
        if text:
            self.messages.append(Message(role="assistant", content=text))
        return text


def reported_call(call: dict[str, Any], call_id: str) -> list[Message]:
    """A tool call the agent reported, as an assistant tool call and its tool result."""
    arguments = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    result = call.get("result", "")
    return [
        Message(role="assistant", tool_calls=[ToolCall(id=call_id, name=call["name"], arguments=arguments)]),
        Message(
            role="tool",
            content=result if isinstance(result, str) else json.dumps(result, ensure_ascii=False),
            tool_call_id=call_id,
            name=call["name"],
            is_error=bool(call.get("is_error")),
        ),
    ]


def parts_text(parts: Any) -> str:
    """The text of the parts: text parts, URLs, and data parts other than tool calls as JSON."""
    out = []
    for part in parts:
        if part.HasField("text"):
            out.append(part.text)
        elif part.HasField("data"):
            data = get_data_parts([part])[0]
            if not (
                isinstance(data, dict) and "tool_call" in data
            ):  # keys sorted: a proto Struct has no order
                out.append(json.dumps(data, ensure_ascii=False, sort_keys=True))
        elif part.HasField("url"):
            out.append(part.url)
    return "\n".join(t for t in out if t)
