"""A miniature of the graph's agent turn for adapter tests: fake tools, a bounded tool loop."""

from __future__ import annotations

import json
from typing import Any

from usersim.adapters.base import AgentInput, AgentUnderTest
from usersim.cases.schema import Case, CaseContext, CaseInput, Judging, ScoringSpec
from usersim.core.messages import Message

FLIGHTS = {
    "outbound": [
        {
            "airline": "东方航空",
            "airline_type": "Full-service",
            "flight_no": "MU729",
            "departure": "2026-06-15T08:30:00+08:00",
            "arrival": "2026-06-15T11:45:00+09:00",
            "price_per_person": 1880,
            "cabin": "Economy",
            "baggage_included": True,
            "notes": "直飞",
        },
        {
            "airline": "春秋航空",
            "airline_type": "LCC",
            "flight_no": "9C8887",
            "departure": "2026-06-15T06:50:00+08:00",
            "arrival": "2026-06-15T10:05:00+09:00",
            "price_per_person": 990,
            "cabin": "Economy",
            "baggage_included": False,
            "baggage_fee_per_piece": 250,
            "notes": "不含托运行李",
        },
    ],
    "return": [],
}


def tool_schema(name: str, props: dict[str, str], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} (fake)",
            "parameters": {
                "type": "object",
                "properties": {k: {"type": v} for k, v in props.items()},
                "required": required,
            },
        },
    }


TOOLS = [
    tool_schema(
        "search_flights",
        {
            "origin": "string",
            "destination": "string",
            "departure_date": "string",
            "return_date": "string",
            "passengers": "integer",
        },
        ["origin", "destination", "departure_date"],
    ),
    tool_schema("web_search", {"query": "string"}, ["query"]),
]


class ToolError(str):
    """Return this from a fake tool result callable to answer with an error result."""


class FakeTools:
    """Records every call; answers from a dict of results (a callable, a JSON-able value or an error)."""

    def __init__(self, results: dict[str, Any] | None = None, errors: dict[str, str] | None = None) -> None:
        self.results = {
            "search_flights": FLIGHTS,
            "web_search": {"results": [{"title": "结果", "snippet": "..."}]},
        }
        self.results.update(results or {})
        self.errors = errors or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def run_tool(self, name: str, arguments: dict[str, Any]) -> Message:
        self.calls.append((name, dict(arguments)))
        if name in self.errors:
            return Message(role="tool", name=name, content=self.errors[name], is_error=True)
        value = self.results.get(name, {"error": f"unknown tool {name}"})
        value = value(arguments) if callable(value) else value
        if isinstance(value, ToolError):
            return Message(role="tool", name=name, content=str(value), is_error=True)
        return Message(role="tool", name=name, content=json.dumps(value, ensure_ascii=False))


def make_case(
    message: str = "hi", *, current_date: str = "2026-04-07", memory: list[str] | None = None
) -> Case:
    return Case(
        id="T-ADAPT-1",
        dimension="B1",
        title="adapter test",
        input=CaseInput(message=message),
        context=CaseContext(current_date=current_date, memory=memory or []),
        judging=Judging(scoring=ScoringSpec(methods=["auto"])),
    )


async def drive(
    agent: AgentUnderTest,
    messages: list[Message],
    tools: FakeTools,
    *,
    case: Case | None = None,
    schemas: list[dict[str, Any]] | None = None,
    turn: int = 1,
    max_steps: int = 8,
) -> list[Message]:
    """One agent turn: respond, execute unanswered tool calls, repeat (bounded). Returns new messages."""
    case = case or make_case()
    new: list[Message] = []
    for _ in range(max_steps):
        inp = AgentInput(
            messages=messages + new,
            tools=schemas if schemas is not None else TOOLS,
            case=case,
            run_tool=tools.run_tool,
            seed=1,
            turn=turn,
        )
        reply = await agent.respond(inp)
        new.extend(reply.messages)
        last = reply.messages[-1]
        answered = {m.tool_call_id for m in new if m.role == "tool"}
        pending = [c for c in last.tool_calls if c.id not in answered] if last.role == "assistant" else []
        if not pending:
            return new
        for call in pending:
            result = await tools.run_tool(call.name, call.arguments)
            new.append(result.model_copy(update={"tool_call_id": call.id}))
    raise AssertionError("tool loop did not finish")


def shape(messages: list[Message]) -> list[tuple[Any, ...]]:
    """Transcript structure without call ids: (role, content, ((tool, args), ...))."""
    return [
        (m.role, m.content, tuple((c.name, json.dumps(c.arguments, sort_keys=True)) for c in m.tool_calls))
        for m in messages
    ]
