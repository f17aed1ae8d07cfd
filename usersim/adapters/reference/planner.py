"""The pieces every intent handler shares: the step context, tool calls made so far, questions.

A handler says which slots it still needs (`missing`), which tool calls come next given the
calls already answered in this turn (`next_calls`, stage by stage, so dependent steps run in
order), how to recover from a failed call, and how to answer from the results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from usersim.adapters.reference.render import load
from usersim.adapters.reference.slots import Slots
from usersim.core.messages import Message, ToolCall

QUESTIONS = {
    "origin": "出发地：从哪个城市出发？",
    "destination": "目的地：想去哪个城市？",
    "dates": "日期：大概哪天出发？",
    "duration": "天数：计划玩几天？",
    "party": "人数：一共几位出行？",
    "budget": "预算：大概多少？",
    "purpose": "用途：主要用来做什么（办公、学习、游戏、剪视频）？",
    "brand": "品牌：有没有偏好或不想要的品牌？",
    "product": "商品：您指的是哪件商品？",
    "checkin": "日期：入住和离店分别是哪天？",
    "entry": "飞入城市：这趟先飞入（入境）哪个城市？",
    "exit": "飞出城市：最后从哪个城市离开（飞出）回国？",
}


@dataclass
class Done:
    """One tool call this agent made in the current turn, with its result."""

    call: ToolCall
    result: Message
    recovery: bool = False  # made to work around a failed call

    @property
    def data(self) -> Any:
        return load(self.result.content)

    @property
    def failed(self) -> bool:
        if self.result.is_error:
            return True
        data = self.data
        if isinstance(data, dict) and (data.get("error") or data.get("status") == "ZERO_RESULTS"):
            return True
        return self.result.content.strip().lower().startswith("error")


@dataclass
class Ctx:
    """What a handler may read for one step."""

    slots: Slots
    today: date
    text: str  # the clause of the current message that carries this intent
    memory: list[str]
    user_messages: list[str]  # visible user messages, oldest first
    tools: set[str]
    flaws: set[str]
    images: list[str] = field(default_factory=list)  # captions of images the user attached
    skills: list[str] = field(default_factory=list)  # skills the sandbox lists
    loaded_skills: set[str] = field(default_factory=set)  # skills loaded earlier in the conversation
    assistant_texts: list[str] = field(default_factory=list)  # visible assistant replies, oldest first
    asked_before: set[str] = field(default_factory=set)  # slots our earlier replies asked about
    notes: list[str] = field(default_factory=list)  # assumptions made (said in the answer)

    def has(self, tool: str) -> bool:
        return tool in self.tools

    def skill_stage(self, skill: str, done: list[Done]) -> list[list[Call]]:
        """[[load_skill(skill)]] when the skill is listed and not loaded yet (progressive disclosure)."""
        if skill not in self.skills or not self.has("load_skill"):
            return []
        if skill in self.loaded_skills and not any(d.call.name == "load_skill" for d in done):
            return []
        return [[("load_skill", {"name": skill})]]


Call = tuple[str, dict[str, Any]]


class Handler:
    """Base intent handler: override `missing`, `stages`, `answer` (and `partial_*` if useful)."""

    name = "base"

    def missing(self, ctx: Ctx) -> list[str]:
        return []

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        """All stages of tool calls; later stages may depend on the results in `done`."""
        return []

    def next_calls(self, ctx: Ctx, done: list[Done]) -> list[Call]:
        """The first stage not yet issued (a stage counts as issued when its tools were called)."""
        issued = [(d.call.name) for d in done]
        position = 0
        for stage in self.stages(ctx, done):
            names = [tool for tool, _ in stage]
            if issued[position : position + len(names)] == names:
                position += len(names)
                continue
            return stage
        return []

    def recover(self, ctx: Ctx, failed: Done, done: list[Done]) -> list[Call]:
        """Calls that work around a failed call (default: one web_search fallback)."""
        if failed.call.name == "web_search" or not ctx.has("web_search"):
            return []
        if any(
            d.call.name == "web_search" and d.call.arguments.get("query") == self.fallback_query(ctx)
            for d in done
        ):
            return []
        return [("web_search", {"query": self.fallback_query(ctx)})]

    def fallback_query(self, ctx: Ctx) -> str:
        return ctx.text

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        return ""

    def partial_calls(self, ctx: Ctx) -> list[Call]:
        """Calls worth making while slots are still missing (e.g. a general overview)."""
        return []

    def partial_answer(self, ctx: Ctx, done: list[Done]) -> str:
        return ""


def error_note(done: list[Done], label: str) -> str:
    """A sentence telling the user which tool failed and why."""
    failed = [d for d in done if d.failed]
    if not failed:
        return ""
    detail = failed[0].result.content.strip().replace("\n", " ")[:100]
    return f"{label}暂时没能查到结果（工具返回错误：{detail}）。"


def question_block(slots_needed: list[str], intro: str) -> str:
    lines = [intro] + [f"{i}. {QUESTIONS[s]}" for i, s in enumerate(slots_needed, 1)]
    return "\n".join(lines)
