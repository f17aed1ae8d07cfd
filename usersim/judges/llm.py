"""LLM plumbing shared by the model-based judges: prompts, the `complete` callable, and
structured output with retries and repair (never a crash, never a silent pass)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from string import Template
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from usersim.core.events import Usage
from usersim.core.registry import did_you_mean

# messages (OpenAI format) -> the assistant's text. Tests inject a scripted one.
Complete = Callable[[list[dict[str, Any]]], Awaitable[str]]
M = TypeVar("M", bound=BaseModel)

PROMPTS = Path(__file__).parent / "prompts"
MAX_ATTEMPTS = 3  # first answer + two repairs


def prompt(name: str, **values: Any) -> str:
    """Fill judges/prompts/<name>.md ($placeholders; JSON braces stay literal)."""
    return _template(name).safe_substitute({k: str(v) for k, v in values.items()})


@functools.lru_cache(maxsize=64)
def _template(name: str) -> Template:
    """A prompt file, read once per process (a package file: every judged conversation fills it)."""
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8"))


DEFAULT_CONTEXT = 32_000  # judge context window assumed when the spec gives no ?context=
DEFAULT_ANSWER_TOKENS = 2_000  # room kept for the answer without ?max_tokens= (the client's judge default)
SAMPLING_TEMPERATURE = 0.7  # used with --judge-samples > 1 unless ?temperature= says otherwise
JUDGE_OPTIONS = {"context", "max_tokens", "temperature"}


class JudgeSpec(BaseModel):
    """A judge model SPEC `openai:MODEL?context=32k&max_tokens=1500&temperature=0` taken apart.
    The options configure usersim; only MODEL is sent to the endpoint."""

    model_config = ConfigDict(extra="forbid")

    spec: str = Field(description="The SPEC as given.")
    model: str = Field(description="The model name sent to the endpoint (no options).")
    context: int = Field(default=DEFAULT_CONTEXT, description="The judge model's context window, tokens.")
    max_tokens: int | None = Field(default=None, description="Answer token limit sent with each call.")
    temperature: float | None = Field(default=None, description="Sampling temperature override.")

    @property
    def answer_reserve(self) -> int:
        """Tokens kept free for the answer inside the context window."""
        return self.max_tokens or DEFAULT_ANSWER_TOKENS


def _size(spec: str, key: str, value: str) -> int:
    """32k / 32K / 32000 / 1.5k -> tokens; anything else is an error naming the spec."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kK]?)\s*", value)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(
            f"Option '{key}={value}' in judge spec '{spec}' must be a token count such as 32k or 16000"
        )
    return int(float(m.group(1)) * (1000 if m.group(2) else 1))


def parse_judge_spec(spec: str) -> JudgeSpec:
    """openai:MODEL?context=32k -> JudgeSpec; unknown options are an error with a suggestion."""
    body = spec.split(":", 1)[1] if spec.startswith("openai:") else spec
    model, _, query = body.partition("?")
    if not model.strip():
        raise ValueError(f"Judge spec '{spec}' needs a model name, e.g. 'openai:gpt-4o-mini'")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    for key in options:
        if key not in JUDGE_OPTIONS:
            raise ValueError(
                f"Unknown option '{key}' in judge spec '{spec}'.{did_you_mean(key, JUDGE_OPTIONS)} "
                f"Options: {', '.join(sorted(JUDGE_OPTIONS))}"
            )
    out: dict[str, Any] = {"spec": spec, "model": model.strip()}
    if options.get("context"):
        out["context"] = _size(spec, "context", options["context"])
    if options.get("max_tokens"):
        out["max_tokens"] = _size(spec, "max_tokens", options["max_tokens"])
    if options.get("temperature"):
        try:
            out["temperature"] = float(options["temperature"])
        except ValueError:
            raise ValueError(
                f"Option 'temperature={options['temperature']}' in judge spec '{spec}' must be a number"
            ) from None
    return JudgeSpec(**out)


def judge_specs(judge_model: str | None) -> list[str]:
    """The judge models of a run: `--judge-model` may be repeated (an ensemble), stored comma-joined."""
    return [s.strip() for s in (judge_model or "").split(",") if s.strip()]


def model_name(spec: str) -> str:
    """openai:gpt-4o-mini?context=32k -> gpt-4o-mini (a bare name is taken as is)."""
    return parse_judge_spec(spec).model


class ModelComplete:
    """A `complete` that calls the judge model through usersim.llm.client (OPENAI_BASE_URL) in JSON
    mode and adds up its token usage in `.usage` (role "judge"). `sample` is the sample index of
    --judge-samples: each index has its own cache key, so a rerun reuses every sample and repeated
    samples never collapse into one cached answer. One sample runs at temperature 0; several at
    SAMPLING_TEMPERATURE (or the spec's ?temperature=)."""

    def __init__(self, spec: str, *, sample: int = 0, samples: int = 1) -> None:
        self.spec = spec
        self.parsed = parse_judge_spec(spec.split(",")[0])
        self.sample = sample
        self.samples = samples
        self.usage = Usage()

    @property
    def temperature(self) -> float:
        if self.parsed.temperature is not None:
            return self.parsed.temperature
        return 0.0 if self.samples <= 1 else SAMPLING_TEMPERATURE

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        from usersim.llm.client import chat_completion

        message, usage = await chat_completion(
            model=self.parsed.model,
            messages=messages,
            temperature=self.temperature,
            response_format={"type": "json_object"},
            role="judge",
            max_tokens=self.parsed.max_tokens,
            sample=self.sample,
        )
        self.usage = self.usage.add(usage)
        return message.get("content") or ""


def model_complete(spec: str) -> Complete:
    """The default `complete` for a judge model SPEC such as openai:gpt-4o-mini (the first model of
    an ensemble for judges that use one model)."""
    return ModelComplete(judge_specs(spec)[0] if judge_specs(spec) else spec)


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
    check_repairs: int = 1,
) -> M:
    """Ask, parse into `schema`, and on malformed output ask the model to repair its answer.

    `check(parsed)` may return a problem text (criteria missing or duplicated, evidence turns that
    do not exist) that triggers a repair too, at most `check_repairs` times; after that the answer
    that parses is returned as it is (callers turn the remaining gaps into `error` verdicts).
    Raises JudgeModelError naming the model after `attempts` unusable replies or a failed call.
    """
    convo = list(messages)
    last_problem = ""
    parsed_incomplete: M | None = None
    check_failures = 0
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
            parsed_incomplete, last_problem = parsed, gap
            missing = (
                "Answer every id listed above exactly once, cite only indexes that appear in the "
                "transcript, and quote the transcript word for word."
            )
            check_failures += 1
            if check_failures > check_repairs:
                return parsed
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
