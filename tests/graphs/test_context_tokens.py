"""The agent's context per user turn (RunRecord.context_tokens): the prompt tokens its model
reported for the turn's first request when that step was one call that reported them, else the
messages the agent was sent, counted."""

from __future__ import annotations

from tests.graphs.fakes import FakeSandbox, RecordingAgent, ScriptedSimulator
from tests.graphs.test_conversation import PERSONA, organic_case
from tests.graphs.test_turn_step import _MOVES, _steps
from usersim.adapters.base import AgentInput, AgentReply
from usersim.core.events import Usage
from usersim.graphs.context import RunContext


class UsageAgent(RecordingAgent):
    """RecordingAgent whose every step reports `usage(step_number)`."""

    def __init__(self, usage, tool: str | None = None) -> None:
        super().__init__(tool=tool)
        self.usage = usage

    async def respond(self, inp: AgentInput) -> AgentReply:
        reply = await super().respond(inp)
        reply.usage = self.usage(len(self.inputs))
        return reply


class Counter:
    """count_tokens stand-in: what it was asked to count, and a size per message."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def __call__(self, messages) -> int:
        self.asked.append(len(messages))
        return 10 * len(messages)


def _ctx(agent, counter: Counter) -> RunContext:
    return RunContext(
        case=organic_case(max_turns=6),
        agent=agent,
        sandbox=FakeSandbox({"web_search": '{"ok": 1}'}),
        judges=[],
        simulator=ScriptedSimulator(_MOVES),
        persona=PERSONA,
        count_tokens=counter,
    )


async def test_the_models_reported_prompt_tokens_are_the_context_and_nothing_is_counted():
    counter = Counter()
    agent = UsageAgent(lambda n: Usage(calls=1, prompt_tokens=1000 + n, completion_tokens=5))
    _, final = await _steps(_ctx(agent, counter))
    assert final["context_tokens"] == [1001, 1002]  # the first (only) request of each turn
    assert counter.asked == []  # no tokenizer loaded for it


async def test_with_tool_rounds_the_turns_first_request_is_what_counts():
    counter = Counter()
    agent = UsageAgent(lambda n: Usage(calls=1, prompt_tokens=100 * n), tool="web_search")
    _, final = await _steps(_ctx(agent, counter))
    # turn 1: requests 1 (calls the tool) and 2 (answers); turn 2: requests 3 and 4
    assert final["context_tokens"] == [100, 300]
    assert counter.asked == []


async def test_an_agent_that_reports_nothing_is_counted_from_what_it_was_sent():
    counter = Counter()
    _, final = await _steps(_ctx(RecordingAgent(), counter))
    # system prompt + the conversation so far: 2 messages at turn 1, 4 at turn 2
    assert counter.asked == [2, 4] and final["context_tokens"] == [20, 40]


async def test_a_step_of_several_calls_or_no_prompt_count_is_counted_instead():
    for usage in (
        Usage(calls=3, prompt_tokens=9000),  # the agent's own loop: not one request's prompt
        Usage(calls=1, prompt_tokens=0),  # a server that reports no usage
        Usage(),
    ):
        counter = Counter()
        _, final = await _steps(_ctx(UsageAgent(lambda n, u=usage: u), counter))
        assert counter.asked == [2, 4] and final["context_tokens"] == [20, 40], usage
