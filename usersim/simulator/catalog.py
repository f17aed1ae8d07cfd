"""Registers the built-in simulator SPEC schemes: `rule[:SALT]` and `openai:MODEL`."""

from __future__ import annotations

from usersim.simulator.base import UserSimulator, simulator_registry


def _rule(spec: str) -> UserSimulator:
    from usersim.simulator.rule import RuleSimulator

    return RuleSimulator(spec)


def _openai(spec: str) -> UserSimulator:
    from usersim.simulator.llm import LLMSimulator

    return LLMSimulator(spec)


if "rule" not in simulator_registry:
    simulator_registry.register("rule")(_rule)
    simulator_registry.register("openai")(_openai)
