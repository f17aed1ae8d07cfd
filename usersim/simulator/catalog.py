"""Registers the built-in simulator SPEC schemes: `rule[:SALT]` and `openai:MODEL`; `human` names the
seat of `usersim play` (a person types the turns), which `usersim run` cannot fill."""

from __future__ import annotations

from usersim.simulator.base import UserSimulator, simulator_registry


def _rule(spec: str) -> UserSimulator:
    from usersim.simulator.rule import RuleSimulator

    return RuleSimulator(spec)


def _openai(spec: str) -> UserSimulator:
    from usersim.simulator.llm import LLMSimulator

    return LLMSimulator(spec)


def _human(spec: str) -> UserSimulator:
    raise ValueError(
        f"simulator '{spec}' is a person in the user's seat: use `usersim play CASE --agent SPEC` (it types "
        "the user turns in the terminal); `usersim run` needs a simulator that plays on its own: rule or openai:MODEL"
    )


if "rule" not in simulator_registry:
    simulator_registry.register("rule")(_rule)
    simulator_registry.register("openai")(_openai)
    simulator_registry.register("human")(_human)
