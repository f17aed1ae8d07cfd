"""`usersim persona preview`: a sample conversation of a persona against an agent.

A small local loop (simulator turn -> agent turn with its tool calls run through the sandbox)
so persona authors can see how a persona behaves without a full `usersim run`.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from cases.messages import Message
from cases.schema import Case
from personas.loader import apply_overrides, load_persona
from personas.schema import Persona
from simulator.base import SimulatorView, load_simulator

MAX_TOOL_ROUNDS = 8  # agent <-> tool round trips per user turn


@dataclass
class Preview:
    """The sample conversation and how it ended."""

    transcript: list[Message] = field(default_factory=list)
    stop: str = "max_turns"
    detail: str = ""


def preview_case(persona: Persona, max_turns: int) -> Case:
    """A throwaway organic case that runs the persona on its own goal and opening."""
    return Case.model_validate({
        "id": f"preview-{persona.id.replace('~', '-')}",
        "dimension": "PREVIEW",
        "title": f"persona preview: {persona.name}",
        "mode": "organic",
        "persona": persona.id,
        "goal": persona.goal.description,
        "max_turns": max_turns,
        "input": {"message": persona.opening_message} if persona.opening_message else {},
        "judging": {"scoring": {"methods": ["auto"]}},
    })


def _sandbox(case: Case, seed: int) -> Any:
    if importlib.util.find_spec("sandbox.base") is None:
        return None
    from sandbox.base import open_sandbox

    return open_sandbox(case, seed=seed)


async def _agent_turn(agent: Any, sandbox: Any, case: Case, messages: list[Message], seed: int, turn: int) -> list[Message]:
    from adapters.base import AgentInput

    async def run_tool(name: str, arguments: dict[str, Any]) -> Message:
        if sandbox is None:
            return Message(role="tool", name=name, content="Error: no sandbox available", is_error=True)
        event = await sandbox.call(name, arguments, turn=turn)
        return Message(role="tool", name=name, content=event.result, is_error=event.is_error)

    system = [Message(role="system", content=sandbox.system_prompt())] if sandbox is not None else []
    tools = sandbox.tool_schemas() if sandbox is not None else []
    new: list[Message] = []
    for _ in range(MAX_TOOL_ROUNDS):
        reply = await agent.respond(
            AgentInput(messages=system + messages + new, tools=tools, case=case, run_tool=run_tool, seed=seed, turn=turn)
        )
        new.extend(reply.messages)
        last = new[-1] if new else None
        if last is None or last.role != "assistant" or not last.tool_calls:
            break
        for call in last.tool_calls:  # run the requested tools, then let the agent continue
            result = await run_tool(call.name, call.arguments)
            new.append(result.model_copy(update={"tool_call_id": call.id}))
    return new


async def run_preview(
    persona_ref: str, *, case: Case | None = None, simulator: str = "rule", agent: str = "reference",
    seed: int = 0, max_turns: int | None = None,
) -> Preview:
    """Play one conversation; the case (if any) supplies goal, opening, overrides and turn budget."""
    from adapters.base import load_agent

    persona = load_persona(persona_ref)
    if case is not None:
        persona = apply_overrides(persona, case.persona_overrides, where=f"case '{case.id}' persona_overrides")
    budget = max_turns or (case.max_turns if case else None) or persona.max_turns or 10
    case = case or preview_case(persona, budget)
    sim, bot, box = load_simulator(simulator), load_agent(agent), _sandbox(case, seed)
    out = Preview()
    for turn in range(1, budget + 1):
        view = SimulatorView(
            case_id=case.id, persona=persona, goal=case.goal, opening_message=case.input.message,
            transcript=[m for m in out.transcript if m.role in ("user", "assistant") and m.content],
            turn=turn, max_turns=budget, seed=seed,
        )
        move = await sim.next_turn(view)
        if move.stop:
            if move.message:
                out.transcript.append(Message(role="user", content=move.message))
            out.stop, out.detail = move.stop, move.reason
            return out
        out.transcript.append(Message(role="user", content=move.message or ""))
        out.transcript.extend(await _agent_turn(bot, box, case, out.transcript, seed, turn))
    out.detail = f"reached max_turns={budget}"
    return out


def format_preview(preview: Preview) -> str:
    """The conversation as readable text (tool calls abbreviated)."""
    lines = []
    for m in preview.transcript:
        if m.role == "user":
            lines.append(f"USER   {m.content}")
        elif m.role == "assistant":
            for call in m.tool_calls:
                lines.append(f"  tool> {call.name}({', '.join(f'{k}={v}' for k, v in call.arguments.items())})")
            if m.content:
                lines.append(f"AGENT  {m.content}")
        elif m.role == "tool":
            lines.append(f"  tool< {m.content[:100]}{'...' if len(m.content) > 100 else ''}")
    lines.append(f"-- stop: {preview.stop}" + (f" ({preview.detail})" if preview.detail else ""))
    return "\n".join(lines)
