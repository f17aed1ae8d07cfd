"""The one conversation graph: static replays and organic simulations share it.

turn -> judge -> END

`turn` plays the conversation (graphs.nodes.turn_step): turn after turn, the user's move
(`user_turn`: replay history and message / scripted turns / simulator) and, unless that stopped the
conversation, the agent's answer (`agent_turn`: the agent, its tool calls through the sandbox,
bounded), until a stop (goal met / gave up / max turns / replay complete / agent or simulator
error); the whole exchange is one superstep (LangGraph's work per superstep was a quarter of the
harness CPU per model call with one per turn). `judge` runs the judges and then decides status and
blame from the end state (graphs.finalize, in the same superstep); rescore runs the same function.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from usersim.graphs.context import RunContext
from usersim.graphs.nodes import judge, turn_step
from usersim.graphs.state import ConversationState

builder = StateGraph(ConversationState, context_schema=RunContext)
builder.add_node("turn", turn_step)
builder.add_node("judge", judge)
builder.add_edge(START, "turn")
builder.add_edge("turn", "judge")
builder.add_edge("judge", END)

graph = builder.compile()
graph.name = "usersim-conversation"
