"""The one conversation graph: static replays and organic simulations share it.

turn -> (stop? judge : turn) ... judge -> END

A `turn` is the user's move (`user_turn`: replay history and message / scripted turns / simulator)
and, unless that stopped the conversation, the agent's answer (`agent_turn`: the agent, its tool
calls through the sandbox, bounded) in one superstep; the turn names the next node itself (a
`Command`), so there is no routing task. `judge` runs the judges and then decides status and blame
from the end state (graphs.finalize, in the same superstep); rescore runs the same function.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from usersim.graphs.context import RunContext
from usersim.graphs.nodes import judge, turn_step
from usersim.graphs.state import ConversationState

builder = StateGraph(ConversationState, context_schema=RunContext)
builder.add_node("turn", turn_step, destinations=("turn", "judge"))
builder.add_node("judge", judge)
builder.add_edge(START, "turn")
builder.add_edge("judge", END)

graph = builder.compile()
graph.name = "usersim-conversation"
