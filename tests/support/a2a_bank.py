"""Real A2A servers (a2a-sdk's JSON-RPC server app, served by uvicorn on a free port in a thread)
that put an agent function `(messages, tools) -> assistant message dict` — such as
examples/bank/agent.py's `correct` and `flawed` — behind the A2A protocol.

The agent runs its OWN tools, as an A2A agent does: each A2A context (one conversation) gets its
own usersim sandbox opened from `case_file` (so the bank's tools and tables, in this process),
and the system prompt of that sandbox. Each tool call it makes is reported to the client as a
working status message with a data part `{"tool_call": {name, arguments, result, is_error}}`;
the answer ends the turn as `input-required` when it asks something and no write tool ran in
this turn, else `completed` (the next user message then starts a new task in the same context).

Faults for error tests: `fail_on` (a user text that makes the task `failed` with a message).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from usersim.cases.loader import load_case
from usersim.sandbox.base import Sandbox, open_sandbox

AgentFn = Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]
READS = {"verify_customer", "find_customer", "get_customer", "list_transactions"}


class SandboxAgentExecutor(AgentExecutor):
    """An agent function with its own sandbox per A2A context."""

    def __init__(self, fn: AgentFn, case_file: Path, fail_on: str | None = None) -> None:
        self.fn = fn
        self.case = load_case(case_file)
        self.fail_on = fail_on
        self.contexts: dict[str, tuple[Sandbox, list[dict[str, Any]]]] = {}
        self.received: list[dict[str, Any]] = []  # what arrived: context, task, text

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.context_id and context.task_id
        text = context.get_user_input()
        self.received.append({"context_id": context.context_id, "task_id": context.task_id, "text": text})
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if self.fail_on and self.fail_on in text:
            await updater.failed(
                updater.new_agent_message([new_text_part("core banking system unavailable")])
            )
            return
        if context.context_id not in self.contexts:
            sandbox = open_sandbox(self.case)
            self.contexts[context.context_id] = (
                sandbox,
                [{"role": "system", "content": sandbox.system_prompt()}],
            )
        sandbox, messages = self.contexts[context.context_id]
        messages.append({"role": "user", "content": text})
        wrote = False
        for _ in range(20):
            reply = self.fn(messages, sandbox.tool_schemas())
            messages.append(reply)
            calls = reply.get("tool_calls") or []
            if not calls:
                break
            for tc in calls:
                name, args = tc["function"]["name"], json.loads(tc["function"]["arguments"] or "{}")
                event = await sandbox.call(name, args, turn=1)
                wrote |= name not in READS and not event.is_error
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": event.result})
                report = {"name": name, "arguments": args, "result": event.result, "is_error": event.is_error}
                await updater.start_work(updater.new_agent_message([new_data_part({"tool_call": report})]))
        answer = updater.new_agent_message([new_text_part(reply.get("content") or "")])
        if (reply.get("content") or "").rstrip().endswith("?") and not wrote:
            await updater.requires_input(answer)
        else:
            await updater.complete(answer)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """An ASGI app served by uvicorn on a free port in a thread; `url` is its base URL."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name=f"uvicorn-{self.port}", daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                return self
            threading.Event().wait(0.025)
        raise RuntimeError(f"server on port {self.port} did not start")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class A2AServer(Served):
    """A running A2A server (agent card + JSON-RPC) for `executor`. `headers` holds the headers
    of every request it received."""

    def __init__(self, executor: AgentExecutor, *, streaming: bool, name: str = "Acme Bank support") -> None:
        self.executor = executor
        self.headers: list[dict[str, str]] = []
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        card = AgentCard(
            name=name,
            description="Acme Bank customer support: cards, transfers, disputes, address changes.",
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
            ],
            capabilities=AgentCapabilities(streaming=streaming),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain", "application/json"],
            skills=[AgentSkill(id="support", name="support", description="Bank support", tags=["bank"])],
        )
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
        seen = self.headers

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
            await app(scope, receive, send)

        super().__init__(recording, port)


__all__ = ["A2AServer", "SandboxAgentExecutor", "Served", "free_port"]
