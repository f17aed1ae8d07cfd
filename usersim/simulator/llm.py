"""The LLM simulator (`openai:MODEL`): a chat model plays the persona; the framework verifies and records.

The model decides when the conversation ends: a JSON `action` (continue / stop / give_up /
transfer / out_of_scope) or, for models without JSON, plain text ending in ###STOP###,
###TRANSFER### or ###OUT-OF-SCOPE### (the text before the token is the user's last message; the
token never stays in it). A stop is never overruled by keyword heuristics and no line the model
did not write is ever put in the user's mouth: whether the goal was really delivered is the
task-completion judge's call afterwards.

Guards, on every reply: it must parse, must not be empty, must not speak as the assistant, write
both sides or parrot the agent, must stay in the persona's language and under its length cap, must
not state an unknown_info truth (exact or by its numbers) or invent quantities. A bad reply is
regenerated with the problem fed back (never the bad text) up to `max_attempts`, then
SimulatorError (status error, blame simulator). Every decision goes to `SimulatorTurn.events`
(the record's sim_events): retries, rejected outputs and why, accepted stops, give_up with the
patience used, scripted events said or reminded.

SPEC options: temperature, attempts (default 3), max_tokens (default 600 per user turn),
timeout (seconds per call), reveal=sharded (the goal's requirements one per turn, as in "Lost in
Conversation"), base_url, api_key_env.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from usersim.core.events import SimEvent, Usage
from usersim.core.registry import did_you_mean
from usersim.simulator.base import SimulatorError, SimulatorTurn, SimulatorView

# The guards, prompt building and agenda (their language readings, ~0.2 s of imports) load on the
# first simulated turn, inside the methods below: a run's first model request is the agent's, and
# loading the simulator to check its SPEC must not delay it.

Complete = Callable[..., Awaitable[tuple[dict[str, Any], Usage]]]

_ACTIONS = {
    "continue": "continue",
    "stop": "stop",
    "goal_met": "stop",
    "done": "stop",
    "give_up": "give_up",
    "gave_up": "give_up",
    "giveup": "give_up",
    "transfer": "transfer",
    "out_of_scope": "out_of_scope",
    "out-of-scope": "out_of_scope",
}
_STOP_REASON = {
    "stop": "goal_met",
    "give_up": "gave_up",
    "transfer": "transfer",
    "out_of_scope": "out_of_scope",
}
_TOKENS = {
    "STOP": "stop",
    "TRANSFER": "transfer",
    "OUT-OF-SCOPE": "out_of_scope",
    "OUT_OF_SCOPE": "out_of_scope",
}
TOKEN = re.compile(r"#{2,3}\s*(STOP|TRANSFER|OUT[-_ ]OF[-_ ]SCOPE)\s*#{2,3}", re.IGNORECASE)

DEFAULT_MAX_TOKENS = 600  # one user turn; overridable with ?max_tokens=


class BadReply(ValueError):
    """One unusable model reply (regenerated). `kind` is rejected, stop_refused or guard; `guard` names which."""

    def __init__(self, problem: str, *, guard: str | None = None, kind: str = "rejected") -> None:
        super().__init__(problem)
        self.guard = guard
        self.kind = "guard" if guard else kind


def _split_token(text: str) -> tuple[str, str | None]:
    """(text before the first stop token, its action) or (text, None)."""
    match = TOKEN.search(text)
    if not match:
        return text, None
    name = re.sub(r"[\s_]", "-", match.group(1).upper())
    return text[: match.start()].strip(), _TOKENS.get(name, "stop")


def _looks_structured(text: str) -> bool:
    """A message that is itself a JSON object or list, or a Python dict/list repr (a weak model that
    nested its answer): `{'description': {'action_code': 'continue'}}`."""
    t = text.strip()
    return len(t) > 1 and (t[0], t[-1]) in {("{", "}"), ("[", "]")}


def parse_reply(content: str | None) -> tuple[str, str, str]:
    """(message, action, reason) from the model's JSON or plain text with an optional stop token."""
    text = (content or "").strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise BadReply("empty output")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if text.startswith("{"):  # JSON cut short (max_tokens) or malformed: never sent as the user's words
            raise BadReply(f"unparsable JSON ({exc.msg})") from None
        message, token_action = _split_token(text)  # models without JSON mode still give usable text
        return message, token_action or "continue", "plain-text stop token" if token_action else ""
    if not isinstance(data, dict):
        raise BadReply(f"expected a JSON object, got {type(data).__name__}")
    action = _ACTIONS.get(str(data.get("action", "continue")).strip().lower())
    if action is None:
        raise BadReply(
            f"unknown action {data.get('action')!r} (use continue, stop, give_up, transfer or out_of_scope)"
        )
    raw = data.get("message")
    if raw is None and action == "continue":
        raise BadReply(f"no 'message' field in the JSON object (keys: {', '.join(map(str, data)) or 'none'})")
    if raw is not None and not isinstance(raw, str):  # a nested object is data, never the user's words
        raise BadReply(f"'message' must be a string, got a JSON {type(raw).__name__}")
    if _looks_structured(raw or ""):
        raise BadReply("'message' holds a data structure, not words the user says")
    message, token_action = _split_token((raw or "").strip())
    if token_action and action == "continue":
        action = token_action
    return message, action, str(data.get("reason") or "")


