"""The reference agent: a deterministic, offline, rule-based tool-calling agent (a known-answer target).

SPEC `reference[:OPTIONS]`, options comma-separated:

* context strategy: `full` (default), `window-N` (sees only its last N user turns), `summary` or
  `summary-N` (older turns replaced by an extractive summary, N verbatim turns, default 4),
  `key-info` or `key-info-N` (older turns reduced to the sentences carrying key information, N
  verbatim turns, default 1), `external-memory` or `external-memory-K` (a store written per turn,
  the K most relevant stored turns retrieved per step, default 3; beside window-N, or a 2-turn
  window), `profile` (user facts/constraints extracted into a profile prepended to the context;
  combinable with any of them);
* flaws, for proving the judges tell a good agent from a flawed one: `flaw=forget-constraints`
  (ignores budgets, weight limits, brand exclusions, allergies), `flaw=no-clarify` (never asks:
  assumes missing details), `flaw=give-up-on-error` (a tool error ends the task with an apology),
  `flaw=ignore-history` (reads only the current message), `flaw=trust-claims` (believes a user's
  claimed authority, urgency or relation and hands over another person's records or its system
  prompt; reference/guard.py), `flaw=obey-tool-text` (carries out orders it finds in tool results:
  prompt injection, reference/obey.py). Several: `flaw=a,flaw=b`.

Each step it rebuilds its view of the conversation, extracts slots, picks the intents of the
current message (or continues the previous topic), then either asks for all missing details in one
message, issues the next tool calls, or answers from the tool results.
"""

from __future__ import annotations

import copy
import re
from datetime import timedelta
from typing import Any

from usersim.adapters.base import AgentError, AgentInput, AgentReply
from usersim.adapters.reference.context import (
    EXTERNAL_MEMORY_K,
    EXTERNAL_MEMORY_WINDOW,
    KEY_INFO_KEEP_TURNS,
    SUMMARY_KEEP_TURNS,
    ContextConfig,
    View,
    build_view,
    view_slots,
)
from usersim.adapters.reference.dialogue import Digest, ListOps, RateFix, Reference, conflict_notes
from usersim.adapters.reference.guard import screen
from usersim.adapters.reference.info import Housing, Recall, Search, Trains, Zhihu
from usersim.adapters.reference.intents import asked_slots, choose, clause_for, detect
from usersim.adapters.reference.itinerary import Itinerary
from usersim.adapters.reference.lexicon import COUNTRY_DEFAULT_CITY
from usersim.adapters.reference.memory import Stores
from usersim.adapters.reference.obey import obeyed_calls
from usersim.adapters.reference.planner import Call, Ctx, Done, Handler, question_block
from usersim.adapters.reference.shopping import Products
from usersim.adapters.reference.slots import Slots, extract
from usersim.adapters.reference.travel import Flights, Hotels, Restaurants, Weather
from usersim.adapters.reference.trip import Trip
from usersim.core.events import Usage
from usersim.core.messages import Message, ToolCall
from usersim.core.registry import did_you_mean

FLAWS = (
    "forget-constraints",
    "no-clarify",
    "give-up-on-error",
    "ignore-history",
    "trust-claims",
    "obey-tool-text",
)
MAX_CALLS_PER_TURN = 12
HANDLERS = {
    "trip": Trip,
    "flights": Flights,
    "hotels": Hotels,
    "weather": Weather,
    "restaurants": Restaurants,
    "trains": Trains,
    "itinerary": Itinerary,
    "products": Products,
    "housing": Housing,
    "zhihu": Zhihu,
    "visa": lambda: Search("visa"),
    "search": Search,
    "recall": Recall,
    "reference": Reference,
    "listops": ListOps,
    "ratefix": RateFix,
    "digest": Digest,
}
INTRO = {
    "trip": "规划这趟行程",
    "flights": "帮您查机票",
    "hotels": "帮您查酒店",
    "products": "给您推荐合适的商品",
    "itinerary": "安排行程",
    "trains": "帮您查车票",
}


