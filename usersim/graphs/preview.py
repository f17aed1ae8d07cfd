"""`usersim persona preview`: a sample conversation of a persona against an agent, played through the
same conversation graph as `usersim run` (without judges or a run directory)."""

from __future__ import annotations

from dataclasses import dataclass, field

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.personas.loader import apply_overrides, load_persona
from usersim.personas.schema import Persona
from usersim.simulator.base import load_simulator


@dataclass
class Preview:
    """The sample conversation and how it ended."""

    transcript: list[Message] = field(default_factory=list)
    stop: str = "max_turns"
    detail: str = ""


def preview_case(persona: Persona, max_turns: int) -> Case:
    """A throwaway organic case that runs the persona on its own goal and opening."""
    return Case.model_validate(
        {
            "id": f"preview-{persona.id.replace('~', '-')}",
            "dimension": "PREVIEW",
            "title": f"persona preview: {persona.name}",
            "mode": "organic",
            "persona": persona.id,
            "goal": persona.goal.description,
            "max_turns": max_turns,
            "input": {"message": persona.opening_message} if persona.opening_message else {},
            "judging": {"scoring": {"methods": ["auto"]}},
        }
    )


async def run_preview(
    persona_ref: str,
    *,
    case: Case | None = None,
    simulator: str = "rule",
    agent: str = "reference",
    seed: int = 0,
    max_turns: int | None = None,
) -> Preview:
    """Play one conversation through the conversation graph (no judges); the case (if any) supplies
    goal, opening, overrides and turn budget."""
    from usersim.adapters.base import load_agent
    from usersim.graphs.context import RunContext
    from usersim.graphs.conversation import graph
    from usersim.sandbox.base import open_sandbox

    # a persona path is relative to the case file (if any); an id is also looked up beside it
    persona = load_persona(persona_ref, case_file=case.file if case is not None else None)
    if case is not None:
        persona = apply_overrides(
            persona, case.persona_overrides, where=f"case '{case.id}' persona_overrides"
        )
    budget = max_turns or (case.max_turns if case else None) or persona.max_turns or 10
    case = (case or preview_case(persona, budget)).model_copy(update={"max_turns": budget, "mode": "organic"})
    ctx = RunContext(
        case=case,
        agent=load_agent(agent),
        sandbox=open_sandbox(case, seed=seed),
        judges=[],
        simulator=load_simulator(simulator),
        persona=persona,
        seed=seed,
    )
    final = await graph.ainvoke({}, context=ctx, config={"recursion_limit": 4 * budget + 20})
    stop = final.get("stop")
    return Preview(
        transcript=list(final.get("messages", [])),
        stop=stop.reason if stop else "max_turns",
        detail=stop.detail if stop else "",
    )


def format_preview(preview: Preview) -> str:
    """The conversation as readable text (tool calls abbreviated)."""
    lines = []
    for m in preview.transcript:
        if m.role == "user":
            lines.append(f"USER   {m.content}")
        elif m.role == "assistant":
            for call in m.tool_calls:
                lines.append(
                    f"  tool> {call.name}({', '.join(f'{k}={v}' for k, v in call.arguments.items())})"
                )
            if m.content:
                lines.append(f"AGENT  {m.content}")
        elif m.role == "tool":
            lines.append(f"  tool< {m.content[:100]}{'...' if len(m.content) > 100 else ''}")
    lines.append(f"-- stop: {preview.stop}" + (f" ({preview.detail})" if preview.detail else ""))
    return "\n".join(lines)
