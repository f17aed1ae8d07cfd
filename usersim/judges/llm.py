"""LLM plumbing shared by the model-based judges: prompts, the `complete` callable, and
structured output with retries and repair (never a crash, never a silent pass)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from string import Template
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from usersim.core.events import Usage

# messages (OpenAI format) -> the assistant's text. Tests inject a scripted one.
Complete = Callable[[list[dict[str, Any]]], Awaitable[str]]
M = TypeVar("M", bound=BaseModel)

PROMPTS = Path(__file__).parent / "prompts"
MAX_ATTEMPTS = 3  # first answer + two repairs


def prompt(name: str, **values: Any) -> str:
    """Fill judges/prompts/<name>.md ($placeholders; JSON braces stay literal)."""
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8")).safe_substitute(
        {k: str(v) for k, v in values.items()}
    )


def model_name(spec: str) -> str:
    """openai:gpt-4o-mini -> gpt-4o-mini (a bare name is taken as is)."""
    return spec.split(":", 1)[1] if spec.startswith("openai:") else spec


class ModelComplete:
    """A `complete` that calls the judge model through adapters.openai_client (OPENAI_BASE_URL),
    at temperature 0 in JSON mode, and adds up its token usage in `.usage` (role "judge")."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.usage = Usage()

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        from usersim.llm.client import chat_completion

        message, usage = await chat_completion(
            model=model_name(self.spec),
            messages=messages,
            temperature=0,
            response_format={"type": "json_object"},
            role="judge",
        )
        self.usage = self.usage.add(usage)
        return message.get("content") or ""


def model_complete(spec: str) -> Complete:
    """The default `complete` for a judge model SPEC such as openai:gpt-4o-mini."""
    return ModelComplete(spec)


class JudgeModelError(Exception):
    """The judge model gave no usable answer; the message names the model and the last problem."""


def extract_json(text: str) -> Any:
    """The JSON object in a reply, tolerating code fences and prose around it."""
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    if fence:
        body = fence.group(1).strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the reply contains no JSON object") from None
        try:
            return json.loads(body[start : end + 1])
        except json.JSONDecodeError as exc:
            raise ValueError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from None


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errs = exc.errors()[:3]
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}" for e in errs)
    return str(exc)


async def ask_structured(
    complete: Complete,
    messages: list[dict[str, Any]],
    schema: type[M],
    *,
    judge_model: str,
    check: Callable[[M], str | None] | None = None,
    attempts: int = MAX_ATTEMPTS,
) -> M:
    """Ask, parse into `schema`, and on malformed output ask the model to repair its answer.

    `check(parsed)` may return a problem text (e.g. criteria missing) that triggers a repair too;
    if the last attempt is still incomplete but parses, it is returned (callers mark the gaps).
    Raises JudgeModelError naming the model after `attempts` unusable replies or a failed call.
    """
    convo = list(messages)
    last_problem = ""
    parsed_incomplete: M | None = None
    for attempt in range(attempts):
        try:
            reply = await complete(convo)
        except Exception as exc:  # LLMCallError and transport errors: report, never crash the batch
            raise JudgeModelError(f"judge model {judge_model} call failed: {exc}") from exc
        try:
            parsed = schema.model_validate(extract_json(reply))
        except (ValueError, ValidationError) as exc:
            last_problem = _problem(exc)
            missing = ""
        else:
            gap = check(parsed) if check else None
            if not gap:
                return parsed
            parsed_incomplete, last_problem, missing = parsed, gap, gap
        if attempt + 1 < attempts:
            convo = convo + [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": prompt("repair", error=last_problem, missing=missing)},
            ]
    if parsed_incomplete is not None:
        return parsed_incomplete
    raise JudgeModelError(
        f"judge model {judge_model} returned malformed output {attempts} times; last problem: {last_problem}"
    )
