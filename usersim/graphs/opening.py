"""The opening of a conversation, known before the graph runs: a replayed case's first user turn,
and the agent's first request, sent ahead while the conversation graph imports.

`usersim run` spends about a second of CPU importing langgraph and langchain-core before the
graph can play its first node, and the first node's first model request then waits on the network
for as long as the model takes. When the first request of the run's first conversation is known
without playing it, `send_first_request` builds it with the same code the graph's nodes use (the
sandbox's system prompt and tool schemas, the case's first user message, the agent adapter's own
`respond`) and sends it through `llm.ahead`; the graph's agent node later makes the same call and
is handed that call's outcome (llm.ahead compares the two calls whole: a wrong prediction is never
answered, it costs one extra model call). The conversation is still played by the graph.

It is known when:
* the agent is an adapter that declares `sends_ahead` (`openai:`: its `respond` is one
  `chat_completion` call built from its input);
* the conversation starts from scratch (not a branch from a checkpoint);
* the first user turn needs no model: a replayed (static) case, an organic case whose first turns
  are scripted, or one with a first message (`input.message`) played by the `openai:` simulator,
  which says it verbatim.

`USERSIM_FIRST_REQUEST_AHEAD=0` turns it off.
"""

from __future__ import annotations

import os
from typing import Any

from usersim.core.events import Stop
from usersim.core.messages import Message

ENV_SWITCH = "USERSIM_FIRST_REQUEST_AHEAD"


def enabled() -> bool:
    """Whether sending the first request ahead is on (USERSIM_FIRST_REQUEST_AHEAD, default on)."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in {"0", "false", "no", "off"}


def replay_turn(case: Any, turn: int, n_messages: int) -> dict[str, Any]:
    """A replayed (static) case's user move at `turn` (0: the history and the first message), as the
    graph's user node writes it."""
    inp = case.input
    if turn == 0:
        new = list(inp.history)
        first = inp.message if inp.message is not None else (inp.script[0] if inp.script else None)
        if first is None:  # history only: the agent answers its last user message
            return {"messages": new, "turn": 1, "turn_starts": [max(len(new) - 1, 0)]}
        return {"messages": new + [_user(first)], "turn": 1, "turn_starts": [len(new)]}
    # scripted turns after the first: script[k] where the first message may have come from the script
    offset = 0 if inp.message is not None else 1
    idx = turn - 1 + offset
    if idx < len(inp.script):
        return {"messages": [_user(inp.script[idx])], "turn": turn + 1, "turn_starts": [n_messages]}
    return {"stop": Stop(reason="replay_complete", detail=f"replayed {turn} user turn(s)")}


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def first_user_messages(case: Any, persona: Any, simulator: Any) -> list[Message] | None:
    """The messages of the first user turn when they need no model (see the module's docstring),
    else None."""
    if case.mode == "static":
        return list(replay_turn(case, 0, 0)["messages"])
    if persona is None:
        return None
    max_turns = case.max_turns or persona.max_turns or 10
    if max_turns <= 0:
        return None
    if case.input.script:  # scripted first turns (a promoted failure) come before the simulator
        return [_user(case.input.message or "")]
    from usersim.simulator.llm import LLMSimulator

    if type(simulator) is LLMSimulator and case.input.message:
        return [_user(case.input.message)]
    return None


async def send_first_request(trial: Any, cfg: Any, plan: Any) -> bool:
    """Send the first request of `trial` ahead (llm.ahead) when it is known; True when it went."""
    if not enabled() or trial.initial_state:
        return False
    from usersim.llm import ahead

    try:
        agent = plan.load_agent()
        if not getattr(agent, "sends_ahead", False):
            return False
        inp = _first_input(trial, cfg, plan)
    except Exception:  # noqa: BLE001 - the conversation meets the same problem and records it
        return False
    if inp is None:
        return False
    return await ahead.send_ahead(agent.respond(inp))


def _first_input(trial: Any, cfg: Any, plan: Any) -> Any:
    """The agent's input at its first step, as the graph's agent node builds it (graphs.nodes)."""
    from usersim.adapters.base import AgentInput
    from usersim.sandbox.base import open_sandbox

    case = trial.case
    persona = simulator = None
    if case.mode == "organic":
        from usersim.simulator.base import load_simulator

        persona = trial.persona or plan.persona(case)
        simulator = load_simulator(cfg.simulator)
    first = first_user_messages(case, persona, simulator)
    if first is None:
        return None
    sandbox = open_sandbox(case, seed=trial.seed, skills_on=trial.skills_on)
    system = Message(role="system", content=sandbox.system_prompt())

    async def no_tools(name: str, arguments: dict[str, Any]) -> Message:
        raise RuntimeError("a request sent ahead runs no tools")

    return AgentInput(
        messages=[system, *first],
        tools=sandbox.tool_schemas(),
        case=case,
        run_tool=no_tools,
        seed=trial.seed,  # the first attempt's seed (trial_run.attempt_seed)
        turn=1,
    )
