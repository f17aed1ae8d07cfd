"""What `usersim tools list --case FILE` shows: the tools of one case (name, description, each
parameter's type, whether it is required, its description) and the domain state tables (key,
columns, row count) an agent starts from."""

from __future__ import annotations

from typing import Any

from usersim.cases.schema import Case
from usersim.cases.state_shape import StateShape


def _type_of(prop: dict[str, Any]) -> str:
    """A JSON-schema property's type in a few characters: string, integer, array of string,
    one of standard|express, string or null."""
    if "enum" in prop:
        return "one of " + "|".join(str(v) for v in prop["enum"])
    if "const" in prop:
        return f"= {prop['const']}"
    options = prop.get("anyOf") or prop.get("oneOf")
    if options:
        return " or ".join(dict.fromkeys(_type_of(o) for o in options))
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {_type_of(prop.get('items') or {})}"
    return str(kind or "any")


def parameters(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per parameter of an OpenAI tool schema: name, type, required, description."""
    params = schema["function"].get("parameters") or {}
    required = set(params.get("required", []))
    return [
        {
            "name": name,
            "type": _type_of(prop),
            "required": name in required,
            "description": prop.get("description", ""),
        }
        for name, prop in (params.get("properties") or {}).items()
    ]


def _columns(key: str, rows: list[dict[str, Any]], known: set[str]) -> list[str]:
    """The key first, then the fields of the records in order, then fields only tools or
    `environment.fields` name (a table that starts empty still shows what it will hold)."""
    seen = [key, *(c for r in rows for c in r)]
    return list(dict.fromkeys(seen + sorted(known - set(seen))))


def case_view(case: Case) -> dict[str, Any]:
    """{case, file, tools: [{name, description, parameters, schema}], state: [{table, key, columns,
    rows}]} for the tools the agent gets in `case` (what `open_sandbox` builds)."""
    from usersim.sandbox.base import open_sandbox

    sandbox = open_sandbox(case)
    tools = [
        {
            "name": s["function"]["name"],
            "description": s["function"].get("description", ""),
            "parameters": parameters(s),
            "schema": s,
        }
        for s in sandbox.tool_schemas()
    ]
    state = []
    if case.environment is not None:
        shape = StateShape.of(case.environment)
        tables = sandbox.state() or {}
        for table in dict.fromkeys([*tables, *shape.tables]):
            rows = tables.get(table, [])
            key = shape.key_of(table)
            columns = _columns(key, rows, shape.tables.get(table, set()))
            state.append({"table": table, "key": key, "columns": columns, "rows": len(rows)})
    return {"case": case.id, "file": str(case.file) if case.file else None, "tools": tools, "state": state}


def render_case_view(view: dict[str, Any]) -> str:
    """The text form: one block per tool (parameters indented), then one line per state table."""
    where = f" ({view['file']})" if view["file"] else ""
    lines = [f"case {view['case']}{where}: {len(view['tools'])} tools, {len(view['state'])} state tables", ""]
    for tool in view["tools"]:
        args = [p["name"] if p["required"] else f"{p['name']}?" for p in tool["parameters"]]
        lines.append(f"{tool['name']}({', '.join(args)})")
        if tool["description"]:
            lines.append(f"    {tool['description'].strip().splitlines()[0]}")
        for p in tool["parameters"]:
            need = "required" if p["required"] else "optional"
            about = f" - {p['description']}" if p["description"] else ""
            lines.append(f"      {p['name']}: {p['type']}, {need}{about}")
    if view["state"]:
        lines += ["", "state tables (each conversation starts from a fresh copy):"]
        for t in view["state"]:
            lines.append(
                f"  {t['table']}: {t['rows']} rows, key {t['key']}; columns {', '.join(t['columns'])}"
            )
    return "\n".join(lines)
