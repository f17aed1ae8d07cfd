"""Helpers: build personas and drive a simulator against scripted agent replies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from usersim.core.messages import Message
from usersim.personas.schema import Persona
from usersim.simulator.base import SimulatorTurn, SimulatorView


def persona(**over: Any) -> Persona:
    """A small travel persona; keyword arguments replace top-level fields."""
    data: dict[str, Any] = {
        "id": "t-user",
        "name": "Test",
        "identity": "上海的上班族",
        "goal": {
            "description": "订机票和酒店",
            "required": ["flights", "hotel"],
            "deliverable_keywords": {"flights": ["航班"], "hotel": ["酒店"]},
            "constraints": {"max_price": 3000},
        },
        "known_info": [
            {"slot": "origin", "value": "上海"},
            {"slot": "destination", "value": "大阪"},
            {"slot": "dates", "value": "6 月 15 号"},
            {"slot": "party_size", "value": "2 个人"},
        ],
        "unknown_info": ["签证政策", "酒店房价: 每晚 888 元"],
    }
    data.update(over)
    return Persona.model_validate(data)


def view(
    p: Persona,
    transcript: list[Message],
    turn: int,
    *,
    seed: int = 1,
    opening: str | None = "帮我订去大阪的票",
) -> SimulatorView:
    return SimulatorView(
        case_id="T-1",
        persona=p,
        opening_message=opening,
        transcript=list(transcript),
        turn=turn,
        max_turns=20,
        seed=seed,
    )


async def converse(
    sim: Any,
    p: Persona,
    agent: list[str] | Callable[[int, str], str],
    *,
    seed: int = 1,
    opening: str | None = "帮我订去大阪的票",
    max_turns: int = 12,
) -> tuple[list[Message], SimulatorTurn]:
    """Run sim vs a scripted agent; returns the transcript and the last simulator turn."""
    transcript: list[Message] = []
    last = SimulatorTurn()
    for turn in range(1, max_turns + 1):
        last = await sim.next_turn(view(p, transcript, turn, seed=seed, opening=opening))
        if last.stop:
            break
        transcript.append(Message(role="user", content=last.message or ""))
        if callable(agent):
            reply = agent(turn, last.message or "")
        else:
            reply = agent[turn - 1] if turn - 1 < len(agent) else "嗯嗯。"
        transcript.append(Message(role="assistant", content=reply))
    return transcript, last


def user_texts(transcript: list[Message]) -> list[str]:
    return [m.content for m in transcript if m.role == "user"]
