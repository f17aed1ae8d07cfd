"""`openai:MODEL` — any OpenAI-compatible chat model as a tool-calling agent under test.

The graph sends the sandbox's system prompt (case context, memory, skills) and the conversation;
this adapter forwards them with the sandbox tool schemas and returns the model's reply. The
harness executes the tool calls and calls again, so one `respond` is one model call.

Endpoint: `OPENAI_BASE_URL` / `OPENAI_API_KEY` by default. Per-agent overrides go in the spec's
query string, e.g.::

    openai:gpt-4o-mini?temperature=0
    openai:qwen2.5:7b?base_url=http://localhost:11434/v1&temperature=0.2
    openai:deepseek-chat?base_url=https://api.deepseek.com/v1&api_key_env=DEEPSEEK_API_KEY

Options: `base_url`, `api_key_env` (name of the env var holding the key — never the key itself,
so specs can be logged), `temperature`, `max_tokens`, `timeout` (seconds per call), `cache`
(`0` disables the LLM call cache for this agent). Model names may contain ':' (Ollama tags).
"""

from __future__ import annotations

import os
from typing import Any

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput, AgentReply
from usersim.adapters.convert import message_from_reply
from usersim.adapters.spec import bool_option, model_options, split_spec
from usersim.llm.client import LLMCallError, chat_completion, resolve_endpoint

OPTIONS = {"base_url", "api_key_env", "temperature", "max_tokens", "timeout", "cache"}


class OpenAIAgent:
    """An OpenAI-compatible chat model driven as a tool-calling agent."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)
    # `respond` is one chat_completion call built from its input: a run may send the first one
    # ahead while the conversation graph imports (graphs.opening, llm.ahead)
    sends_ahead = True

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.model, opts = split_spec(spec, "openai", OPTIONS)
        m = model_options(spec, opts)
        self.base_url, self.api_key_env, self.temperature = m.base_url, m.api_key_env, m.temperature
        self.max_tokens, self.timeout = m.max_tokens, m.timeout
        self.cache = bool_option(opts, "cache", True)

    async def respond(self, inp: AgentInput) -> AgentReply:
        api_key = os.environ.get(self.api_key_env) if self.api_key_env else None
        try:
            message, usage = await chat_completion(
                model=self.model,
                messages=inp.messages,
                tools=inp.tools or None,
                base_url=self.base_url,
                api_key=api_key,
                temperature=self.temperature,
                seed=inp.seed,
                cache=self.cache,
                role="agent",
                timeout=self.timeout,
                max_tokens=self.max_tokens,
            )
        except LLMCallError as exc:
            # timeouts, connection errors (status None), 429 and 5xx after the client's retries are
            # outages of the endpoint; 4xx (bad key, unknown model, rejected request) stay agent errors
            outage = exc.status is None or exc.status == 429 or exc.status >= 500 or exc.status == 200
            raise (AgentEndpointError if outage else AgentError)(f"Agent {self.spec} failed: {exc}") from None
        url, _ = resolve_endpoint(self.base_url, None)
        reply = message_from_reply(message, source=f"{self.spec} at {url}")
        return AgentReply(messages=[reply], usage=usage)

    def describe(self) -> dict[str, Any]:
        url, _ = resolve_endpoint(self.base_url, None)
        return {
            "agent": "openai",
            "model": self.model,
            "base_url": url,
            "context_strategy": "full",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": False,
            "temperature": self.temperature,
        }
