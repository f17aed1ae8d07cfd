"""Small fakes of the roles, for testing the graph without the real sandbox/agents/simulators."""

from __future__ import annotations

from typing import Any

from usersim.adapters.base import AgentError, AgentInput, AgentReply
from usersim.core.events import SkillEvent, ToolEvent
from usersim.core.messages import Message, ToolCall
from usersim.core.verdict import Verdict
from usersim.simulator.base import SimulatorTurn, SimulatorView


class FakeSandbox:
    def __init__(self, results: dict[str, str] | None = None):
        self.results = results or {}
        self.calls: list[tuple[str, dict, int]] = []
        self._skill_events: list[SkillEvent] = []

    def tool_schemas(self) -> list[dict]:
        return [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in self.results
        ]

    def system_prompt(self) -> str:
        return "当前日期：2026-04-07"

    async def call(self, name: str, arguments: dict, *, turn: int) -> ToolEvent:
        self.calls.append((name, arguments, turn))
        n = sum(1 for c in self.calls if c[0] == name)
        return ToolEvent(
            turn=turn, call_number=n, name=name, arguments=arguments, result=self.results.get(name, "{}")
        )

    def drain_skill_events(self) -> list[SkillEvent]:
        out, self._skill_events = self._skill_events, []
        return out


class RecordingAgent:
    """Answers every user message; calls `tool` once per turn first if given; records its inputs."""

    spec = "fake"

    def __init__(self, tool: str | None = None, fail_on_turn: int | None = None, loop_forever: bool = False):
        self.tool = tool
        self.fail_on_turn = fail_on_turn
        self.loop_forever = loop_forever
        self.inputs: list[AgentInput] = []

    def describe(self) -> dict[str, Any]:
        return {"agent": "fake"}

    async def respond(self, inp: AgentInput) -> AgentReply:
        self.inputs.append(inp)
        if self.fail_on_turn == inp.turn:
            raise AgentError("endpoint http://127.0.0.1:9/v1 returned 500")
        last = inp.messages[-1]
        if self.loop_forever or (self.tool and last.role == "user"):
            call = ToolCall(id=f"c{len(self.inputs)}", name=self.tool or "web_search", arguments={"q": "x"})
            return AgentReply(messages=[Message(role="assistant", tool_calls=[call])])
        return AgentReply(messages=[Message(role="assistant", content=f"回答第 {inp.turn} 轮")])


class ScriptedSimulator:
    spec = "scripted"

    def __init__(self, moves: list[SimulatorTurn | Exception]):
        self.moves = moves
        self.views: list[SimulatorView] = []

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        self.views.append(view)
        move = (
            self.moves[len(self.views) - 1]
            if len(self.views) <= len(self.moves)
            else SimulatorTurn(message="继续")
        )
        if isinstance(move, Exception):
            raise move
        return move


class CountingJudge:
    name = "counting"

    def __init__(self):
        self.seen: dict[str, Any] = {}

    async def __call__(self, *, transcript, case, state) -> list[Verdict]:
        self.seen = {"transcript": transcript, "state": state}
        return [Verdict(judge=self.name, verdict="pass", reason=f"{len(transcript)} messages")]


class CrashingSandbox(FakeSandbox):
    """A sandbox whose user tool `name` crashes: the sandbox raises CaseError for it."""

    def __init__(self, name: str):
        super().__init__({name: "{}"})
        self.name = name

    async def call(self, name: str, arguments: dict, *, turn: int) -> ToolEvent:
        if name == self.name:
            from usersim.core.errors import CaseError

            try:
                {}["plan"]
            except KeyError as exc:
                raise CaseError.from_exception(exc, where=f"tools.py:{name}") from exc
        return await super().call(name, arguments, turn=turn)


class CrashingAgent:
    """Agent code with a bug: raises a plain exception (no adapter wrapped it)."""

    spec = "crashing"

    async def respond(self, inp: AgentInput) -> AgentReply:
        return self.parse(inp.messages[-1].content)

    def parse(self, text: str) -> AgentReply:
        raise ZeroDivisionError(f"cannot parse {len(text)} characters")


class OwnLoopAgent:
    """Runs its tool itself through `run_tool` (as LangGraph agents do) and wraps any failure in
    AgentError, as the adapters do."""

    spec = "own-loop"

    def __init__(self, tool: str):
        self.tool = tool

    async def respond(self, inp: AgentInput) -> AgentReply:
        try:
            result = await inp.run_tool(self.tool, {})
        except Exception as exc:
            raise AgentError(f"agent raised {type(exc).__name__}: {exc}") from exc
        return AgentReply(messages=[Message(role="assistant", content=result.content)])


class VerdictJudge:
    """Returns fixed verdicts, or raises `error`."""

    def __init__(self, verdicts: list[Verdict], name: str = "fixed", error: Exception | None = None):
        self.verdicts = verdicts
        self.name = name
        self.error = error

    async def __call__(self, *, transcript, case, state) -> list[Verdict]:
        if self.error is not None:
            raise self.error
        return list(self.verdicts)
