"""`langgraph-server:URL?assistant=ID` — a graph deployed on LangGraph Server as the agent under test.

Through the official `langgraph-sdk` (`pip install "usersim-harness[langgraph-server]"`): one
thread per conversation (the first run sends the system message and any history), one run per user
message, waited for; the thread's new messages (several AI messages, tool calls, tool results) are
read back from its state into the transcript. `assistant` is an assistant id or a graph id from the
server's `langgraph.json`.

Who runs the tools (option `tools`):

* `tools=sandbox` (default): usersim's sandbox executes every tool call the graph makes. Runs are
  started with `interrupt_before=[<tools node>]` (`tools_node=NAME`, default `tools`, the node
  name of `ToolNode` / `create_react_agent`); when the run stops there, the pending calls go to the
  sandbox, their results are written into the thread as that node's output
  (`threads.update_state(..., as_node=<tools node>)`) and the run resumes. A graph without that node
  may end its run on tool calls instead: the next run starts with the sandbox's results. A graph
  that runs a tool itself anyway is an AgentError naming the tool.
* `tools=own`: the deployed graph runs its own tools; their calls and results are recorded from
  the thread's messages as the agent's own tool events (`ToolEvent.executed_by: agent`), and
  `final_state` says (unjudged) that it cannot see them.

Options: `api_key_env=NAME` (default: the SDK reads LANGGRAPH_API_KEY, then LANGSMITH_API_KEY; sent
as `x-api-key`, never recorded), `timeout=S` per run (default 120). Errors name the server: an
unreachable server or an HTTP 5xx is an infrastructure outage (`AgentEndpointError`); an unknown
assistant, a 4xx or a failed run is the agent's error.

    langgraph dev --port 2024 &
    usersim run examples/bank/cases --agent "langgraph-server:http://127.0.0.1:2024?assistant=bank"
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from typing import Any

from usersim.adapters.base import AgentEndpointError, AgentError, AgentInput, AgentReply
from usersim.adapters.langgraph_wire import from_wire, to_wire, wire_usage
from usersim.adapters.spec import float_option, split_spec
from usersim.core.messages import Message
from usersim.core.registry import did_you_mean
from usersim.llm.client import redact

try:
    import httpx
    from langgraph_sdk import get_client, get_sync_client
except ImportError:  # pragma: no cover - the extra is missing
    get_client = get_sync_client = None  # type: ignore[assignment]

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


@dataclass
class _Thread:
    """One conversation's thread: what it holds, as our messages, and the message ids it has."""

    thread_id: str
    known: list[Message] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    busy: bool = False


