"""a2a: what one turn records and how task states end it, against a real a2a-sdk server whose
executor acts out the state the user's text names."""

from __future__ import annotations

import asyncio
import builtins
import importlib
import sys

import pytest
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.tasks import TaskUpdater

from tests.support.a2a_bank import A2AServer
from usersim.adapters.base import AgentError, AgentInput, load_agent
from usersim.cases.loader import load_case
from usersim.core.messages import Message

CASE = load_case("examples/bank/cases/bank-01-lost-card.yaml")


class Scripted(AgentExecutor):
    """Does what the user's text asks: several messages and artifacts, or a given end state."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        text = context.get_user_input()
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        say = lambda t: up.new_agent_message([new_text_part(t)])  # noqa: E731
        if text == "many":
            await up.start_work(say("Looking that up."))
            await up.start_work(up.new_agent_message([new_data_part({"balance": 640.0, "currency": "USD"})]))
            await up.add_artifact([new_text_part("Statement: 3 transactions")], name="statement")
            await up.complete(say("Here is your statement."))
        elif text == "reject":
            await up.reject(say("I only handle banking questions."))
        elif text == "cancel":
            await up.cancel(say("Stopped."))
        elif text == "auth":
            await up.requires_auth(say("Please log in first."))
        elif text == "silent":
            await up.complete()
        else:
            await up.requires_input(say(f"You said {text!r}. What else?"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """A client's tasks/cancel: the task ends canceled (the server's own contract)."""
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


@pytest.fixture(scope="module", params=[True, False], ids=["stream", "send"])
def server(request):
    with A2AServer(Scripted(), streaming=request.param) as srv:
        yield srv


def say(agent, text: str, before: list[Message] | None = None):
    messages = [
        Message(role="system", content="(not sent)"),
        *(before or []),
        Message(role="user", content=text),
    ]

    async def no_tools(name, args):
        raise AssertionError

    return asyncio.run(agent.respond(AgentInput(messages=messages, tools=[], case=CASE, run_tool=no_tools)))


def test_every_message_data_part_and_artifact_of_a_turn_is_recorded_in_order(server):
    reply = say(load_agent(f"a2a:{server.url}"), "many")
    assert [m.content for m in reply.messages] == [
        "Looking that up.",
        '{"balance": 640.0, "currency": "USD"}',
        "Here is your statement.",
        "Statement: 3 transactions",
    ]
    assert all(m.role == "assistant" for m in reply.messages)


def test_input_required_ends_the_turn_and_the_next_message_continues_the_task(server):
    agent = load_agent(f"a2a:{server.url}")
    first = say(agent, "hello")
    assert [m.content for m in first.messages] == ["You said 'hello'. What else?"]
    before = [Message(role="user", content="hello"), *first.messages]
    second = say(agent, "more", before)
    assert [m.content for m in second.messages] == ["You said 'more'. What else?"]  # not turn 1 again


def test_a_rejected_task_is_the_agents_reply(server):
    assert [m.content for m in say(load_agent(f"a2a:{server.url}"), "reject").messages] == [
        "I only handle banking questions."
    ]


@pytest.mark.parametrize(
    ("text", "says"), [("cancel", "canceled: Stopped."), ("auth", "auth-required: Please log in")]
)
def test_canceled_and_auth_required_are_the_agents_error(server, text, says):
    with pytest.raises(AgentError, match=says):
        say(load_agent(f"a2a:{server.url}"), text)


def test_a_turn_with_nothing_said_is_the_agents_error(server):
    with pytest.raises(AgentError, match="answered without a message or artifact"):
        say(load_agent(f"a2a:{server.url}"), "silent")


def test_without_the_sdk_the_error_says_what_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_a2a(name, *args, **kwargs):
        if name == "a2a" or name.startswith("a2a."):
            raise ImportError(f"No module named '{name}'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_a2a)
    monkeypatch.delitem(sys.modules, "usersim.adapters.a2a_agent", raising=False)
    module = importlib.import_module("usersim.adapters.a2a_agent")
    try:
        with pytest.raises(AgentError, match=r"pip install usersim-harness\[a2a\]"):
            module.A2AAgent("a2a:http://localhost:9999")
    finally:
        monkeypatch.undo()
        sys.modules.pop("usersim.adapters.a2a_agent", None)


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("a2a:localhost:9999", "must start with http:// or https://"),
        ("a2a:http://h?stream=maybe", "use auto, 1 or 0"),
        ("a2a:http://h?auth_env=NO_SUCH_TOKEN_VAR", "NO_SUCH_TOKEN_VAR is not set"),
        ("a2a:http://h?timout=3", "Did you mean 'timeout'?"),
    ],
)
def test_spec_errors_say_what_to_change(spec, says):
    with pytest.raises(AgentError, match=says.replace("?", r"\?")):
        load_agent(spec)
