"""The one conversation graph: static replays and organic simulations share it.

user_turn -> (stop? judge : agent_turn) -> (stop? judge : user_turn) ... judge -> finalize -> END
(`finalize` decides status and blame from the end state; rescore runs the same function.) The turn
nodes name the next node themselves (a `Command`), so a turn is one superstep with no routing task.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from usersim.graphs.context import RunContext
from usersim.graphs.nodes import agent_step, finalize_node, judge, user_step
from usersim.graphs.state import ConversationState

builder = StateGraph(ConversationState, context_schema=RunContext)
builder.add_node("user_turn", user_step, destinations=("agent_turn", "judge"))
builder.add_node("agent_turn", agent_step, destinations=("user_turn", "judge"))
builder.add_node("judge", judge)
builder.add_node("finalize", finalize_node)
builder.add_edge(START, "user_turn")
builder.add_edge("judge", "finalize")
builder.add_edge("finalize", END)

graph = builder.compile()
graph.name = "usersim-conversation"
