"""Nodes and routers of the conversation graph. Nodes return only the state keys they change."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput
from usersim.core import timeline
from usersim.core.errors import CaseError
from usersim.core.events import SimEvent, Stop, ToolEvent, Usage
from usersim.core.messages import Message, ToolCall
from usersim.core.turns import away_unless
from usersim.graphs.agent_tools import own_events, place_events
from usersim.graphs.context import RunContext
from usersim.graphs.finalize import finalize
from usersim.graphs.judge_step import case_stop, format_traceback, run_judges
from usersim.graphs.opening import replay_turn as _replay_turn  # known before the graph runs
from usersim.graphs.state import REDUCERS, ConversationState
from usersim.simulator.base import Observed, SimulatorError, SimulatorView

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
    return await _simulated_turn(ctx, turn, messages, state.get("tool_trace", []))


def _plain(m: Message) -> bool:
    """Whether a message is its role and text only (what simulator_transcript would build from it)."""
    return not m.tool_calls and m.tool_call_id is None and m.name is None and not m.is_error


def simulator_transcript(messages: list[Message]) -> list[Message]:
    """User and assistant text; an assistant message carries the names of the tools the agent called
    before it in that turn (for `when: {agent_calls: TOOL}` events), never arguments or results."""
    out: list[Message] = []
    called: list[ToolCall] = []
    for m in messages:
        if m.role == "assistant":
            called += [ToolCall(name=tc.name) for tc in m.tool_calls]
            if m.content:
                # a plain text reply is already what the simulator reads: kept, not rebuilt per turn
                plain = not called and _plain(m)
                out.append(m if plain else Message(role="assistant", content=m.content, tool_calls=called))
                called = []
        elif m.role == "user":
            if called:  # the agent called tools but said nothing
                out.append(Message(role="assistant", content="", tool_calls=called))
                called = []
            if m.content:
                out.append(m if _plain(m) else Message(role="user", content=m.content))
    if called:
        out.append(Message(role="assistant", content="", tool_calls=called))
    return out


def _observe(ctx: RunContext, messages: list[Message], trace: list[ToolEvent]) -> None:
    """Show an observing simulator (a person in the seat, simulator.human) what the tools did."""
    observe = getattr(ctx.simulator, "observe", None)
    if observe is not None:
        observe(Observed(messages=list(messages), tool_trace=list(trace), state=ctx.sandbox.state()))


async def _simulated_turn(
    ctx: RunContext, turn: int, messages: list[Message], trace: list[ToolEvent]
) -> dict[str, Any]:
    case = ctx.case
    max_turns = case.max_turns or (ctx.persona.max_turns if ctx.persona else None) or 10
    _observe(ctx, messages, trace)  # also when the budget ends it: the person sees the last reply
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
    timeline.at_turn(turn + 1)
    try:
        with timeline.span("simulator", getattr(ctx.simulator, "spec", "simulator")):
            async with away_unless(ctx.simulator):
                move = await ctx.simulator.next_turn(view)
    except CaseError as exc:  # the persona's own code (e.g. an event hook) raised: the case's fault
        return case_stop(exc)
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
            "stop": Stop(reason="simulator_error", detail=f"{type(exc).__name__}: {exc}", blame="simulator"),
            "traceback": format_traceback(exc),
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
                "played_by": {turn + 1: move.by},
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
        "played_by": {turn + 1: move.by},
    }


def _unanswered_calls(messages: list[Message]) -> list[Any]:
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant" or not last.tool_calls:
        return []
    return list(last.tool_calls)


async def agent_turn(state: ConversationState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The agent's move: call it, run its tool calls through the sandbox, repeat (bounded).

    A `CaseError` from the sandbox (a user's tool raised) ends the conversation as `case_error`,
    also when it surfaced inside the agent's own tool loop and the adapter wrapped or swallowed it."""
    ctx = runtime.context
    turn = state.get("turn", 1)
    timeline.at_turn(turn)
    base = list(state.get("messages", []))
    new: list[Message] = []
    trace = []
    usage = Usage()
    system = Message(role="system", content=ctx.sandbox.system_prompt())
    prompt: list[Message] = []  # what the agent saw at its first step, counted once it has answered
    reported: int | None = None  # the prompt tokens its model reported for that first step
    case_errors: list[CaseError] = []

    async def sandbox_call(name: str, arguments: dict[str, Any]) -> Any:
        try:
            with timeline.span("tool", name) as extra:
                event = await ctx.sandbox.call(name, arguments, turn=turn)
                extra.update(call_number=event.call_number, intercepted=event.intercepted or None)
                extra.update(is_error=event.is_error or None)
        except CaseError as exc:
            case_errors.append(exc)
            raise
        event.message_index = len(base) + len(new)  # where the agent's own loop appends it
        trace.append(event)
        return event

    async def run_tool(name: str, arguments: dict[str, Any]) -> Message:
        event = await sandbox_call(name, arguments)
        return Message(role="tool", content=event.result, name=name, is_error=event.is_error)

    def update(**stop: Any) -> dict[str, Any]:
        # the model's own count when it reported one (no encoder loaded: ~0.25 s of CPU and 40 MB
        # per process), else counted after the request went out, off the request's path
        if ctx.count_tokens is None:
            seen_tokens = 0
        else:
            seen_tokens = reported if reported is not None else ctx.count_tokens(prompt)
        out = _agent_update(new, trace, usage, seen_tokens, ctx)
        if case_errors:  # the case's tool crashed: that decides, whatever the agent did with it
            return out | case_stop(case_errors[0])
        if stop:
            out["stop"] = Stop(reason="agent_error", detail=stop["detail"], blame=stop.get("blame", "agent"))
            if stop.get("traceback"):
                out["traceback"] = stop["traceback"]
        return out

    for step in range(ctx.max_tool_rounds + 1):
        convo = base + new
        if step == 0:
            prompt = [system, *convo]
        inp = AgentInput(
            messages=[system] + convo,
            tools=ctx.sandbox.tool_schemas(),
            case=ctx.case,
            run_tool=run_tool,
            seed=ctx.seed,
            turn=turn,
        )
        made = len(trace)
        try:
            with timeline.span("agent", getattr(ctx.agent, "spec", "agent"), step=step):
                async with away_unless(ctx.agent):
                    reply = await ctx.agent.respond(inp)
        except CaseError as exc:
            if not case_errors:
                case_errors.append(exc)
            return update()
        except AgentEndpointError as exc:  # outage after retries: infrastructure, not the agent
            return update(detail=str(exc), blame="infrastructure")
        except AgentError as exc:  # the adapter's words; the agent's own crash is its cause
            crash = format_traceback(exc.__cause__) if exc.__cause__ is not None else None
            return update(detail=str(exc), traceback=crash)
        except Exception as exc:  # adapters should raise AgentError; anything else is still the agent's crash
            log.exception("agent %s crashed", ctx.agent.spec)
            return update(detail=f"{type(exc).__name__}: {exc}", traceback=format_traceback(exc))
        usage = usage.add(reply.usage)
        if step == 0:
            reported = _reported_prompt_tokens(reply.usage)
        if case_errors:  # the agent caught the tool's crash and went on: the run is still the case's fault
            new.extend(reply.messages)
            return update()
        if not reply.messages:
            return update(detail="agent returned no message")
        first = len(new)
        place_events(trace[made:], reply.messages, len(base) + first)  # the agent's own loop called them
        new.extend(reply.messages)
        if reply.tools_run_by_agent:
            trace.extend(own_events(new, first, len(base), turn, [*state.get("tool_trace", []), *trace]))
        calls = _unanswered_calls(new)
        if not calls:
            break
        if step == ctx.max_tool_rounds:
            return update(detail=f"agent kept calling tools after {ctx.max_tool_rounds} rounds in one turn")
        for call in calls:
            try:
                event = await sandbox_call(call.name, call.arguments)
            except CaseError:
                return update()
            new.append(
                Message(
                    role="tool",
                    content=event.result,
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=event.is_error,
                )
            )
    return update()


