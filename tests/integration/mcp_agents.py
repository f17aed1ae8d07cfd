"""The examples/bank agents rebuilt as agents that take their tools over MCP (`?tools=mcp`): they
get `{"mcp_url": URL}` instead of schemas, list the tools with the official MCP client, run their
own tool loop through it and return only their answer. Used by test_mcp_run.py."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from examples.bank.agent import FLAWS, respond

MAX_CALLS = 12


async def over_mcp(
    messages: list[dict[str, Any]], tools: dict[str, Any], flaws: set[str], mode: str = "auto"
) -> dict[str, Any]:
    """The bank policy's next steps, each tool call made over MCP, until it has something to say.
    mode: the SDK client's protocol negotiation (auto: sessionless 2026-07-28; legacy: initialize
    handshake with an MCP session)."""
    local = list(messages)
    async with Client(tools["mcp_url"], mode=mode) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        for _ in range(MAX_CALLS):
            step = respond(local, flaws)
            calls = step.get("tool_calls") or []
            if not calls:
                return step
            local.append(step)
            for tc in calls:
                name = tc["function"]["name"]
                if name not in listed:
                    raise RuntimeError(f"the MCP server does not offer {name}: {sorted(listed)}")
                result = await client.call_tool(name, json.loads(tc["function"]["arguments"]))
                text = "".join(getattr(c, "text", "") for c in result.content)
                local.append({"role": "tool", "tool_call_id": tc["id"], "content": text})
    return {"role": "assistant", "content": "Sorry, I could not finish that."}


async def correct(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any]:
    """examples.bank.agent:correct, tools over MCP."""
    return await over_mcp(messages, tools, set())


async def flawed(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any]:
    """examples.bank.agent:flawed (its five flaws), tools over MCP."""
    return await over_mcp(messages, tools, FLAWS)


async def correct_legacy(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any]:
    """examples.bank.agent:correct over a handshake-era MCP session."""
    return await over_mcp(messages, tools, set(), mode="legacy")


def sync_correct(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any]:
    """A synchronous agent (run in a worker thread by usersim) with its own event loop for MCP."""
    import asyncio

    return asyncio.run(over_mcp(messages, tools, set()))


async def stale(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any]:
    """An agent that keeps using a URL whose step has ended (here: one that never existed)."""
    expired = tools["mcp_url"].rsplit("/", 1)[0] + "/expired"
    async with Client(expired) as client:
        await client.list_tools()
    return {"role": "assistant", "content": "unreachable"}