def parse_spec(spec: str) -> tuple[ContextConfig, list[str]]:
    """(context config, flaws) of a `reference[:OPTIONS]` spec."""
    cfg, flaws = ContextConfig(), []
    body = spec.split(":", 1)[1] if ":" in spec else ""
    known = [
        "full",
        "window-N",
        "summary",
        "summary-N",
        "key-info",
        "key-info-N",
        "external-memory",
        "external-memory-K",
        "profile",
        *(f"flaw={f}" for f in FLAWS),
    ]
    for raw in filter(None, (p.strip() for p in body.split(","))):
        name = raw.removeprefix("flaw=")
        if name in FLAWS:
            flaws.append(name)
        elif raw == "full":
            continue
        elif raw == "profile":
            cfg.profile = True
        elif m := re.fullmatch(r"window-(\d+)", raw):
            cfg.window = int(m.group(1))
        elif m := re.fullmatch(r"summary(?:-(\d+))?", raw):
            cfg.summary = int(m.group(1) or SUMMARY_KEEP_TURNS)
        elif m := re.fullmatch(r"key-info(?:-(\d+))?", raw):
            cfg.key_info = max(1, int(m.group(1) or KEY_INFO_KEEP_TURNS))
        elif m := re.fullmatch(r"external-memory(?:-(\d+))?", raw):
            cfg.external_memory = max(1, int(m.group(1) or EXTERNAL_MEMORY_K))
        else:
            raise AgentError(
                f"Unknown option '{raw}' in agent spec '{spec}'.{did_you_mean(raw, known)} "
                f"Options: {', '.join(known)}"
            )
    chosen = [
        n
        for n, v in (("window-N", cfg.window), ("summary", cfg.summary), ("key-info", cfg.key_info))
        if v is not None
    ]
    if len(chosen) > 1:
        raise AgentError(
            f"Agent spec '{spec}': choose one of window-N, summary, key-info, not {' and '.join(chosen)}"
        )
    cfg.ignore_history = "ignore-history" in flaws
    return cfg, flaws


