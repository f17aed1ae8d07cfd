"""The per-conversation sandbox: tool schemas, system prompt, tool calls (intercepts applied,
calls counted per tool) and skill events. Contract: docs/design.md "Sandbox contract"."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from usersim.cases.environment import EnvState
from usersim.cases.schema import Case
from usersim.core.events import InterceptHit, SkillEvent, ToolEvent
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.lang.resources import resources
from usersim.sandbox.clock import today_of
from usersim.sandbox.injection import inject
from usersim.sandbox.intercepts import apply_intercept, find_intercept, intercept_hit
from usersim.sandbox.mock import answer_mock, mock_schema
from usersim.sandbox.offer import offered_tool_names
from usersim.sandbox.skills.loader import Skill, load_skills
from usersim.sandbox.tools import ToolContext, ToolError, tool_registry

PROMPT_FILE = Path(__file__).parent / "system_prompt.md"
PROMPT_FILES = {"zh": PROMPT_FILE, "en": Path(__file__).parent / "system_prompt.en.md"}
# Section headers of the agent's system prompt, in the case's language.
_HEADERS = {
    "zh": {
        "policy": "## 必须遵守的业务规则",
        "memory": "## 关于用户的记忆",
        "images": "## 用户本轮附带的图片（文字描述）",
        "image": "图片",
        "skills": "## 可用技能（Skills）\n执行技能覆盖的任务前，先调用 load_skill(name) 读取技能全文，再按技能执行。",
    },
    "en": {
        "policy": "## Policy you must follow",
        "memory": "## What you remember about the user",
        "images": "## Images the user attached (text descriptions)",
        "image": "Image",
        "skills": "## Skills\nBefore a task a skill covers, call load_skill(name) to read the whole skill, then follow it.",
    },
}
_CJK = re.compile(r"[\u4e00-\u9fff]")


@lru_cache(maxsize=2)
def _prompt_template(language: str = "zh") -> str:
    return PROMPT_FILES[language].read_text(encoding="utf-8")


def case_language(case: Case) -> str:
    """The language of the agent-facing context: `case.language`, else zh when the case text has
    Chinese characters, else en."""
    if case.language:
        return case.language
    text = " ".join(
        t or "" for t in (case.title, case.goal, case.input.message, case.policy, *case.input.script)
    )
    return "zh" if _CJK.search(text) else "en"


class Sandbox:
    """One conversation's tool world. Build it with `open_sandbox`."""

    def __init__(self, case: Case, *, seed: int = 0, skills_on: bool | None = None) -> None:
        self.case = case
        self.seed = seed
        self.today = today_of(case.context.current_date)
        enabled = case.skills.skill_enabled if skills_on is None else skills_on
        self.skills: list[Skill] = load_skills(case.skills.active_skills) if enabled else []
        self.mocks = {t.name: t for t in case.mock_tools}
        # The domain state of this conversation: a fresh copy of the case's environment.
        self.env: EnvState | None = EnvState(case.environment) if case.environment else None
        env_tools = list(self.env.tools) if self.env else []
        names = offered_tool_names(case, skills_on=bool(self.skills))
        for n in names:
            if n not in tool_registry and n not in self.mocks and n not in env_tools and n != "load_skill":
                raise UnknownNameError(
                    f"Unknown tool '{n}' in case {case.id} field 'tools'.{did_you_mean(n, tool_registry.names())} "
                    f"Available: {', '.join(tool_registry.names())}"
                )
        self.tool_names: list[str] = names
        self._schemas: list[dict[str, Any]] | None = None  # tool_schemas(), built on first use
        self._prompt: str | None = None  # system_prompt(), the same every agent turn
        self.calls: Counter[str] = Counter()
        # The skill list is disclosed up front (name + description); bodies only via load_skill.
        self._events: list[SkillEvent] = [
            SkillEvent(turn=1, skill=s.name, kind="listed") for s in self.skills
        ]

    # --- what the agent is given ---------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The available tools in OpenAI format (case.tools or the default set; + load_skill when skills on).

        Built once per sandbox (one conversation): every agent turn is given the same schemas, and
        a built-in tool's schema is one object for every conversation of the process (at C=128,
        a copy each was 11 MB of the peak): read-only. An adapter that hands them to user code
        gives it a copy (adapters.python_fn)."""
        if self._schemas is None:
            self._schemas = [self._schema(n) for n in self.tool_names]
        return list(self._schemas)

    def _schema(self, name: str) -> dict[str, Any]:
        if name in self.mocks:
            return mock_schema(self.mocks[name])
        if self.env and name in self.env.tools:
            return self.env.tools[name].schema()
        return tool_registry.get(name).shared_schema()

    def state(self) -> dict[str, list[dict[str, Any]]] | None:
        """A copy of the domain state as it stands now (None without an environment)."""
        return self.env.snapshot() if self.env else None

    def system_prompt(self) -> str:
        """Current date, the domain policy, memory entries, image captions and (skills on) the skill
        list, under headers in the case's language; `case.system_prompt` replaces the template.
        Built once per sandbox (one conversation): nothing in it changes while it plays."""
        if self._prompt is None:
            self._prompt = self._system_prompt()
        return self._prompt

    def _system_prompt(self) -> str:
        ctx = self.case.context
        lang = case_language(self.case)
        h = _HEADERS[lang]
        memory = "".join(f"- {m}\n" for m in ctx.memory)
        images = "".join(f"[{h['image']}: {img.caption}]\n" for img in ctx.images)
        skills = "".join(f"- {s.name}: {s.description}\n" for s in self.skills)
        policy = (self.case.policy or "").strip()
        parts = {
            "current_date": self.today.isoformat(),
            "weekday": resources(lang).words("dates", "weekday_names")[self.today.weekday()],
            "policy": f"\n{h['policy']}\n{policy}\n" if policy else "",
            "memory": f"\n{h['memory']}\n{memory}" if memory else "",
            "images": f"\n{h['images']}\n{images}" if images else "",
            "skills": f"\n{h['skills']}\n{skills}" if skills else "",
        }
        template = self.case.system_prompt or _prompt_template(lang)
        if "{policy}" not in template:
            template = template.rstrip() + "\n{policy}"
        return _fill(template, parts).rstrip() + "\n"

    # --- tool calls ------------------------------------------------------------------------------
    async def call(
        self, name: str, arguments: dict[str, Any] | str, *, turn: int, call_number: int | None = None
    ) -> ToolEvent:
        """Run one tool call. Never raises for agent mistakes: unknown tools, bad arguments and tool
        errors (refusals) come back as error results. A bug in a user's python tool raises CaseError
        (the test author's fault, never shown to the agent; usersim.cases.toolcode). `call_number`
        forces the count (the CLI's --call-number)."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                return self._event(turn, name, {}, f"Error: arguments are not valid JSON: {exc.msg}", True)
        if not isinstance(arguments, dict):
            return self._event(turn, name, {}, "Error: arguments must be a JSON object", True)
        if name not in self.tool_names:
            known = name in tool_registry or name in self.mocks
            msg = (
                f"Error: tool '{name}' is not available in this conversation."
                if known
                else f"Error: Unknown tool '{name}'.{did_you_mean(name, self.tool_names)}"
            )
            return self._event(turn, name, arguments, f"{msg} Available: {', '.join(self.tool_names)}", True)
        self.calls[name] = call_number if call_number is not None else self.calls[name] + 1
        number = self.calls[name]
        latency = 0.0
        ic = find_intercept(self.case.tool_intercepts, name, arguments, number)
        hit: InterceptHit | None = None
        if ic is not None:
            started = time.monotonic()
            outcome = await apply_intercept(ic, name)
            latency = ic.latency_s or round(time.monotonic() - started, 3)
            hit = intercept_hit(self.case.tool_intercepts, ic)
            if outcome.result is not None:
                return self._event(
                    turn, name, arguments, outcome.result, outcome.is_error, number, True, latency, hit
                )
        result, is_error = self._run(name, arguments, turn)
        if ic is not None and ic.inject_instruction is not None and hit is not None:
            # prompt injection: the real tool ran (its writes stand); its result carries the text
            done = inject(ic.inject_instruction, result, case_language(self.case))
            result = done.result
            hit = hit.model_copy(
                update={
                    "template": done.template,
                    "position": done.position,
                    "disguise": ic.inject_instruction.disguise,
                    "text": done.text,
                }
            )
        return self._event(turn, name, arguments, result, is_error, number, False, latency, hit)

    def _run(self, name: str, arguments: dict[str, Any], turn: int) -> tuple[str, bool]:
        """The tool's own answer (mock, environment or simulated tool)."""
        if name in self.mocks:
            return answer_mock(self.mocks[name], arguments)
        if self.env and name in self.env.tools:
            return self.env.call(name, arguments)
        ctx = ToolContext(today=self.today, turn=turn, skills=self)
        return tool_registry.get(name).invoke(arguments, ctx)

    def restore(self, events: list[ToolEvent]) -> None:
        """Continue a conversation replayed up to a checkpoint: per-tool call counts resume after the
        calls already in `events` (so intercepts keyed on a call number fire as in the original), and
        the domain state is rebuilt by re-running the environment calls that were not intercepted."""
        for e in events:
            if e.executed_by == "agent":  # the agent's own tool: the sandbox never ran it
                continue
            self.calls[e.name] = max(self.calls[e.name], e.call_number)
            if self.env and e.name in self.env.tools and not e.intercepted:
                self.env.call(e.name, dict(e.arguments))

    def _event(
        self,
        turn: int,
        name: str,
        arguments: dict[str, Any],
        result: str,
        is_error: bool,
        number: int = 0,
        intercepted: bool = False,
        latency: float = 0.0,
        hit: InterceptHit | None = None,
    ) -> ToolEvent:
        return ToolEvent(
            intercept=hit,
            turn=turn,
            call_number=number,
            name=name,
            arguments=arguments,
            result=result,
            is_error=is_error,
            intercepted=intercepted,
            latency_s=latency,
        )

    # --- skills ----------------------------------------------------------------------------------
    def load(self, name: str, turn: int) -> str:
        """load_skill's body: the SKILL.md text of an enabled skill; records a `triggered` event."""
        enabled = {s.name: s for s in self.skills}
        if name not in enabled:
            raise ToolError(
                f"Unknown skill '{name}'.{did_you_mean(name, set(enabled))} Available: {', '.join(enabled)}"
            )
        self._events.append(SkillEvent(turn=turn, skill=name, kind="triggered"))
        return enabled[name].body

    def drain_skill_events(self) -> list[SkillEvent]:
        """Skill events since the last drain (the graph appends them to its state)."""
        events, self._events = self._events, []
        return events


def _fill(template: str, parts: dict[str, str]) -> str:
    """str.format for the known placeholders only: other braces (JSON in a policy) stay as written."""
    return re.sub(r"\{(\w+)\}", lambda m: parts.get(m[1], m[0]), template)


def open_sandbox(case: Case, *, seed: int = 0, skills_on: bool | None = None) -> Sandbox:
    """A fresh sandbox for one conversation of `case`. skills_on=None follows case.skills.skill_enabled;
    True exposes case.skills.active_skills (Group B); False exposes no skills and no load_skill.
    `seed` is kept on the sandbox for the record only: fixtures are seed-free by design, so every trial
    (and every replay) sees the same tool answers for the same calls."""
    return Sandbox(case, seed=seed, skills_on=skills_on)