def _reported_prompt_tokens(usage: Usage | None) -> int | None:
    """The prompt tokens of one model call as its server counted them (system prompt, tool schemas
    and messages, in the model's own tokenizer); None when the step was not one reported call."""
    if usage is None or usage.calls != 1 or usage.prompt_tokens <= 0:
        return None
    return usage.prompt_tokens


def _agent_update(new, trace, usage, seen_tokens, ctx: RunContext) -> dict[str, Any]:
    return {
        "messages": new,
        "tool_trace": trace,
        "skill_events": ctx.sandbox.drain_skill_events(),
        "usage": {"agent": usage},
        "context_tokens": [seen_tokens] if ctx.count_tokens is not None else [],
    }


async def judge(state: ConversationState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run every selected judge; a judge that raises yields an `error` verdict, never a crash, except
    a CaseError (the test author's code), which ends the conversation as `case_error`. Then decide
    status, blame and the record's derived fields from the end state (graphs.finalize) in the same
    superstep: finalizing reads the state the judges' update leaves, as a node after it would."""
    ctx = runtime.context
    timeline.at_turn(0)
    with timeline.span("judge", "judges"):
        update = await run_judges(state, ctx.case, ctx.judge_list(), persona=ctx.persona, variant=ctx.variant)
    return {**update, "final": _finalized(fold(state, update), ctx)}


def _finalized(state: Mapping[str, Any], ctx: RunContext) -> Any:
    case = ctx.case
    history_len = len(case.input.history) if case.mode == "static" else 0
    persona = ctx.persona if case.mode == "organic" else None
    return finalize(state, persona=persona, history_len=history_len)


def _stopped(state: ConversationState, update: dict[str, Any]) -> bool:
    """Whether the conversation stops once `update` is applied (the stop channel keeps its last value)."""
    return bool(update["stop"] if "stop" in update else state.get("stop"))


# The conversation is one superstep: turn after turn (the user's move and, unless it stopped the
# conversation, the agent's answer) until one stops it, then the judges. Each half reads the state as
# the one before left it (`fold` applies an update the way the graph's channels do), which is what a
# superstep per half, or per turn, would have read; the graph gets the conversation's writes at once.
# LangGraph's own work per superstep (a task, its config, callback manager and runtime, a checkpoint
# of every channel, the writes) was about a quarter of the harness's CPU per model call with a
# superstep per turn (bench/part_calls.py), and nothing reads the state between turns: no
# checkpointer, no interrupt, the run awaits the end state.
async def turn_step(state: ConversationState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The conversation's turns, one after another, until one stops it (a stop from either half:
    the simulator or script ends it, max_turns, an agent or simulator error); the judges follow."""
    written: dict[str, Any] = {}
    while True:
        update, stopped = await _turn(state, runtime)
        written = fold(written, update)
        if stopped:
            return _writes(written)
        state = fold(state, update)


async def _turn(state: ConversationState, runtime: Runtime[RunContext]) -> tuple[dict[str, Any], bool]:
    """One turn: `user_turn`, then `agent_turn` on the state it leaves; its update and whether either
    half stopped the conversation. Every turn either stops or counts one more user turn, and
    `user_turn` stops at the case's turn budget (or the end of its script), so the loop ends."""
    update = await user_turn(state, runtime)
    if _stopped(state, update):
        return update, True
    after_user = fold(state, update)
    answer = await agent_turn(after_user, runtime)
    return fold(update, answer), _stopped(after_user, answer)


def _writes(update: dict[str, Any]) -> dict[str, Any]:
    """`update` without its empty list and usage values: appending nothing changes no channel, and
    each write is work for LangGraph (a channel update, a version, a checkpoint entry)."""
    return {k: v for k, v in update.items() if v or k not in REDUCERS}


def fold(state: Mapping[str, Any], update: dict[str, Any]) -> Any:
    """`state` (or an earlier update) with `update` applied the way the graph's channels apply it
    (graphs.state: lists append in order, usage adds per role, a plain key keeps the later value)."""
    out = dict(state)
    for key, value in update.items():
        reduce = REDUCERS.get(key)
        out[key] = reduce(out[key], value) if reduce is not None and key in out else value
    return out
