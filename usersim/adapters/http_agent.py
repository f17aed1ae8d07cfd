"""`http://...` / `https://...` — an HTTP chat endpoint as the agent under test.

Request (POST, JSON)::

    {"messages": [...OpenAI chat messages, system first...],
     "tools": [...OpenAI tool schemas...],
     "case_id": "B1-EI-01", "seed": 123, "turn": 1}

Response (JSON), either of::

    {"message": {"role": "assistant", "content": "...", "tool_calls": [...]}}
    {"choices": [{"message": {...}}]}          # an OpenAI-style chat completion

Tool-call `arguments` may be a JSON string or an object. The harness runs the tool loop: when the
message has tool calls, their results are appended and the endpoint is called again.

Options go in the URL fragment (never sent to the server): `http://host/chat#timeout=30`
(seconds; default `USERSIM_HTTP_TIMEOUT_S` or 60); `#tools=mcp` sends `"mcp_url": URL` (an MCP
streamable-HTTP endpoint on 127.0.0.1 serving this conversation's tools, valid for this request)
instead of `"tools"`; the calls made through it are recorded as the conversation's tool calls.
Timeouts, connection errors, non-2xx answers
and bodies of the wrong shape raise AgentError naming the URL and the status.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import parse_qsl

import aiohttp

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput, AgentReply
from usersim.adapters.convert import message_from_reply
from usersim.adapters.mcp_option import tools_mode
from usersim.core.messages import to_openai_messages
from usersim.llm.client import redact


class HttpAgent:
    """POSTs the conversation to a chat endpoint and reads back one assistant message."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.url, _, fragment = spec.partition("#")
        opts = dict(parse_qsl(fragment)) if fragment else {}
        unknown = set(opts) - {"timeout", "tools"}
        if unknown:
            raise AgentError(
                f"Unknown option(s) {sorted(unknown)} in agent spec '{spec}'. Options: timeout, tools"
            )
        self.tools_mode = tools_mode(spec, opts.get("tools"))
        try:
            self.timeout = float(opts.get("timeout") or os.environ.get("USERSIM_HTTP_TIMEOUT_S") or 60)
        except ValueError:
            raise AgentError(f"Option 'timeout' in agent spec '{spec}' must be a number of seconds") from None
        self.safe_url = redact(self.url)

    async def respond(self, inp: AgentInput) -> AgentReply:
        payload: dict[str, Any] = {
            "messages": to_openai_messages(inp.messages),
            "case_id": inp.case.id,
            "seed": inp.seed,
            "turn": inp.turn,
        }
        if self.tools_mode == "mcp":
            from usersim.adapters.mcp_bridge import mcp_step

            async with mcp_step(inp) as step:
                reply = await self._post(payload | {"mcp_url": step.url})
            return AgentReply(messages=[*step.messages(), *reply.messages])
        return await self._post(payload | {"tools": inp.tools})

    async def _post(self, payload: dict[str, Any]) -> AgentReply:
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session:
                async with session.post(self.url, json=payload) as resp:
                    raw = await resp.text()
                    status = resp.status
        except TimeoutError:
            raise AgentEndpointError(
                f"HTTP agent {self.safe_url} timed out after {self.timeout:g}s"
            ) from None
        except aiohttp.ClientError as exc:
            raise AgentEndpointError(f"HTTP agent {self.safe_url}: connection failed: {exc}") from None
        if not 200 <= status < 300:  # 5xx is an outage (infrastructure); 4xx stays the agent's error
            error = AgentEndpointError if status >= 500 else AgentError
            raise error(f"HTTP agent {self.safe_url} answered HTTP {status}: {raw[:300]}")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise AgentError(
                f"HTTP agent {self.safe_url} answered HTTP {status} with invalid JSON: {exc.msg}"
            ) from None
        message = _extract_message(body)
        if message is None:
            raise AgentError(
                f"HTTP agent {self.safe_url} answered HTTP {status} without a message: expected "
                '{"message": {...}} or {"choices": [{"message": {...}}]}, got keys '
                f"{sorted(body) if isinstance(body, dict) else type(body).__name__}"
            )
        return AgentReply(messages=[message_from_reply(message, source=f"HTTP agent {self.safe_url}")])

    def describe(self) -> dict[str, Any]:
        return {
            "agent": "http",
            "url": self.safe_url,
            "tools": self.tools_mode,
            "context_strategy": "full",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": False,
            "temperature": None,
        }


def _extract_message(body: Any) -> Any:
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("message"), (dict, str)):
        return body["message"]
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("message")
    return None