class LangGraphServerAgent:
    """Drives an assistant on a LangGraph Server: a thread per conversation, a run per message."""

    def __init__(self, spec: str) -> None:
        if get_client is None:
            raise AgentError(
                f"Agent spec '{spec}' needs the LangGraph SDK: pip install \"usersim-harness[langgraph-server]\""
            )
        self.spec = spec
        url, opts = split_spec(
            spec, "langgraph-server", {"assistant", "tools", "tools_node", "api_key_env", "timeout"}
        )
        if not url.startswith(("http://", "https://")):
            raise AgentError(
                f"Agent spec '{spec}': give the server URL, e.g. langgraph-server:http://127.0.0.1:2024?assistant=agent"
            )
        self.url = url.rstrip("/")
        self.safe = redact(self.url)
        self.assistant = opts.get("assistant") or ""
        if not self.assistant:
            raise AgentError(
                f"Agent spec '{spec}' needs ?assistant=ID (an assistant id or a graph id of langgraph.json)"
            )
        self.tools = opts.get("tools") or "sandbox"
        if self.tools not in {"sandbox", "own"}:
            raise AgentError(
                f"Option 'tools={self.tools}' in agent spec '{spec}': use tools=sandbox (the default) or tools=own"
            )
        self.tools_node = opts.get("tools_node") or "tools"
        self.timeout = float_option(spec, opts, "timeout") or 120.0
        env = opts.get("api_key_env")
        if env and not os.environ.get(env):
            raise AgentError(f"Agent spec '{spec}': api_key_env={env} but ${env} is not set")
        self._key = os.environ.get(env) if env else None
        self._interrupt: list[str] | None = None  # decided from the assistant's graph, once
        self._threads: dict[tuple[str, int], list[_Thread]] = {}
        self._clients: dict[int, Any] = {}

    def _kwargs(self) -> dict[str, Any]:
        return {"url": self.url, "api_key": self._key} if self._key else {"url": self.url}

    def _error(self, exc: Exception, doing: str) -> AgentError:
        """The SDK's exception as ours: outage -> infrastructure, anything else -> the agent."""
        text = redact(str(exc).split("\nFor more information", 1)[0])
        if self._key:
            text = text.replace(self._key, "***")
        where = f"LangGraph Server {self.safe} (assistant {self.assistant})"
        if isinstance(exc, httpx.HTTPStatusError):
            status = exc.response.status_code
            if status in (404, 422) and doing.startswith("look up"):
                return AgentError(
                    f"{where}: no assistant or graph '{self.assistant}' (HTTP {status}); {self._available()}"
                )
            kind = AgentEndpointError if status >= 500 else AgentError
            return kind(f"{where}: {doing} answered HTTP {status}: {text}")
        if isinstance(exc, (httpx.TransportError, TimeoutError)):
            return AgentEndpointError(
                f"{where}: {doing} failed: cannot reach the server ({type(exc).__name__}: {text})"
            )
        return AgentError(f"{where}: {doing} failed: {type(exc).__name__}: {text}")

    def _available(self) -> str:
        try:
            with get_sync_client(**self._kwargs()) as client:
                graphs = sorted({a["graph_id"] for a in client.assistants.search(limit=100)})
        except Exception:  # noqa: BLE001 - only a hint
            return "could not list the server's assistants"
        return f"graphs there: {', '.join(graphs) or 'none'}.{did_you_mean(self.assistant, set(graphs))}"

    def _decide(self, graph: dict[str, Any]) -> list[str]:
        nodes = {str(n.get("id")) for n in graph.get("nodes", [])}
        return [self.tools_node] if self.tools == "sandbox" and self.tools_node in nodes else []

    def check_mode(self, schemas: list[dict[str, Any]]) -> None:
        """Before any conversation: the server answers and the assistant exists (its graph's nodes
        decide whether runs stop before the tools node)."""
        try:
            with get_sync_client(**self._kwargs()) as client:
                self._interrupt = self._decide(client.assistants.get_graph(self._assistant_ref(client)))
        except AgentError:
            raise
        except Exception as exc:  # noqa: BLE001 - the SDK's httpx errors, named for the user
            raise self._error(exc, "look up the assistant") from None

    def _assistant_ref(self, client: Any) -> str:
        """get_graph takes an assistant id; a graph id is resolved to its assistant."""
        if _UUID.match(self.assistant):
            return self.assistant
        found = client.assistants.search(graph_id=self.assistant, limit=1)
        if not found:
            raise AgentError(
                f"LangGraph Server {self.safe} (assistant {self.assistant}): no assistant or graph "
                f"'{self.assistant}'; {self._available()}"
            )
        return str(found[0]["assistant_id"])

    async def respond(self, inp: AgentInput) -> AgentReply:
        if self._interrupt is None:
            await asyncio.to_thread(self.check_mode, inp.tools)
        loop = id(asyncio.get_running_loop())  # an httpx client belongs to the loop it was made on
        if loop not in self._clients:
            self._clients[loop] = get_client(**self._kwargs())
        client = self._clients[loop]
        thread = await self._thread(inp, client)
        thread.busy = True
        try:
            produced = await self._run(thread, inp.messages, client)
        finally:
            thread.busy = False
        messages = [m for m in (from_wire(x) for x in produced) if m is not None]
        if self.tools == "sandbox":
            ran = next((m for m in messages if m.role == "tool"), None)
            if ran is not None:
                raise AgentError(
                    f"LangGraph Server {self.safe} (assistant {self.assistant}) ran tool '{ran.name}' itself, "
                    f"outside usersim's sandbox: usersim stops runs before node '{self.tools_node}' to run the "
                    "calls there; name the graph's tool node with ?tools_node=NAME, or test its own tools "
                    "with ?tools=own"
                )
        if not messages:
            raise AgentError(
                f"LangGraph Server {self.safe} (assistant {self.assistant}): the run produced no message"
            )
        thread.known = [*inp.messages, *messages]
        return AgentReply(
            messages=messages, usage=wire_usage(produced), tools_run_by_agent=self.tools == "own"
        )

    async def _thread(self, inp: AgentInput, client: Any) -> _Thread:
        """The conversation's thread: the idle one whose messages start `inp.messages`, else a new one."""
        threads = self._threads.setdefault((inp.case.id, inp.seed), [])
        fits = [t for t in threads if not t.busy and t.known and _same(t.known, inp.messages[: len(t.known)])]
        if fits:
            return max(fits, key=lambda t: len(t.known))
        try:
            created = await client.threads.create(metadata={"usersim_case": inp.case.id})
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc, "create a thread") from None
        thread = _Thread(str(created["thread_id"]))
        threads.append(thread)
        return thread

    async def _run(self, thread: _Thread, messages: list[Message], client: Any) -> list[dict[str, Any]]:
        """Send what the thread has not seen, run the graph, return the messages it produced."""
        pending = messages[len(thread.known) :]
        wire = [to_wire(m, f"usersim-{len(thread.known) + i}") for i, m in enumerate(pending)]
        tid = thread.thread_id
        doing = "run"
        try:
            state = await client.threads.get_state(tid) if thread.known else {"next": []}
            kwargs: dict[str, Any] = {"interrupt_before": self._interrupt or None}
            if (
                pending
                and all(m.role == "tool" for m in pending)
                and self.tools_node in (state.get("next") or [])
            ):
                doing = "write the sandbox's tool results"
                await client.threads.update_state(tid, {"messages": wire}, as_node=self.tools_node)
                kwargs["input"] = None  # resume after the tools node
            else:
                kwargs["input"] = {"messages": wire}
            doing = "run"
            out = await asyncio.wait_for(client.runs.wait(tid, self.assistant, **kwargs), self.timeout)
            if isinstance(out, dict) and out.get("__error__"):
                err = out["__error__"]
                raise AgentError(
                    f"LangGraph Server {self.safe} (assistant {self.assistant}): the run failed: "
                    f"{err.get('error', 'error')}: {redact(str(err.get('message', '')))[:300]}"
                )
            doing = "read the thread"
            values = (await client.threads.get_state(tid)).get("values") or {}
        except AgentError:
            raise
        except TimeoutError:
            raise AgentEndpointError(
                f"LangGraph Server {self.safe} (assistant {self.assistant}): the run took longer than {self.timeout:g}s"
            ) from None
        except Exception as exc:  # noqa: BLE001 - the SDK's httpx errors, named for the user
            raise self._error(exc, doing) from None
        history = values.get("messages") if isinstance(values, dict) else None
        if not isinstance(history, list):
            raise AgentError(
                f"LangGraph Server {self.safe} (assistant {self.assistant}): the thread state has no 'messages' list"
            )
        produced = [
            m
            for m in history
            if isinstance(m, dict)
            and not str(m.get("id", "")).startswith("usersim-")
            and m.get("id") not in thread.seen
        ]
        thread.seen |= {str(m.get("id")) for m in history if isinstance(m, dict)}
        return produced

    def describe(self) -> dict[str, Any]:
        return {
            "agent": "langgraph-server",
            "target": f"{self.safe}?assistant={self.assistant}",
            "tools": self.tools,
            "context_strategy": "thread",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": True,
            "temperature": None,
        }


def _same(a: list[Message], b: list[Message]) -> bool:
    return len(a) == len(b) and all(
        (x.role, x.content, x.tool_call_id) == (y.role, y.content, y.tool_call_id)
        for x, y in zip(a, b, strict=True)
    )


__all__ = ["LangGraphServerAgent"]