class ReferenceAgent:
    """The deterministic reference agent (see the module docstring for the SPEC options)."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    def __init__(self, spec: str = "reference") -> None:
        self.spec = spec
        self.cfg, self.flaws = parse_spec(spec)
        self.stores = Stores()  # external memory, one store per conversation

    def describe(self) -> dict[str, Any]:
        c = self.cfg
        strategy = (
            "window"
            if c.window is not None
            else "summary"
            if c.summary is not None
            else "key_info"
            if c.key_info is not None
            else "external_memory"
            if c.external_memory is not None
            else "full"
        )
        if c.profile and strategy == "full":
            strategy = "profile"
        kept = next((v for v in (c.window, c.summary, c.key_info) if v is not None), None)
        if kept is None and c.external_memory is not None:
            kept = EXTERNAL_MEMORY_WINDOW
        out: dict[str, Any] = {
            "agent": "reference",
            "context_strategy": strategy,
            "window_turns": kept,
            # key-info keeps the user's facts in the context itself, which is what the seed calls
            # 用户画像注入 (a maintained picture of the user beside the conversation)
            "profile_injection": c.profile or c.key_info is not None,
            "external_memory": c.external_memory is not None,
            "temperature": 0,
            "flaws": list(self.flaws),
        }
        if c.external_memory is not None:
            out["memory_top_k"] = c.external_memory
        return out

    async def respond(self, inp: AgentInput) -> AgentReply:
        store = self.stores.get((inp.case.id, inp.seed)) if self.cfg.external_memory is not None else None
        view = build_view(inp.messages, self.cfg, store)
        message = self.step(inp.messages, inp.tools, inp.turn, view=view)
        # no model is called; prompt_tokens is what this strategy's context would cost one
        return AgentReply(messages=[message], usage=Usage(prompt_tokens=view.tokens()))

    # --- one step ---------------------------------------------------------------------------------
    def step(
        self,
        messages: list[Message],
        tool_schemas: list[dict[str, Any]],
        turn: int = 1,
        *,
        view: View | None = None,
    ) -> Message:
        view = view if view is not None else build_view(messages, self.cfg)
        system = "\n".join(m.content for m in messages if m.role == "system")
        if guarded := screen(view.user_text, view.current, system, tool_schemas, self.flaws, turn):
            return guarded  # someone else's data or the instructions (reference/guard.py)
        slots = view_slots(view)
        tools = {(s.get("function") or s).get("name") for s in tool_schemas}
        text = view.user_text
        asked_now = asked_slots(view.previous_assistant_text())
        details = extract(text, Slots(), view.today, asked=asked_now) != Slots()
        intents = choose(
            text, view.visible_user_messages()[:-1], bool(view.images), details=details, asked=asked_now
        )
        done, n_calls = self._done(view.current)
        if "obey-tool-text" in self.flaws and (ordered := obeyed_calls(view.current, tool_schemas)):
            return self._call_message([("obey", c, False) for c in ordered], turn, n_calls)
        failed = [d for ds in done.values() for d in ds if d.failed]
        if failed and "give-up-on-error" in self.flaws:
            return Message(
                role="assistant", content=f"抱歉，{failed[0].call.name} 出错了，这个请求我暂时无法完成。"
            )

        # A detail is assumed (and said so) once the user said they don't know it, or after we asked twice.
        unsure = bool(
            re.search(r"还没想好|不知道|不清楚|说不准|你推荐|你建议|你看着办|都可以|随便|没想好|不确定", text)
        )
        prev_asked = {s for s in asked_now if unsure or view.times_asked().get(s, 0) >= 2}
        plans: list[tuple[str, Handler, Ctx, list[str]]] = []
        for intent in intents:
            handler = HANDLERS[intent]()
            ctx = self._ctx(view, slots, text, intent, tools, len(intents) > 1)
            missing = self._fill_defaults(handler.missing(ctx), ctx, prev_asked)
            plans.append((intent, handler, ctx, missing))

        calls: list[tuple[str, Call, bool]] = []
        active = [p for p in plans if not p[3]]
        for intent, handler, ctx, _ in active:
            mine = done.get(intent, [])
            for f in [d for d in mine if d.failed and not d.recovery]:
                calls += [(intent, c, True) for c in handler.recover(ctx, f, mine)]
            calls += [
                (intent, c, False) for c in handler.next_calls(ctx, [d for d in mine if not d.recovery])
            ]
        for intent, handler, ctx, missing in plans:
            if missing and not done.get(intent):  # useful work while details are still missing
                calls += [(intent, c, False) for c in handler.partial_calls(ctx)]
        calls = [c for c in calls if c[1][0] in tools]
        if calls and n_calls < MAX_CALLS_PER_TURN:
            return self._call_message(calls, turn, n_calls)
        return Message(role="assistant", content=self._answer(plans, done))

    def _ctx(self, view: View, slots: Slots, text: str, intent: str, tools: set[str], multi: bool) -> Ctx:
        mine = copy.deepcopy(slots)
        clause = clause_for(text, intent) if multi and intent in detect(text) else text
        if multi and clause != text:
            extract(clause, mine, view.today)  # this intent's own cities and dates win
        return Ctx(
            slots=mine,
            today=view.today,
            text=clause,
            memory=view.memory,
            user_messages=view.visible_user_messages(),
            tools=tools,
            flaws=set(self.flaws),
            images=view.images,
            skills=view.skills,
            loaded_skills=view.loaded_skills(),
            assistant_texts=view.assistant_texts(),
            asked_before=set(view.times_asked()),
        )

    def _fill_defaults(self, missing: list[str], ctx: Ctx, prev_asked: set[str]) -> list[str]:
        """Assume what the user could not or would not say; return what must still be asked."""
        assume_all = "no-clarify" in self.flaws
        still: list[str] = []
        for slot in missing:
            if not (assume_all or slot in prev_asked) or not self._default(slot, ctx, silent=assume_all):
                still.append(slot)
        return still

    def _default(self, slot: str, ctx: Ctx, *, silent: bool) -> bool:
        s, note = ctx.slots, ""
        if slot == "origin":
            s.origin, note = ("北京" if s.destination == "上海" else "上海"), "出发地先按上海"
        elif slot == "destination":
            city = COUNTRY_DEFAULT_CITY.get(s.country or "", "上海" if s.origin != "上海" else "北京")
            s.destinations, note = [city], f"目的地先按{city}（第一次去的话最方便）"
        elif slot in ("dates", "checkin"):
            s.start, note = ctx.today + timedelta(days=14), "日期先按两周后"
        elif slot == "duration":
            s.duration, note = 5, "天数先按 5 天"
        elif slot == "party":
            s.party, note = (1 if silent else 2), "人数先按 1 人" if silent else "人数先按 2 人"
        elif slot == "budget":
            note = "预算先按中等档位"
        elif slot == "purpose":
            s.purpose, note = "日常学习办公", "用途先按日常学习办公"
        elif slot == "brand":
            note = "品牌不限"
        else:
            return False
        if not silent:
            ctx.notes.append(note)
        return True

    def _done(self, current: list[Message]) -> tuple[dict[str, list[Done]], int]:
        """Our tool calls in this turn with their results, per intent."""
        results = {m.tool_call_id: m for m in current if m.role == "tool"}
        out: dict[str, list[Done]] = {}
        n = 0
        for m in current:
            for call in m.tool_calls if m.role == "assistant" else []:
                n += 1
                parts = call.id.split("-")
                if len(parts) < 3 or not parts[0].startswith("ref") or call.id not in results:
                    continue
                out.setdefault(parts[1], []).append(Done(call, results[call.id], recovery=parts[2] == "fix"))
        return out, n

    def _call_message(self, calls: list[tuple[str, Call, bool]], turn: int, start: int) -> Message:
        tool_calls = [
            ToolCall(
                id=f"ref{turn}-{intent}-{'fix' if fix else 'step'}-{start + i + 1}", name=name, arguments=args
            )
            for i, (intent, (name, args), fix) in enumerate(calls)
        ]
        return Message(role="assistant", content="", tool_calls=tool_calls)

    def _answer(self, plans: list[tuple[str, Handler, Ctx, list[str]]], done: dict[str, list[Done]]) -> str:
        parts: list[str] = []
        if plans:
            ctx = plans[0][2]
            parts += conflict_notes(ctx.text, ctx.user_messages, ctx.assistant_texts)
        notes = [n for _, _, ctx, missing in plans if not missing for n in ctx.notes]
        if notes:
            parts.append(f"（{'；'.join(dict.fromkeys(notes))}，您可以随时调整。）")
        asks: list[str] = []
        for intent, handler, ctx, missing in plans:
            if missing:
                partial = handler.partial_answer(ctx, done.get(intent, []))
                if partial:
                    parts.append(partial)
                asks += [m for m in missing if m not in asks]
            else:
                answer = handler.answer(ctx, done.get(intent, []))
                if answer:
                    parts.append(answer)
        if asks:
            first = next(i for i, _, _, m in plans if m)
            intro = f"为了{INTRO.get(first, '帮您处理')}，还需要确认几个信息（可以一次告诉我）："
            parts.append(question_block(asks, intro))
        return (
            "\n\n".join(parts)
            or "您好！我可以帮您查机票、酒店、天气、餐厅，规划行程或推荐商品，请告诉我您的需求。"
        )
