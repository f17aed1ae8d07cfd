"""Simulated tools: one small module per tool family, all registered in `tool_registry`.

A tool is a pydantic argument model (its JSON Schema is the OpenAI tool schema, so the schema and
the validation can never disagree) and a deterministic function of (arguments, context).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from usersim.core import registry as registries
from usersim.core.registry import Registry, did_you_mean


class ToolError(Exception):
    """A domain error the tool reports to the agent as an error result (not a crash)."""


class SkillShelf(Protocol):
    """What load_skill needs from the sandbox: the skill body, with the trigger recorded."""

    def load(self, name: str, turn: int) -> str: ...


@dataclass
class ToolContext:
    """What a tool may know besides its arguments."""

    today: date
    turn: int = 0
    skills: SkillShelf | None = None


class Args(BaseModel):
    """Base of tool argument models: unknown arguments are errors, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Tool:
    """One simulated tool."""

    name: str
    description: str
    args: type[Args]
    run: Callable[[Any, ToolContext], Any]

    def schema(self) -> dict[str, Any]:
        """The tool in OpenAI `tools` format (a fresh copy: callers may change it; decoded from the
        schema's JSON text, several times cheaper than a deep copy)."""
        return json.loads(_schema_text(self))

    def shared_schema(self) -> dict[str, Any]:
        """The tool in OpenAI `tools` format, one object per process for every conversation: read
        it, never change it (`schema()` gives a copy to change)."""
        return _schema_of(self)

    def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> tuple[str, bool]:
        """(result text, is_error). Bad arguments and ToolErrors become error results."""
        try:
            parsed = self.args.model_validate(arguments)
        except ValidationError as exc:
            return f"Error: invalid arguments for {self.name}: {_explain(exc, self.args)}", True
        try:
            result = self.run(parsed, ctx)
        except ToolError as exc:
            text = str(exc)
            return (text if text.startswith("Error") else f"Error: {text}"), True
        if isinstance(result, str):
            return result, False
        return json.dumps(result, ensure_ascii=False), False


tool_registry: Registry[Tool] = registries.tools


def register(
    name: str, description: str, args: type[Args]
) -> Callable[[Callable[[Any, ToolContext], Any]], Tool]:
    """Decorator: turn `fn(args, ctx)` into a registered Tool."""

    def deco(fn: Callable[[Any, ToolContext], Any]) -> Tool:
        tool = Tool(name=name, description=description, args=args, run=fn)
        tool_registry.register(name)(tool)
        return tool

    return deco


def _explain(exc: ValidationError, model: type[Args]) -> str:
    parts = []
    for err in exc.errors():
        arg = str(err["loc"][0]) if err["loc"] else "<arguments>"
        if err["type"] == "missing":
            parts.append(f"missing required argument '{arg}'")
        elif err["type"] == "extra_forbidden":
            parts.append(
                f"unexpected argument '{arg}'.{did_you_mean(arg, set(model.model_fields))}".rstrip(".")
            )
        else:
            where = ".".join(str(p) for p in err["loc"])
            parts.append(f"argument '{where}': {err['msg']} (got {err.get('input')!r:.60})")
    return "; ".join(parts)


@functools.cache
def _schema_of(tool: Tool) -> dict[str, Any]:
    """A tool's schema, built once per process: pydantic's JSON Schema generation was half of the
    CPU of a conversation when it ran on every agent call."""
    params = _clean_schema(tool.args.model_json_schema())
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": params},
    }


@functools.cache
def _schema_text(tool: Tool) -> str:
    return json.dumps(_schema_of(tool), ensure_ascii=False)


def _clean_schema(node: Any) -> Any:
    """Pydantic JSON Schema -> the plain shape OpenAI tool schemas use (no titles, no null unions)."""
    if isinstance(node, list):
        return [_clean_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _clean_schema(v) for k, v in node.items() if k != "title"}
    variants = out.get("anyOf")
    if variants is not None:
        non_null = [v for v in variants if v.get("type") != "null"]
        out.pop("anyOf")
        out = {**non_null[0], **out} if len(non_null) == 1 else {"anyOf": non_null, **out}
    if out.get("default", 0) is None:
        out.pop("default")
    return out


def place_city(arg: str, value: Any) -> str:
    """The city an argument names (a city, airport or sight), or a ToolError naming the argument."""
    from usersim.sandbox.places import city_of, unknown_place_message

    city = city_of(value)
    if city is None:
        raise ToolError(unknown_place_message(arg, value))
    return city


def day_arg(arg: str, value: Any, ctx: ToolContext, *, future: bool = True) -> date:
    """A date argument resolved against the sandbox clock; past days are an error when `future`."""
    from usersim.sandbox.clock import DateError, parse_date

    try:
        day = parse_date(value, today=ctx.today, arg=arg)
    except DateError as exc:
        raise ToolError(str(exc)) from None
    if future and day < ctx.today:
        raise ToolError(
            f"argument '{arg}' {day.isoformat()} is in the past (today is {ctx.today.isoformat()})"
        )
    return day


# tool name -> the family module (sandbox/tools/*.py) that registers it on import. Declared, not
# imported: a tool's module loads when the tool is first looked up (tool_registry.get), so
# validating a case or starting a run that uses no built-in tool imports none of them;
# tests/sandbox/test_tool_manifest.py holds this table to what the modules register.
BUILTIN: dict[str, str] = {
    "beike_search_community_detail": "housing",
    "beike_search_resale_housing": "housing",
    "compute_google_maps_route_matrix": "routes",
    "compute_google_maps_routes": "routes",
    "load_skill": "skill_tool",
    "maps_weather": "weather",
    "search_flights": "flights",
    "search_hotels": "hotels",
    "search_restaurants": "restaurants",
    "search_trains": "trains",
    "taobao_get_product_reviews": "shopping",
    "taobao_search_products": "shopping",
    "web_search": "search",
    "zhihu_get_article_detail": "search",
    "zhihu_search": "search",
}
for _name, _module in BUILTIN.items():
    tool_registry.register_lazy(_name, f"{__name__}.{_module}")


DEFAULT_TOOLS: list[str]  # (an annotation: the value is made by __getattr__ below)


def __getattr__(name: str) -> Any:
    """DEFAULT_TOOLS (every registered tool but load_skill, plugins' included) on first use: listing
    them reads the entry points, which looking up a built-in tool does not need (PEP 562)."""
    if name == "DEFAULT_TOOLS":
        value = [n for n in tool_registry.names() if n != "load_skill"]
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BUILTIN",
    "DEFAULT_TOOLS",
    "Args",
    "Tool",
    "ToolContext",
    "ToolError",
    "register",
    "tool_registry",
]
