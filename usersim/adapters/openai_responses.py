"""`openai-responses:MODEL` — a model behind the OpenAI Responses API (`POST /v1/responses`) as the
agent under test, through the `openai` package's `client.responses.create`.

One `respond` is one Responses call, like the chat adapter: the sandbox's system prompt goes in
`instructions` (resent every call: the API does not carry it over), the sandbox tools as flat
function tools (`{"type": "function", "name", "description", "parameters"}`), and the reply's
`function_call` items become tool calls that the harness runs through usersim's sandbox (intercepts,
tool trace, state); their results go back as `function_call_output` items on the next call, until
the model answers with a message.

Conversation state: by default each call chains on the previous one with `previous_response_id`
and sends only the new items (the user's message, or the tool results). The adapter remembers
which response answered which conversation prefix (a hash of the messages), so one agent serves
many concurrent conversations and a branch or a resimulated turn picks the right response; a
conversation it has not seen (a static case's history) starts a new chain with its whole input.
`?state=full` sends the whole conversation every call and stores nothing (`store=false`).

Reasoning items (`type: reasoning`) never reach the transcript, so the simulated user and the
judges do not see them: they are dropped. In chained mode the server keeps them with the
response; in full mode they are not replayed. Their tokens count in the output tokens, which are
recorded with the input tokens in the run's agent usage like the chat adapter's.

Options (spec query): `base_url`, `api_key_env` (the env var holding the key, never the key),
`temperature`, `max_tokens` (sent as `max_output_tokens`), `timeout` (seconds per call),
`reasoning` (effort: `low` / `medium` / `high`), `state` (`chain`, default, or `full`).

    openai-responses:gpt-4.1-mini?temperature=0
    openai-responses:o4-mini?reasoning=low&state=full
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from typing import Any

import openai

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput, AgentReply
from usersim.adapters.convert import parse_arguments
from usersim.adapters.spec import model_options, split_spec
from usersim.adapters.threads import Threads
from usersim.core.events import Usage
from usersim.core.messages import Message, ToolCall
from usersim.core.secrets import redact
from usersim.core.turns import away
from usersim.llm.client import _client, _env_float, _retry_after, _server_message, resolve_endpoint
from usersim.llm.prices import cost_usd

OPTIONS = {"base_url", "api_key_env", "temperature", "max_tokens", "timeout", "reasoning", "state"}
_NO_RETRY = {400, 401, 403, 404, 422}


def responses_tools(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions tool schemas in the Responses API's flat function-tool shape."""
    out = []
    for schema in schemas:
        fn = schema.get("function", schema)
        out.append(
            {
                "type": "function",
                "name": fn["name"],
                "description": fn.get("description") or "",
                "parameters": fn.get("parameters") or {"type": "object", "properties": {}},
                "strict": False,  # sandbox schemas have optional parameters: strict mode rejects them
            }
        )
    return out


