"""`a2a:URL` — an agent served over the A2A protocol as the agent under test, through the official
`a2a-sdk` client (`pip install usersim-harness[a2a]`).

The agent card is read once from `URL/.well-known/agent-card.json` (`?card=PATH` for another
path); the SDK picks the transport the card offers (JSON-RPC or HTTP+JSON). Each user turn is one
`SendMessage`: streamed (`SendStreamingMessage`) when the card says `capabilities.streaming`
(`?stream=0` forces the blocking call). One conversation is one A2A context: the first message
starts it, every later one carries its `contextId`, and while a task waits for input
(`input-required`) the next message carries that `taskId` too.

What the agent says in a turn is every agent message and status message it sends, in order, then
each new artifact, each as one assistant message of the transcript (`a2a_turn.py`). The task's
state ends the turn:

* `input-required`, `completed`: the agent's turn is over, the user answers;
* `rejected`: the agent declined; its message is its reply;
* `failed`, `canceled`, `auth-required`: an agent error (blame agent) with the task's message.

Tools: an A2A agent runs its OWN tools; usersim's sandbox is not offered to it, its intercepts do
not apply, and the case's state never changes. What the agent reports is recorded: a data part
`{"tool_call": {"name": ..., "arguments": {...}, "result": ..., "is_error": false}}` in any of its
messages becomes an assistant tool call plus its tool result in the transcript, so `tool_called`
/ `tool_order` checks judge the reported calls; `final_state` checks, which read usersim's own
state, cannot see them. Other data parts are recorded as JSON text.

The agent receives the user's messages only (no system prompt: its instructions are its own);
a static case's earlier history is sent as the user messages it contains.

Options (spec query, never sent): `timeout` (seconds per turn, default 120), `stream` (`auto`,
`1`, `0`), `card` (the card's path), `auth_env` (the env var holding a bearer token sent as
`Authorization`; the token is never logged). The URL itself may not carry a query.

    a2a:http://localhost:9999
    a2a:https://agents.example.com/support?auth_env=SUPPORT_AGENT_TOKEN&stream=0
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput, AgentReply
from usersim.adapters.spec import float_option, split_spec
from usersim.adapters.threads import Threads
from usersim.core.events import Usage
from usersim.core.messages import Message
from usersim.core.secrets import redact

try:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import GetTaskRequest, Part, Role, SendMessageRequest
    from a2a.types import Message as A2AMessage

    from usersim.adapters.a2a_turn import Thread, Turn
except ImportError:  # the optional extra is missing: said when an a2a: spec is used, not before
    httpx = None  # type: ignore[assignment]

OPTIONS = {"timeout", "stream", "card", "auth_env"}
# the states in which the agent's turn is over and it waits for the user
_WAITING = {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED", "TASK_STATE_REJECTED"}
_BROKEN = {"TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_AUTH_REQUIRED"}


class A2AAgent:
    """Talks to an A2A agent: one context per conversation, one task per request until it ends."""

    # not `cooperative`: it waits on its own HTTP client, so the harness steps aside for the whole
    # call (core/turns.py) and other conversations run meanwhile

    def __init__(self, spec: str) -> None:
        if httpx is None:
            raise AgentError(
                f"Agent spec '{spec}' needs the A2A SDK: pip install usersim-harness[a2a] (it installs a2a-sdk)"
            )
        self.spec = spec
        self.url, opts = split_spec(spec, "a2a", OPTIONS)
        if not self.url.startswith(("http://", "https://")):
            raise AgentError(f"Agent spec '{spec}': the A2A agent's URL must start with http:// or https://")
        self.safe_url = redact(self.url)
        self.timeout = float_option(spec, opts, "timeout") or 120.0
        self.stream = (opts.get("stream") or "auto").lower()
        if self.stream not in {"auto", "1", "0", "true", "false"}:
            raise AgentError(f"Option 'stream={self.stream}' in agent spec '{spec}': use auto, 1 or 0")
        self.card_path = opts.get("card") or None
        self.auth_env = opts.get("auth_env") or None
        if self.auth_env and not os.environ.get(self.auth_env):
            raise AgentError(f"Agent spec '{spec}': environment variable {self.auth_env} is not set")
        self._card: Any = None
        self._card_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._threads: Threads[Thread] = Threads()

    # --- connection -----------------------------------------------------------------------------
    def _secret(self) -> str | None:
        return os.environ.get(self.auth_env) if self.auth_env else None

    def _http(self) -> Any:
        token = self._secret()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(self.timeout))

    def _fail(self, what: str, exc: BaseException) -> AgentError:
        """The error for a failed exchange: an outage (down, timeout, 5xx) or the agent's fault."""
        text = redact(f"{type(exc).__name__}: {exc}", [self._secret()])
        chain: list[BaseException] = [exc]
        while chain[-1].__cause__ is not None and len(chain) < 6:
            chain.append(chain[-1].__cause__)  # type: ignore[arg-type]
        outage = any(
            isinstance(e, (httpx.TransportError, TimeoutError))
            or (isinstance(e, httpx.HTTPStatusError) and e.response.status_code >= 500)
            or type(e).__name__ == "A2AClientTimeoutError"
            for e in chain
        )
        error = AgentEndpointError if outage else AgentError
        return error(f"A2A agent {self.safe_url}: {what}: {text[:400]}")

    async def _agent_card(self, http: Any) -> Any:
        if self._card is not None:
            return self._card
        loop = asyncio.get_running_loop()
        if self._card_lock is None or self._card_lock[0] is not loop:  # a lock serves one event loop
            self._card_lock = (loop, asyncio.Lock())
        async with self._card_lock[1]:
            if self._card is None:
                try:
                    resolver = A2ACardResolver(http, self.url)
                    self._card = await resolver.get_agent_card(relative_card_path=self.card_path)
                except Exception as exc:  # noqa: BLE001 -- every failure names the card's URL
                    raise self._fail("cannot read the agent card", exc) from None
        return self._card

    def _streaming(self, card: Any) -> bool:
        if self.stream in {"1", "true"}:
            return True
        if self.stream in {"0", "false"}:
            return False
        return bool(card.capabilities.streaming)

    # --- one turn -------------------------------------------------------------------------------
    async def respond(self, inp: AgentInput) -> AgentReply:
        convo = [m for m in inp.messages if m.role != "system"]
        start, thread = self._threads.find("", convo)
        texts = [m.content for m in convo[start:] if m.role == "user" and m.content]
        if not texts:
            raise AgentError(
                f"A2A agent {self.safe_url}: no user message to send (A2A agents answer users only)"
            )
        message = A2AMessage(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text=t) for t in texts],
        )
        if thread is not None:
            message.context_id = thread.context_id
            if thread.task_id:
                message.task_id = thread.task_id
        turn = Turn(sent_id=message.message_id, thread=thread, where=f"A2A agent {self.safe_url}")
        async with self._http() as http:
            card = await self._agent_card(http)
            try:
                factory = ClientFactory(ClientConfig(httpx_client=http, streaming=self._streaming(card)))
                client = factory.create(card)
            except ValueError as exc:
                raise AgentError(
                    f"A2A agent {self.safe_url}: its card offers no usable transport: {exc}"
                ) from None
            try:
                async with asyncio.timeout(self.timeout):
                    async for event in client.send_message(SendMessageRequest(message=message)):
                        turn.read_event(event)
                    while turn.state is not None and turn.state not in _WAITING | _BROKEN and turn.task_id:
                        await asyncio.sleep(0.2)  # a task still working: poll until it waits or ends
                        turn.read_task(await client.get_task(GetTaskRequest(id=turn.task_id)))
            except TimeoutError:
                raise AgentEndpointError(
                    f"A2A agent {self.safe_url}: no answer within {self.timeout:g}s (state {turn.state or 'none'})"
                ) from None
            except AgentError:
                raise
            except Exception as exc:  # noqa: BLE001 -- the SDK's errors (transport, JSON-RPC, parsing)
                raise self._fail("the message exchange failed", exc) from None
        return self._finish(turn, thread, convo)

    def _finish(self, turn: Turn, thread: Thread | None, convo: list[Message]) -> AgentReply:
        where = f"A2A agent {self.safe_url}"
        if turn.state in _BROKEN:
            state = turn.state.removeprefix("TASK_STATE_").lower().replace("_", "-")
            raise AgentError(
                f"{where}: task {turn.task_id} {state}: {turn.status_text or 'no message given'}"
            )
        replies = turn.replies()
        if not replies:
            raise AgentError(
                f"{where} answered without a message or artifact (task state {turn.state or 'none'})"
            )
        context_id = turn.context_id or (thread.context_id if thread else "")
        if not context_id:
            raise AgentError(f"{where} answered without a contextId")
        waiting = turn.task_id if turn.state == "TASK_STATE_INPUT_REQUIRED" else None
        seen = (thread.artifacts_seen if thread else frozenset()) | set(turn.artifacts)
        self._threads.remember("", [*convo, *replies], Thread(context_id, waiting, frozenset(seen)))
        # the reported tool results came from the agent's own tools: recorded as the agent's tool
        # events (executed_by: agent), and state checks say they cannot see them
        return AgentReply(messages=replies, usage=Usage(calls=1), tools_run_by_agent=True)

    def describe(self) -> dict[str, Any]:
        card = self._card
        return {
            "agent": "a2a",
            "url": self.safe_url,
            "card": {"name": card.name, "version": card.version} if card is not None else None,
            "streaming": self.stream,
            "tools": "own",
            "context_strategy": "thread",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": True,
            "temperature": None,
        }
