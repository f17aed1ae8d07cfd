"""A local OpenAI Responses API server over real HTTP (`POST /v1/responses`) for tests.

It keeps what the real service keeps: every stored response's conversation, so a request with
`previous_response_id` continues it (an unknown id is HTTP 400, like the service), `instructions`
apply to the one request only, and a `function_call_output` must answer a `function_call` of the
conversation (HTTP 400 otherwise). Replies are the real response object: `output` items of type
`reasoning`, `message` (`output_text` parts) and `function_call`, and `usage` with input/output
tokens.

The model behind it is a chat-shaped responder: `responder(messages, tools) -> reply`, where
`messages` is the conversation in OpenAI chat form (system = this request's instructions first)
and `tools` the request's function tools; a reply is the chat stub's short form (`content`,
`tool_calls`, `status`/`error`, `delay`, `raw`) plus `reasoning` (the text of a reasoning summary,
sent as a `reasoning` output item). Scripted replies (`script(...)`) come first, as in
`tests/support/openai_stub.py`, whose server thread this reuses.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.support.openai_stub import OpenAIStub, Reply, _error_response, openai_tool_calls

ChatResponder = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Reply]


def chat_agent(fn: Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]) -> ChatResponder:
    """A responder from an agent function (messages, tools) -> assistant message dict (OpenAI chat
    form), such as examples/bank/agent.py's; its tool calls keep their own ids."""

    def respond(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        chat_tools = [
            {"type": "function", "function": {k: v for k, v in t.items() if k != "type"}} for t in tools
        ]
        message = fn(messages, chat_tools)
        return {"content": message.get("content") or "", "tool_calls": message.get("tool_calls") or []}

    return respond


class ResponsesStub(OpenAIStub):
    """The Responses API stub; `requests` holds the bodies received, `conversations` the stored ones."""

    def __init__(self, *, api_key: str | None = None, responder: ChatResponder | None = None) -> None:
        super().__init__(api_key=api_key)
        self.chat_responder = responder
        self.conversations: dict[str, list[dict[str, Any]]] = {}
        self.seen_by_model: list[list[dict[str, Any]]] = []

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/responses", self._responses)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _responses(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            n = len(self.requests)
            reply = self._script.popleft() if self._script else None
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error_response(401, "Incorrect API key provided.", "invalid_api_key")
        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.conversations:
            return _error_response(400, f"Previous response with id '{previous}' not found.", None)
        convo = list(self.conversations.get(previous, [])) if previous else []
        try:
            convo += _chat_messages(body.get("input"), convo)
        except ValueError as exc:
            return _error_response(400, str(exc), None)
        seen = (
            [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
        ) + convo
        self.seen_by_model.append(seen)
        if reply is None:
            reply = (
                self.chat_responder(seen, body.get("tools") or [])
                if self.chat_responder
                else {"content": "ok"}
            )
        if reply.get("delay"):
            await asyncio.sleep(float(reply["delay"]))
        if "status" in reply:
            return _error_response(int(reply["status"]), reply.get("error", ""), None, reply.get("headers"))
        if "raw" in reply:
            return web.json_response(reply["raw"])
        rid = f"resp_stub_{n}"
        output, message = _output(reply, n)
        if body.get("store", True):
            self.conversations[rid] = convo + [message]
        return web.json_response(_response(rid, body, output, seen))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


def _chat_messages(items: Any, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses input items as chat messages; raises ValueError where the service answers 400."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise ValueError("'input' must be a string or a list of items")
    out: list[dict[str, Any]] = []
    called = {tc["id"] for m in before for tc in m.get("tool_calls") or []}
    for i, item in enumerate(items):
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role = {"developer": "system"}.get(item["role"], item["role"])
            out.append({"role": role, "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item.get("arguments", "{}")},
            }
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
            called.add(item["call_id"])
        elif kind == "function_call_output":
            if item.get("call_id") not in called:
                raise ValueError(
                    f"No tool call found for function call output with call_id {item.get('call_id')}."
                )
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": item.get("output", "")})
        else:
            raise ValueError(f"Invalid value for 'input[{i}].type': {kind!r}")
    return out


def _output(reply: Reply, n: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The response's output items and the chat message it adds to the stored conversation."""
    output: list[dict[str, Any]] = []
    if reply.get("reasoning"):
        output.append(
            {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [{"type": "summary_text", "text": reply["reasoning"]}],
            }
        )
    content = reply.get("content") or ""
    calls = openai_tool_calls(reply.get("tool_calls") or [], f"call_{n}")
    if content:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": content, "annotations": []}],
            }
        )
    for i, c in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": c["id"],
                "name": c["function"]["name"],
                "arguments": c["function"]["arguments"],
                "status": "completed",
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    return output, message


def _response(
    rid: str, body: dict[str, Any], output: list[dict[str, Any]], seen: list[dict[str, Any]]
) -> dict[str, Any]:
    prompt = max(1, len(json.dumps(seen, ensure_ascii=False)) // 4)
    reasoning = sum(len(json.dumps(i)) // 8 for i in output if i["type"] == "reasoning")
    completion = max(1, len(json.dumps([i for i in output if i["type"] != "reasoning"])) // 4) + reasoning
    return {
        "id": rid,
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model", "stub"),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": prompt + completion,
        },
        "metadata": {},
    }
