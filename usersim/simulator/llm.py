"""The LLM simulator (`openai:MODEL`): a chat model plays the persona, with guards.

Guards, each checked on every reply: a reply must parse, must not be empty, must not break
character ("As an AI assistant", "有什么可以帮您"), must not state an unknown_info truth. Bad replies
are regenerated (with the problem fed back) up to `max_attempts`, then SimulatorError. A STOP
before every goal.required item was delivered is refused once (the model is told what is
missing); a second premature STOP becomes a nudge ("那酒店呢？") and the conversation goes on.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from usersim.core.events import Usage
from usersim.core.registry import did_you_mean
from usersim.simulator.base import SimulatorError, SimulatorTurn, SimulatorView
from usersim.simulator.llm_prompt import build_messages, current_constraints, prompt_template
from usersim.simulator.phrasing import item_label, templates
from usersim.simulator.signals import leaked_truth, role_flip, undelivered

Complete = Callable[..., Awaitable[tuple[dict[str, Any], Usage]]]

_ACTIONS = {
    "continue": "continue",
    "stop": "stop",
    "goal_met": "stop",
    "done": "stop",
    "give_up": "give_up",
    "gave_up": "give_up",
    "giveup": "give_up",
}


class BadReply(ValueError):
    """One unusable model reply (regenerated)."""


def parse_reply(content: str | None) -> tuple[str, str, str]:
    """(message, action, reason) from the model's JSON; plain text counts as a `continue` message."""
    text = (content or "").strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise BadReply("empty output")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text, "continue", ""  # models without JSON mode still give usable text
    if not isinstance(data, dict):
        raise BadReply(f"expected a JSON object, got {type(data).__name__}")
    action = _ACTIONS.get(str(data.get("action", "continue")).strip().lower())
    if action is None:
        raise BadReply(f"unknown action {data.get('action')!r} (use continue, stop or give_up)")
    return str(data.get("message") or "").strip(), action, str(data.get("reason") or "")


SPEC_OPTIONS = {"temperature", "attempts", "base_url", "api_key_env"}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """(model, options) of `openai:MODEL?temperature=0.3&attempts=5&base_url=URL&api_key_env=VAR`."""
    body = spec.split(":", 1)[1] if ":" in spec else ""
    model, _, query = body.partition("?")
    if not model:
        raise ValueError(f"simulator SPEC '{spec}' needs a model name, e.g. openai:gpt-4o-mini")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    for key in options:
        if key not in SPEC_OPTIONS:
            raise ValueError(
                f"Unknown option '{key}' in simulator SPEC '{spec}'.{did_you_mean(key, SPEC_OPTIONS)} "
                f"Options: {', '.join(sorted(SPEC_OPTIONS))}"
            )
    return model, options


class LLMSimulator:
    """SPEC `openai:MODEL[?options]`; `complete` is injectable (tests script it; default chat_completion)."""

    def __init__(
        self,
        spec: str,
        *,
        complete: Complete | None = None,
        max_attempts: int = 3,
        temperature: float | None = 0.7,
    ) -> None:
        self.spec = spec
        self.model, options = parse_spec(spec)
        try:
            self.max_attempts = int(options.get("attempts", max_attempts))
            self.temperature = float(options["temperature"]) if "temperature" in options else temperature
        except ValueError:
            raise ValueError(
                f"simulator SPEC '{spec}': attempts must be an integer, temperature a number"
            ) from None
        self.base_url = options.get("base_url") or None
        # the key itself never goes into a SPEC (SPECs are recorded with results): name its variable
        self.api_key = os.environ.get(options["api_key_env"]) if "api_key_env" in options else None
        self._complete = complete

    async def _call(self, messages: list[dict[str, str]], seed: int) -> tuple[str | None, Usage]:
        complete = self._complete
        if complete is None:
            from usersim.llm.client import chat_completion

            complete = chat_completion
        try:
            endpoint = (
                {"base_url": self.base_url, "api_key": self.api_key} if self.base_url or self.api_key else {}
            )
            reply, usage = await complete(
                model=self.model,
                messages=messages,
                **endpoint,
                temperature=self.temperature,
                response_format={"type": "json_object"},
                seed=seed,
                role="simulator",
            )
        except SimulatorError:
            raise
        except Exception as exc:  # LLMCallError after the client's own retries
            raise SimulatorError(f"simulator model call failed ({self.spec}): {exc}") from exc
        return reply.get("content"), usage

    def _check(self, view: SimulatorView, message: str, action: str) -> None:
        if action == "continue" and not message:
            raise BadReply("empty message")
        flipped = role_flip(message)
        if flipped:
            raise BadReply(f"broke character (spoke as the assistant: '{flipped}')")
        leaked = leaked_truth(view.persona, message)
        if leaked:
            raise BadReply("stated something the user cannot know (unknown_info)")

    def _missing(self, view: SimulatorView) -> list[str]:
        texts = [m.content for m in view.transcript if m.role == "assistant"]
        return undelivered(view.persona.goal, texts, current_constraints(view.persona, view.turn))

    def _nudge(self, view: SimulatorView, missing: list[str]) -> str:
        lang = view.persona.language
        options = templates(lang)["continue"]
        rng = random.Random(f"usersim-llm-nudge|{view.case_id}|{view.seed}|{view.turn}")
        return options[rng.randrange(len(options))].format(item=item_label(lang, missing[0]))

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        """The user's next move; raises SimulatorError after `max_attempts` unusable replies."""
        if view.turn <= 1 and view.opening_message:
            return SimulatorTurn(message=view.opening_message, reason="opening message", meta={"attempts": 0})
        messages = build_messages(view)
        usage = Usage()
        problems: list[str] = []
        refused_stop = False
        attempt = 0
        while attempt < self.max_attempts:
            content, u = await self._call(messages, view.seed + attempt + (100 if refused_stop else 0))
            usage = usage.add(u)
            try:
                message, action, reason = parse_reply(content)
                self._check(view, message, action)
            except BadReply as exc:
                problems.append(str(exc))
                attempt += 1
                # feed the problem back (never the bad reply: it may hold an unknown_info truth);
                # the attempt number also changes the LLM cache key
                retry = prompt_template("retry").substitute(problem=exc, attempt=attempt + 1)
                messages = messages + [{"role": "user", "content": retry}]
                continue
            meta = {"attempts": attempt + 1, "problems": problems, "refused_stop": refused_stop}
            if action == "give_up":
                return SimulatorTurn(
                    message=message or None,
                    stop="gave_up",
                    reason=reason or "gave up",
                    usage=usage,
                    meta=meta,
                )
            if action == "stop":
                missing = self._missing(view)
                if not missing:
                    return SimulatorTurn(
                        message=message or None,
                        stop="goal_met",
                        reason=reason or "goal met",
                        usage=usage,
                        meta=meta,
                    )
                if refused_stop:  # second premature stop: keep the user in the conversation
                    meta["nudged"] = missing
                    return SimulatorTurn(
                        message=self._nudge(view, missing),
                        reason=f"refused premature stop: not delivered yet: {', '.join(missing)}",
                        usage=usage,
                        meta=meta,
                    )
                refused_stop = True
                messages = messages + [
                    {"role": "assistant", "content": content or ""},
                    {
                        "role": "user",
                        "content": prompt_template("refuse_stop").substitute(missing=", ".join(missing)),
                    },
                ]
                continue
            return SimulatorTurn(message=message, reason=reason, usage=usage, meta=meta)
        raise SimulatorError(
            f"simulator {self.spec} produced no valid turn in {self.max_attempts} attempts "
            f"(turn {view.turn}): {'; '.join(problems)}"
        )
