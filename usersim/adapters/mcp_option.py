"""The `tools=` option of the python and http agent specs (no MCP import: parsing stays cheap)."""

from __future__ import annotations

from usersim.adapters.base import AgentError

TOOLS_MODES = ("schemas", "mcp")


def tools_mode(spec: str, value: str | None) -> str:
    """`schemas` (default: the OpenAI tool schemas are handed over) or `mcp` (an MCP endpoint is);
    with `mcp` the MCP SDK must be installed, checked here so a run fails before it starts."""
    mode = value or "schemas"
    if mode not in TOOLS_MODES:
        raise AgentError(
            f"Option 'tools={value}' in agent spec '{spec}' must be one of: {', '.join(TOOLS_MODES)}"
        )
    if mode == "mcp":
        import usersim.adapters.mcp_bridge  # noqa: F401  (AgentError naming the extra when missing)
    return mode