SPEC_OPTIONS = {"temperature", "attempts", "base_url", "api_key_env", "max_tokens", "timeout", "reveal"}
REVEAL_MODES = {"full", "sharded"}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """(model, options) of `openai:MODEL?temperature=0.3&attempts=5&max_tokens=600&timeout=60&base_url=URL&api_key_env=VAR`."""
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

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

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
            self.max_tokens = int(options.get("max_tokens", DEFAULT_MAX_TOKENS))
            self.timeout = float(options["timeout"]) if "timeout" in options else None
            self.reveal = options.get("reveal", "full")
            if self.reveal not in REVEAL_MODES:
                raise ValueError("reveal")
        except ValueError:
            raise ValueError(
                f"simulator SPEC '{spec}': attempts and max_tokens must be integers, "
                "temperature and timeout numbers, reveal full or sharded"
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
        extra: dict[str, Any] = {"max_tokens": self.max_tokens}
        if self.timeout is not None:
            extra["timeout"] = self.timeout
        if self.base_url or self.api_key:
            extra.update(base_url=self.base_url, api_key=self.api_key)
        try:
            reply, usage = await complete(
                model=self.model,
                messages=messages,
                **extra,
                temperature=self.temperature,
                response_format={"type": "json_object"},
                seed=seed,
                role="simulator",
            )
        except SimulatorError:
            raise
        except Exception as exc:  # LLMCallError after the client's own retries
            status = getattr(exc, "status", None)
            outage = status is None or status == 429 or (isinstance(status, int) and status >= 500)
            raise SimulatorError(f"simulator model call failed ({self.spec}): {exc}", outage=outage) from exc
        return reply.get("content"), usage

    def _check(self, view: SimulatorView, message: str, action: str) -> None:
        """Raise BadReply for an output the framework cannot use as this user's turn."""
        from usersim.simulator.guards import (
            assistant_voice,
            both_sides,
            invented,
            language_switch,
            leak,
            parroting,
            too_long,
        )

        if action == "continue" and not message:
            raise BadReply("empty message")
        if action != "continue" and not any(m.role == "assistant" for m in view.transcript):
            raise BadReply(f"chose {action} before the assistant said anything", kind="stop_refused")
        if not message:
            return
        p = view.persona
        if found := assistant_voice(message):
            raise BadReply(f"broke character (spoke as the assistant: '{found}')", guard="character")
        if found := both_sides(message):
            raise BadReply(f"broke character (wrote both sides: '{found}')", guard="character")
        last_agent = next(
            (m.content for m in reversed(view.transcript) if m.role == "assistant" and m.content), None
        )
        if (ratio := parroting(message, last_agent)) is not None:
            raise BadReply(f"broke character (parroted the assistant, similarity {ratio})", guard="character")
        if found := language_switch(message, p.language):
            raise BadReply(found, guard="language")
        if found := too_long(p, message):
            raise BadReply(f"too long: {found}", guard="length")
        context = [view.opening_message or ""] + [m.content for m in view.transcript]
        if leak(p, message, context):  # the reason names the truth: never fed back, never recorded verbatim
            raise BadReply("stated something the user cannot know (unknown_info)", guard="leak")
        if found := invented(p, message, context, view.goal):
            raise BadReply(f"invented a fact: {found}", guard="invented")

    def _stop_events(self, view: SimulatorView, action: str, reason: str) -> list[SimEvent]:
        from usersim.simulator.agenda import PATIENCE_BY_TRAIT
        from usersim.simulator.llm_prompt import current_constraints
        from usersim.simulator.signals import undelivered

        turn = view.turn
        if action == "give_up":
            p = view.persona
            patience = p.stop_rules.patience_turns or PATIENCE_BY_TRAIT[p.traits.patience]
            replies = sum(1 for m in view.transcript if m.role == "assistant" and m.content)
            return [
                SimEvent(
                    turn=turn,
                    kind="give_up",
                    detail=f"model gave up after {replies} agent repl{'y' if replies == 1 else 'ies'} "
                    f"(persona patience {patience}{', before it ran out' if replies < patience else ''}): "
                    f"{reason or 'no reason given'}",
                )
            ]
        detail = f"model chose {action} ({_STOP_REASON[action]}): {reason or 'no reason given'}"
        if action == "stop":
            texts = [m.content for m in view.transcript if m.role == "assistant" and m.content]
            missing = undelivered(view.persona.goal, texts, current_constraints(view.persona, turn))
            if missing:  # informational only: the model's decision stands
                detail += f"; keyword heuristic does not see {', '.join(missing)} (left to the task-completion judge)"
        return [SimEvent(turn=turn, kind="stop_accepted", detail=detail)]

    def _event_events(self, view: SimulatorView, message: str) -> list[SimEvent]:
        """Due scripted events this turn said, and those still pending (reminded next turn)."""
        if not view.persona.events:  # nothing can be due (and the opening turn imports nothing more)
            return []
        from usersim.simulator.llm_prompt import pending_events, trigger
        from usersim.simulator.scripted import said_in, silent

        out = []
        for status in pending_events(view):
            why = trigger(status, view.transcript)
            cause = f" ({why})" if why else ""  # a conditional event: what set it off
            if silent(status.event) or (message and said_in(status.event, message)):
                late = "" if status.due == view.turn else f" (due turn {status.due})"
                out.append(
                    SimEvent(
                        turn=view.turn, kind="event_said", detail=f"{status.describe()} said{late}{cause}"
                    )
                )
            else:
                out.append(
                    SimEvent(
                        turn=view.turn,
                        kind="event_reminded",
                        detail=f"{status.describe()} due turn {status.due}{cause}, not said yet: "
                        "the model is reminded",
                    )
                )
        return out

    async def next_turn(self, view: SimulatorView) -> SimulatorTurn:
        """The user's next move; raises SimulatorError after `max_attempts` unusable replies."""
        if view.turn <= 1 and view.opening_message:
            return SimulatorTurn(
                message=view.opening_message,
                reason="opening message",
                meta={"attempts": 0},
                events=self._event_events(view, view.opening_message),
            )
        from usersim.simulator.llm_prompt import build_messages, prompt_template

        messages = build_messages(view, sharded=self.reveal == "sharded")
        usage = Usage()
        problems: list[str] = []
        events: list[SimEvent] = []
        for attempt in range(self.max_attempts):
            try:
                content, u = await self._call(messages, view.seed + attempt)
            except SimulatorError as exc:  # keep what was tried before the call failed
                events.append(
                    SimEvent(turn=view.turn, kind="rejected", detail=f"attempt {attempt + 1}: {exc}")
                )
                raise SimulatorError(str(exc), events=events, outage=exc.outage) from exc
            usage = usage.add(u)
            try:
                message, action, reason = parse_reply(content)
                self._check(view, message, action)
            except BadReply as exc:
                problems.append(str(exc))
                kind = exc.kind
                label = f"{exc.guard}: " if exc.guard else ""
                events.append(
                    SimEvent(turn=view.turn, kind=kind, detail=f"attempt {attempt + 1}: {label}{exc}")
                )
                if attempt + 1 < self.max_attempts:
                    events.append(
                        SimEvent(
                            turn=view.turn,
                            kind="retry",
                            detail=f"regenerating (attempt {attempt + 2} of {self.max_attempts})",
                        )
                    )
                # feed the problem back (never the bad reply: it may hold an unknown_info truth);
                # the attempt number also changes the LLM cache key
                retry = prompt_template("retry").substitute(problem=exc, attempt=attempt + 2)
                messages = messages + [{"role": "user", "content": retry}]
                continue
            meta = {"attempts": attempt + 1, "problems": problems}
            if action != "continue":
                events += self._event_events(view, message)
                events += self._stop_events(view, action, reason)
                return SimulatorTurn(
                    message=message or None,
                    stop=_STOP_REASON[action],  # type: ignore[arg-type]
                    closing=bool(message),
                    reason=reason or _STOP_REASON[action].replace("_", " "),
                    usage=usage,
                    meta=meta,
                    events=events,
                )
            events += self._event_events(view, message)
            return SimulatorTurn(message=message, reason=reason, usage=usage, meta=meta, events=events)
        raise SimulatorError(
            f"simulator {self.spec} produced no valid turn in {self.max_attempts} attempts "
            f"(turn {view.turn}): {'; '.join(problems)}",
            events=events,
        )