def input_items(messages: list[Message]) -> list[dict[str, Any]]:
    """Conversation messages as Responses input items (no ids: they would tie the items to
    stored reasoning items the adapter does not replay)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "user":
            items.append({"type": "message", "role": "user", "content": m.content})
        elif m.role == "assistant":
            if m.content:
                items.append({"type": "message", "role": "assistant", "content": m.content})
            for call in m.tool_calls:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                items.append(
                    {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments}
                )
        elif m.role == "tool":
            items.append(
                {"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content}
            )
        elif m.role == "system":  # a system message inside the conversation (rare): a developer item
            items.append({"type": "message", "role": "developer", "content": m.content})
    return items


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def parse_response(resp: Any, *, source: str) -> tuple[str, Message, int, int]:
    """(response id, assistant Message, input tokens, output tokens) of a Responses API reply;
    reasoning items are dropped. A reply of the wrong shape raises ValueError saying what."""
    rid, status, output = _get(resp, "id"), _get(resp, "status"), _get(resp, "output")
    if status == "failed":
        error = _get(resp, "error")
        raise AgentError(
            f"{source}: the response failed: {_get(error, 'message') or error or 'no error given'}"
        )
    if not isinstance(rid, str) or not rid:
        raise ValueError("the response has no id")
    if not isinstance(output, list):
        raise ValueError("the response has no output list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, item in enumerate(output):
        kind = _get(item, "type")
        if kind == "message":
            for part in _get(item, "content") or []:
                if _get(part, "type") == "output_text":
                    texts.append(str(_get(part, "text") or ""))
                elif _get(part, "type") == "refusal":
                    texts.append(str(_get(part, "refusal") or ""))
        elif kind == "function_call":
            name = _get(item, "name")
            if not isinstance(name, str) or not name:
                raise ValueError(f"output[{i}] is a function_call without a name")
            args = parse_arguments(_get(item, "arguments"), tool=name, source=source)
            call_id = _get(item, "call_id") or _get(item, "id") or f"call_{i}"
            calls.append(ToolCall(id=str(call_id), name=name, arguments=args))
        # reasoning (and any other item kind) stays out of the transcript
    if not texts and not calls:
        if status == "incomplete":
            why = _get(_get(resp, "incomplete_details"), "reason") or "unknown reason"
            raise AgentError(f"{source}: the response is incomplete ({why}) and has no message")
        raise AgentError(f"{source}: the response has neither a message nor a function call")
    usage = _get(resp, "usage")
    p_tok, c_tok = _get(usage, "input_tokens"), _get(usage, "output_tokens")
    p_tok = p_tok if isinstance(p_tok, int) and p_tok >= 0 else 0
    c_tok = c_tok if isinstance(c_tok, int) and c_tok >= 0 else 0
    return rid, Message(role="assistant", content="".join(texts), tool_calls=calls), p_tok, c_tok


class OpenAIResponsesAgent:
    """A model behind the OpenAI Responses API driven as a tool-calling agent."""

    cooperative = True  # waits only on its HTTP client (see core/turns.py)

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.model, opts = split_spec(spec, "openai-responses", OPTIONS)
        m = model_options(spec, opts)
        self.base_url, self.api_key_env, self.temperature = m.base_url, m.api_key_env, m.temperature
        self.max_tokens, self.timeout = m.max_tokens, m.timeout
        self.reasoning = opts.get("reasoning") or None
        if self.reasoning not in (None, "minimal", "low", "medium", "high"):
            raise AgentError(
                f"Option 'reasoning={self.reasoning}' in agent spec '{spec}': use low, medium or high"
            )
        self.state = opts.get("state") or "chain"
        if self.state not in {"chain", "full"}:
            raise AgentError(
                f"Option 'state={self.state}' in agent spec '{spec}': use state=chain or state=full"
            )
        self._chains: Threads[str] = Threads()  # conversation prefix -> the response that answered it

    def _endpoint(self) -> tuple[str, str]:
        api_key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return resolve_endpoint(self.base_url, api_key)

    async def respond(self, inp: AgentInput) -> AgentReply:
        system = inp.messages[0].content if inp.messages and inp.messages[0].role == "system" else ""
        convo = inp.messages[1:] if inp.messages and inp.messages[0].role == "system" else list(inp.messages)
        request: dict[str, Any] = {"model": self.model}
        if system:
            request["instructions"] = system
        start = 0
        if self.state == "chain":
            request["store"] = True
            start, previous = self._chains.find(system, convo)
            if previous is not None:
                request["previous_response_id"] = previous
        else:
            request["store"] = False
        request["input"] = input_items(convo[start:])
        if inp.tools:
            request["tools"] = responses_tools(inp.tools)
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens:
            request["max_output_tokens"] = self.max_tokens
        if self.reasoning:
            request["reasoning"] = {"effort": self.reasoning}
        rid, message, p_tok, c_tok = await self._create(request)
        if self.state == "chain":
            self._chains.remember(system, [*convo, message], rid)
        usage = Usage(
            calls=1, prompt_tokens=p_tok, completion_tokens=c_tok, cost_usd=cost_usd(self.model, p_tok, c_tok)
        )
        return AgentReply(messages=[message], usage=usage)

    async def _create(self, request: dict[str, Any]) -> tuple[str, Message, int, int]:
        """One responses.create with the chat client's retries: 429 / 5xx / timeouts / connection
        errors / unusable 200 bodies are retried, then an AgentEndpointError; 4xx is an AgentError."""
        url, key = self._endpoint()
        where = f"Agent {self.spec} at {redact(url, [key])}/responses"
        timeout = self.timeout or _env_float("USERSIM_LLM_TIMEOUT_S", 120.0)
        client = _client(url, key, timeout)
        attempts = max(1, int(_env_float("USERSIM_LLM_MAX_ATTEMPTS", 4)))
        base_wait = _env_float("USERSIM_LLM_BACKOFF_S", 0.5)
        max_wait = _env_float("USERSIM_LLM_MAX_WAIT_S", 60.0)
        why = ""
        for attempt in range(attempts):
            wait = None
            try:
                async with away():  # other conversations take their turns while this one waits
                    resp = await client.responses.create(**request, timeout=timeout)
                return parse_response(resp, source=where)
            except openai.APIStatusError as exc:
                status = exc.status_code
                why = f"HTTP {status}: {redact(_server_message(exc), [key])}"
                if status in _NO_RETRY or (status < 500 and status != 429):
                    hint = (
                        " Check the API key (OPENAI_API_KEY or the spec's api_key_env)."
                        if status == 401
                        else ""
                    )
                    raise AgentError(f"{where} failed: {why}.{hint}") from None
                wait = _retry_after(exc)
            except openai.APITimeoutError as exc:
                cause = exc.__cause__
                refused = cause is not None and "Cannot connect" in str(cause)
                why = (
                    f"connection failed: {redact(str(cause), [key])}"
                    if refused
                    else f"timed out after {timeout:g}s"
                )
            except openai.APIConnectionError as exc:
                why = f"connection failed: {redact(str(exc.__cause__ or exc), [key])}"
            except (ValueError, TypeError, openai.APIError) as exc:
                why = f"unusable reply: {redact(str(exc), [key])[:200]}"
            if attempt + 1 < attempts:
                delay = wait if wait is not None else base_wait * (2**attempt) * (1 + random.random() / 4)
                async with away():
                    await asyncio.sleep(min(delay, max_wait))
        raise AgentEndpointError(f"{where} failed: {why} (gave up after {attempts} attempts)")

    def describe(self) -> dict[str, Any]:
        url, _ = self._endpoint()
        return {
            "agent": "openai-responses",
            "model": self.model,
            "base_url": redact(url),
            "state": self.state,
            "context_strategy": "thread" if self.state == "chain" else "full",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": self.state == "chain",
            "temperature": self.temperature,
        }
