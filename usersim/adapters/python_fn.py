"""`python:module:function` — a Python callable as the agent under test.

The callable takes `(messages, tools)` — the conversation in OpenAI chat format (system message
first) and the OpenAI tool schemas — and returns the next assistant message as a dict
`{"role": "assistant", "content": ..., "tool_calls": [...]}` (tool-call `arguments` a JSON
string or a dict). It may be sync or async; returning a plain string means a text reply. The
harness runs the tool loop: when the reply has tool calls, the results are appended and the
callable is called again.

    # my_agent.py
    def respond(messages, tools):
        return {"role": "assistant", "content": "你好！"}

    usersim run ... --agent python:my_agent:respond

`python:my_agent:respond?tools=mcp`: the second argument is `{"mcp_url": URL}` instead of the
schemas; the agent lists and calls its tools over MCP (streamable HTTP) and returns its answer;
the calls it made are recorded as the conversation's tool calls (adapters/mcp_bridge.py).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import orjson

from usersim.adapters.base import AgentError, AgentInput, AgentReply
from usersim.adapters.convert import message_from_reply
from usersim.adapters.mcp_option import tools_mode
from usersim.core.messages import to_openai_messages
from usersim.core.registry import did_you_mean


def import_target(spec: str, body: str, example: str = "python:my_agent:respond") -> Any:
    """Import `module:attr` (attr may be dotted) named in `spec`; errors say what to fix."""
    module_name, sep, attr = body.rpartition(":")
    if not sep or not module_name or not attr:
        raise AgentError(f"Agent spec '{spec}' must look like 'scheme:module:attribute' (e.g. '{example}')")
    if os.getcwd() not in sys.path:  # like `python -m`: the user's own modules in the working directory
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, SyntaxError, errors raised at import time
        raise AgentError(
            f"Cannot import '{module_name}' from spec '{spec}': {type(exc).__name__}: {exc}. "
            "Is the module on PYTHONPATH (run from its directory or install it)?"
        ) from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            raise AgentError(
                f"Cannot import '{attr}' from spec '{spec}': module '{module_name}' has no attribute "
                f"'{part}'.{did_you_mean(part, names)}"
            )
        target = getattr(target, part)
    return target


# Callables handed to the Python API (`usersim.run(..., agent=fn)`), by the name in their spec.
_CALLABLES: dict[str, Callable[..., Any]] = {}


def callable_spec(fn: Callable[..., Any]) -> str:
    """The agent SPEC `callable:NAME` of an in-process callable (the Python API and pytest plugin)."""
    if not callable(fn):
        raise AgentError(f"agent must be a SPEC string or a callable, not {type(fn).__name__}")
    base = getattr(fn, "__qualname__", None) or type(fn).__name__
    name, n = base, 1
    while name in _CALLABLES and _CALLABLES[name] is not fn:
        n += 1
        name = f"{base}#{n}"
    _CALLABLES[name] = fn
    return f"callable:{name}"


def load_callable(spec: str) -> Callable[..., Any]:
    """The callable named by `python:module:function` (imported) or `callable:NAME` (handed over)."""
    if spec.startswith("callable:"):
        name = spec.removeprefix("callable:")
        if name not in _CALLABLES:
            raise AgentError(
                f"Agent spec '{spec}': no callable '{name}' was handed to usersim.run in this process "
                "(callables cannot cross processes, e.g. with --ray; use python:module:function)"
            )
        return _CALLABLES[name]
    body = spec.removeprefix("python:")
    target = import_target(spec, body)
    attr = body.rpartition(":")[2]
    if not callable(target):
        raise AgentError(
            f"Cannot use '{attr}' from spec '{spec}': it is a {type(target).__name__}, not a callable"
        )
    return target


class PythonFunctionAgent:
    """Calls a user function `(messages, tools) -> assistant message dict` once per step."""

    tools_mode = "schemas"  # or "mcp" (`?tools=mcp`); a subclass that sets fn itself keeps schemas

    def __init__(self, spec: str) -> None:
        self.spec = spec
        target, _, query = spec.partition("?")
        options = dict(parse_qsl(query, keep_blank_values=True))
        unknown = sorted(set(options) - {"tools"})
        if unknown:
            raise AgentError(f"Unknown option(s) {unknown} in agent spec '{spec}'. Options: tools")
        self.tools_mode = tools_mode(spec, options.get("tools"))
        self.fn = load_callable(target)

    async def respond(self, inp: AgentInput) -> AgentReply:
        if self.tools_mode == "mcp":
            from usersim.adapters.mcp_bridge import mcp_step

            async with mcp_step(inp) as step:
                reply = await self._call(inp, {"mcp_url": step.url})
            return AgentReply(messages=[*step.messages(), *reply.messages])
        # its own copy: the schemas are shared by every conversation (Sandbox.tool_schemas)
        return await self._call(inp, orjson.loads(orjson.dumps(inp.tools)))

    async def _call(self, inp: AgentInput, tools: Any) -> AgentReply:
        messages = to_openai_messages(inp.messages)
        try:
            if inspect.iscoroutinefunction(self.fn):
                result = await self.fn(messages, tools)
            else:
                # A thread keeps a slow sync agent from stalling the other conversations.
                result = await asyncio.to_thread(self.fn, messages, tools)
                if inspect.isawaitable(result):
                    result = await result
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"Agent {self.spec} raised {type(exc).__name__}: {exc}") from exc
        if result is None:
            raise AgentError(f"Agent {self.spec} returned None; return an assistant message dict or a string")
        return AgentReply(messages=[message_from_reply(result, source=self.spec)])

    def describe(self) -> dict[str, Any]:
        return {
            "agent": "python",
            "callable": self.spec.split(":", 1)[1].partition("?")[0],
            "tools": self.tools_mode,
            "context_strategy": "full",
            "window_turns": None,
            "profile_injection": False,
            "external_memory": False,
            "temperature": None,
        }
