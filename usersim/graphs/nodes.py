"""Nodes and routers of the conversation graph. Nodes return only the state keys they change."""

from __future__ import annotations

import logging
from typing import Any, Literal

from langgraph.runtime import Runtime

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput
from usersim.core.errors import CaseError
from usersim.core.events import SimEvent, Stop, Usage
from usersim.core.messages import Message, ToolCall
from usersim.core.turns import away_unless
from usersim.graphs.context import RunContext
from usersim.graphs.state import ConversationState
from usersim.judges.base import JudgeState, apply_judges
from usersim.simulator.base import SimulatorError, SimulatorView

log = logging.getLogger(__name__)


def _user(text: str) -> Message:
    return Message(role="user", content=text)


async def user_turn(state: ConversationState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The user's move: replay the case (static) or ask the simulator (organic)."""
    ctx = runtime.context
    case = ctx.case
    turn = state.get("turn", 0)
    messages = state.get("messages", [])
    if case.mode == "static":
        return _replay_turn(case, turn, len(messages))
    return await _simulated_turn(ctx, turn, messages)


def _replay_turn(case: Any, turn: int, n_messages: int) -> dict[str, Any]:
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


def simulator_transcript(messages: list[Message]) -> list[Message]:
    """User and assistant text; an assistant message carries the names of the tools the agent called
    before it in that turn (for `when: {agent_calls: TOOL}` events), never arguments or results."""
    out: list[Message] = []
    called: list[ToolCall] = []
    for m in messages:
        if m.role == "assistant":
            called += [ToolCall(name=tc.name) for tc in m.tool_calls]
            if m.content:
                out.append(Message(role="assistant", content=m.content, tool_calls=called))
                called = []
        elif m.role == "user":
            if called:  # the agent called tools but said nothing
                out.append(Message(role="assistant", content="", tool_calls=called))
                called = []
            if m.content:
                out.append(Message(role="user", content=m.content))
    if called:
        out.append(Message(role="assistant", content="", tool_calls=called))
    return out


async def _simulated_turn(ctx: RunContext, turn: int, messages: list[Message]) -> dict[str, Any]:
    case = ctx.case
    max_turns = case.max_turns or (ctx.persona.max_turns if ctx.persona else None) or 10
    if turn >= max_turns:
        return {"stop": Stop(reason="max_turns", detail=f"reached max_turns={max_turns} without the goal")}
    prefix = [case.input.message, *case.input.script] if case.input.script else []
    if turn < len(prefix):  # a promoted failure: its recorded user turns first, then the simulator
        return {"messages": [_user(prefix[turn] or "")], "turn": turn + 1, "turn_starts": [len(messages)]}
    assert ctx.simulator is not None and ctx.persona is not None
    origin = case.promoted_from  # pinned: the original case id and seed give the original wording
    view = SimulatorView(
        case_id=origin.case_id if origin else case.id,
        persona=ctx.persona,
        goal=case.goal,
        opening_message=case.input.message,
        transcript=simulator_transcript(messages),
        turn=turn + 1,
        max_turns=max_turns,
        seed=origin.seed if origin and origin.seed is not None else ctx.seed,
    )
    try:
        async with away_unless(ctx.simulator):
            move = await ctx.simulator.next_turn(view)
    except SimulatorError as exc:
        events = list(getattr(exc, "events", []))
        return {
            "stop": Stop(
                reason="simulator_error",
                detail=str(exc),
                blame="infrastructure" if getattr(exc, "outage", False) else "simulator",
            ),
            "sim_events": events,
        }
    except Exception as exc:  # a broken simulator must not crash the batch
        log.exception("simulator %s crashed", getattr(ctx.simulator, "spec", "?"))
        return {
            "stop": Stop(reason="simulator_error", detail=f"{type(exc).__name__}: {exc}", blame="simulator")
        }
    usage = {"simulator": move.usage} if move.usage else {}
    events = list(move.events)
    if move.stop is not None and not any(e.kind in ("stop_accepted", "give_up") for e in events):
        kind = "give_up" if move.stop == "gave_up" else "stop_accepted"
        events.append(
            SimEvent(turn=turn + 1, kind=kind, detail=f"{move.stop}: {move.reason or 'no reason given'}")
        )
    if move.stop is not None:
        update: dict[str, Any] = {
            "stop": Stop(reason=move.stop, detail=move.reason),
            "usage": usage,
            "sim_events": events,
        }
        if move.closing and (move.message or "").strip():  # the model's own last words, verbatim
            update |= {
                "messages": [_user(move.message or "")],
                "turn": turn + 1,
                "turn_starts": [len(messages)],
            }
        return update
    if not (move.message or "").strip():
        return {
            "stop": Stop(
                reason="simulator_error", detail="simulator returned an empty message", blame="simulator"
            ),
            "usage": usage,
            "sim_events": events,
        }
    return {
        "messages": [_user(move.message or "")],
        "turn": turn + 1,
        "turn_starts": [len(messages)],
        "usage": usage,
        "sim_events": events,
    }


def _unanswered_calls(messages: list[Message]) -> list[Any]:
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant" or not last.tool_calls:
        return []
    return list(last.tool_calls)


async def agent_turn(state: ConversationState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The agent's move: call it, run its tool calls through the sandbox, repeat (bounded)."""
    ctx = runtime.context
    turn = state.get("turn", 1)
    base = list(state.get("messages", []))
    new: list[Message] = []
    trace = []
    usage = Usage()
    system = Message(role="system", content=ctx.sandbox.system_prompt())
    seen_tokens = 0

    raised: list[CaseError] = []  # a user tool's bug met in the agent's own tool loop

    async def run_tool(name: str, arguments: dict[str, Any]) -> Message:
        try:
            event = await ctx.sandbox.call(name, arguments, turn=turn)
        except CaseError as exc:
            raised.append(exc)
            raise
        event.message_index = len(base) + len(new)  # where the agent's own loop appends it
        trace.append(event)
        return Message(role="tool", content=event.result, name=name, is_error=event.is_error)

    for step in range(ctx.max_tool_rounds + 1):
        convo = base + new
        if ctx.count_tokens is not None and step == 0:
            seen_tokens = ctx.count_tokens([system] + convo)
        inp = AgentInput(
            messages=[system] + convo,
            tools=ctx.sandbox.tool_schemas(),
            case=ctx.case,
            run_tool=run_tool,
            seed=ctx.seed,
            turn=turn,
        )
        try:
            async with away_unless(ctx.agent):
                reply = await _unless_case_error(ctx.agent.respond(inp), raised)
        except CaseError as exc:  # case-errors branch, minimal: the finalize branch owns the stop's record
            return _case_stop(new, trace, usage, seen_tokens, ctx, exc)
        except AgentEndpointError as exc:  # outage after retries: infrastructure, not the agent
            return _agent_stop(new, trace, usage, seen_tokens, ctx, str(exc), infrastructure=True)
        except AgentError as exc:
            return _agent_stop(new, trace, usage, seen_tokens, ctx, str(exc))
        except (
            Exception
        ) as exc:  # adapters should raise AgentError; anything else is still the agent's failure
            log.exception("agent %s crashed", ctx.agent.spec)
            return _agent_stop(new, trace, usage, seen_tokens, ctx, f"{type(exc).__name__}: {exc}")
        usage = usage.add(reply.usage)
        if not reply.messages:
            return _agent_stop(new, trace, usage, seen_tokens, ctx, "agent returned no message")
        new.extend(reply.messages)
        calls = _unanswered_calls(new)
        if not calls:
            break
        if step == ctx.max_tool_rounds:
            return _agent_stop(
                new,
                trace,
                usage,
                seen_tokens,
                ctx,
                f"agent kept calling tools after {ctx.max_tool_rounds} rounds in one turn",
            )
        for call in calls:
            try:
                event = await ctx.sandbox.call(call.name, call.arguments, turn=turn)
            except CaseError as exc:
                return _case_stop(new, trace, usage, seen_tokens, ctx, exc)
            event.message_index = len(base) + len(new)
            trace.append(event)
            new.append(
                Message(
                    role="tool",
                    content=event.result,
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=event.is_error,
                )
            )
    return _agent_update(new, trace, usage, seen_tokens, ctx)


async def _unless_case_error(reply: Any, raised: list[CaseError]) -> Any:
    """The agent's reply; a CaseError from a user tool is re-raised however the agent wrapped it."""
    try:
        out = await reply
    except Exception:
        if raised:
            raise raised[0] from None
        raise
    if raised:
        raise raised[0]
    return out


def _case_stop(new, trace, usage, seen_tokens, ctx: RunContext, exc: CaseError) -> dict[str, Any]:
    stop = Stop(reason="case_error", detail=f"{exc}\n{exc.traceback}".strip(), blame="case")
    return _agent_update(new, trace, usage, seen_tokens, ctx) | {"stop": stop}


def _agent_stop(
    new, trace, usage, seen_tokens, ctx: RunContext, detail: str, *, infrastructure: bool = False
) -> dict[str, Any]:
    stop = Stop(reason="agent_error", detail=detail, blame="infrastructure" if infrastructure else "agent")
    return _agent_update(new, trace, usage, seen_tokens, ctx) | {"stop": stop}


def _agent_update(new, trace, usage, seen_tokens, ctx: RunContext) -> dict[str, Any]:
    return {
        "messages": new,
        "tool_trace": trace,
        "skill_events": ctx.sandbox.drain_skill_events(),
        "usage": {"agent": usage},
        "context_tokens": [seen_tokens] if ctx.count_tokens is not None else [],
    }


def judge_state(state: ConversationState, ctx: RunContext) -> JudgeState:
    history_len = len(ctx.case.input.history) if ctx.case.mode == "static" else 0
    return JudgeState(
        tool_trace=state.get("tool_trace", []),
        skill_events=state.get("skill_events", []),
        turn_starts=state.get("turn_starts", []),
        history_len=history_len,
        stop=state.get("stop"),
        turns=state.get("turn", 0),
        persona=ctx.persona,
        variant=ctx.variant,
    )


async def judge(state: ConversationState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run every selected judge; a judge that raises yields an `error` verdict, never a crash."""
    ctx = runtime.context
    jstate = judge_state(state, ctx)
    transcript = list(state.get("messages", []))
    verdicts, usage = await apply_judges(ctx.judges, transcript=transcript, case=ctx.case, state=jstate)
    return {"verdicts": verdicts, "usage": {"judge": usage} if usage.calls else {}}


# The routes are coroutines so langgraph runs them on the event loop: a plain function would be
# sent to a thread pool on every step (two thread hops per turn, queued behind each other under load).
async def route_after_user(state: ConversationState) -> Literal["agent_turn", "judge"]:
    return "judge" if state.get("stop") else "agent_turn"


async def route_after_agent(state: ConversationState) -> Literal["user_turn", "judge"]:
    return "judge" if state.get("stop") else "user_turn"
