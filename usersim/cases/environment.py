"""Stateful domain environments: a case's (or suite's) database and the tools that read and write it.

    environment:
      state: ../bank_state.yaml            # tables of records (YAML/JSON file, or inline {table: [...]})
      keys: {accounts: account_id}         # record key per table (default: `id`, else the first field)
      tools:
        - python: bank_tools               # every public function of bank_tools.py (beside the case)
        - python: bank_tools:transfer      # or one function
        - lookup: {name: get_card, table: cards, key: card_id, description: Look up a card.}
        - update: {name: freeze_card, table: cards, key: card_id, set: {status: frozen}, description: ...}

A python tool is a plain function with a typed signature; its first parameter `db` (or `state`)
receives the conversation's state, a dict of table name -> list of record dicts, to read and
modify in place. The other parameters become the tool's JSON schema (descriptions from
`Annotated[..., Field(description=...)]` or a Google-style `Args:` docstring section). To refuse a
call, raise `ToolError`, `ValueError`, `PermissionError` or an exception class of the tools file: the
agent gets `Error: <message>` and the state is rolled back. Any other exception (a `KeyError` on a
column name, a `TypeError` ...) is a bug in the tool: the conversation ends as `error` blamed on the
case (usersim.cases.toolcode). Whether a python tool writes is read from its code
(usersim.cases.tool_effects; a function attribute `writes = False` overrides): `update` tools write,
`lookup` tools read; `no_unauthorized_action` counts calls of write tools. Tools must be deterministic (no clock, no randomness) so the final
state can be rebuilt from the tool trace when judging.

This module lives in the data layer so the sandbox (which runs the tools) and the judges (which
replay them for `final_state`) share one engine.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import importlib.util
import inspect
import json
import re
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from usersim.cases.tool_effects import writes_state
from usersim.cases.toolcode import display_path, import_failure, is_refusal, user_traceback, where_of
from usersim.core.defaults import new_dict, new_list
from usersim.core.errors import CaseError
from usersim.core.registry import did_you_mean
from usersim.core.yamlfile import FileProblems, note_untracked, read_text_file, read_yaml

Tables = dict[str, list[dict[str, Any]]]
STATE_PARAMS = ("db", "state")


class _Strict(BaseModel):
    # built on first use, not at import: a command pays only for the models it validates (the
    # sub-models a parent embeds are built inside its schema; alone, only if validated alone)
    model_config = ConfigDict(extra="forbid", defer_build=True)


class LookupSpec(_Strict):
    """A read tool: one record of a table by its key."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$", description="Tool name the agent calls.")
    description: str = Field(description="Tool description shown to the agent.")
    table: str = Field(description="Table to read.")
    key: str | None = Field(default=None, description="Field to look up by (default: the table's key).")
    fields: list[str] | None = Field(default=None, description="Fields returned (default: all).")


class UpdateSpec(_Strict):
    """A write tool: set fields of one record found by its key."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$", description="Tool name the agent calls.")
    description: str = Field(description="Tool description shown to the agent.")
    table: str = Field(description="Table to write.")
    key: str | None = Field(
        default=None, description="Field that finds the record (default: the table's key)."
    )
    fields: list[str] = Field(
        default_factory=new_list, description="Fields the agent sets through arguments of the same name."
    )
    set: dict[str, Any] = Field(default_factory=new_dict, description="Fixed field values every call writes.")
    when: dict[str, Any] = Field(
        default_factory=new_dict,
        description="Field values the record must have, or the call is an error (e.g. {status: active}).",
    )


class EnvTool(_Strict):
    """One environment tool: exactly one of python / lookup / update."""

    python: str | None = Field(
        default=None,
        description="`module` (every public function) or `module:function`; module is a .py file beside "
        "the case file (or a path relative to it) or an importable module.",
    )
    lookup: LookupSpec | None = Field(default=None, description="A declarative read tool.")
    update: UpdateSpec | None = Field(default=None, description="A declarative write tool.")

    @model_validator(mode="after")
    def _one(self) -> EnvTool:
        given = [k for k in ("python", "lookup", "update") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of python / lookup / update, got {given or 'none'}")
        return self


class Environment(_Strict):
    """A domain state (tables of records) and the tools that read and write it; one copy per conversation."""

    state: Tables | str = Field(
        default_factory=new_dict,
        description="Tables of records: {table: [record, ...]} inline, or a YAML/JSON file relative to the "
        "case file. Every conversation starts from a fresh copy.",
    )
    state_updates: dict[str, list[dict[str, Any]]] = Field(
        default_factory=new_dict,
        description="Per-case changes on top of `state` (e.g. from a suite file): records merged by key; "
        "new keys are added.",
    )
    keys: dict[str, str] = Field(
        default_factory=new_dict,
        description="Key field per table (default: `id`, else the first record's first field).",
    )
    fields: dict[str, list[str]] = Field(
        default_factory=new_dict,
        description="Fields per table that tools may add although no starting record has them. Only "
        "for validation (a final_state field must exist); fields a python tool writes literally "
        "(`row['x'] = ...`, `{'x': ...}`) are found in its code.",
    )
    tools: list[EnvTool] = Field(default_factory=new_list, description="Tools over the state.")
    # (tool, arguments) calls every conversation's copy replays first: the writes of a static
    # case's recorded history (usersim.cases.history), set by the case that owns this environment.
    _prelude: list[tuple[str, dict[str, Any]]] = PrivateAttr(default_factory=new_list)

    @field_validator("state", mode="after")
    @classmethod
    def _read(cls, v: Tables | str, info: ValidationInfo) -> Tables:
        if not isinstance(v, str):
            return v
        try:
            return _read_state(_resolve(v, _base_dir(info)))
        except ValueError as exc:
            raise PydanticCustomError("environment", str(exc)) from None

    @field_validator("keys", mode="after")
    @classmethod
    def _keys_exist(cls, v: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        state = info.data.get("state") if isinstance(info.data.get("state"), dict) else {}
        updates = info.data.get("state_updates") or {}
        for table, key in v.items():  # a key no record has finds nothing: a typo
            rows = [*(state.get(table) or []), *(updates.get(table) or [])]
            if rows and not any(key in r for r in rows):
                have = sorted({f for r in rows for f in r})
                raise PydanticCustomError(
                    "environment",
                    f"{table}: no record of '{table}' has the field '{key}'.{did_you_mean(key, have)} "
                    f"Fields: {', '.join(have)}",
                )
        return v

    @field_validator("tools", mode="after")
    @classmethod
    def _python(cls, v: list[EnvTool], info: ValidationInfo) -> list[EnvTool]:
        base = _base_dir(info)
        for i, t in enumerate(v):
            if t.python is not None:
                t.python = _absolute_python(t.python, base)
                try:  # what can be wrong with a python tool is found building its parts (cached)
                    [_python_tool_parts(fn) for fn in _functions(t.python)]
                except ValueError as exc:
                    raise PydanticCustomError("environment", f"tools[{i}]: {exc}") from None
        return v

    @model_validator(mode="after")
    def _load(self) -> Environment:
        self.state = _apply_updates(self.state, self.state_updates, self.keys)  # type: ignore[arg-type]
        self.state_updates = {}
        build_tools(self)  # duplicate names, bad declarative tools: errors at load time, with file:line
        return self

    def key_of(self, table: str) -> str:
        return table_key(self.state, self.keys, table)


def _base_dir(info: Any) -> Path:
    ctx = getattr(info, "context", None) or {}
    return Path(ctx.get("case_dir") or ".")


def _resolve(rel: str, base: Path) -> Path:
    p = Path(rel)
    return p if p.is_absolute() else (base / p)


def _read_state(path: Path) -> Tables:
    if not path.is_file():
        raise ValueError(f"state file not found: {path}")
    if path.suffix == ".json":
        try:
            data = json.loads(read_text_file(path))  # not UTF-8 / too big: FileProblems (a ValueError)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    else:
        try:
            data, _ = read_yaml(path)
        except FileProblems as exc:
            raise ValueError("; ".join(str(p) for p in exc.problems)) from None
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(r, dict) for r in v) for v in data.values()
    ):
        raise ValueError(f"{path}: a state file is a mapping of table name -> list of records")
    return data


def table_key(state: Tables, keys: dict[str, str], table: str) -> str:
    if table in keys:
        return keys[table]
    rows = state.get(table) or []
    if not rows or "id" in rows[0]:
        return "id"
    return next(iter(rows[0]))


def _apply_updates(state: Tables, updates: dict[str, list[dict[str, Any]]], keys: dict[str, str]) -> Tables:
    if not updates:
        return state
    out = copy.deepcopy(state)
    for table, records in updates.items():
        rows = out.setdefault(table, [])
        key = table_key(out, keys, table)
        for rec in records:
            if key not in rec:
                raise ValueError(f"state_updates.{table}: every record needs its key field '{key}'")
            hit = next((r for r in rows if r.get(key) == rec[key]), None)
            if hit is None:
                rows.append(dict(rec))
            else:
                hit.update(rec)
    return out


# --- python tools ---------------------------------------------------------------------------------
_MODULES: dict[str, Any] = {}


def _absolute_python(spec: str, base: Path) -> str:
    """`bank_tools:transfer` -> `/abs/bank_tools.py:transfer` when the file exists beside the case."""
    module, _, fn = spec.partition(":")
    candidates = [module] if module.endswith(".py") else [module.replace(".", "/") + ".py"]
    for c in candidates:
        path = _resolve(c, base)
        if path.is_file():
            return f"{path.resolve()}:{fn}" if fn else str(path.resolve())
    return spec


def _import(module: str) -> Any:
    note_untracked(f"imports python tool module {module}")  # its code, and what it imports, decide too
    cache_key = module
    if module.endswith(".py"):
        path = Path(module)
        if not path.is_file():
            raise ValueError(f"python tool module not found: {module}")
        st = path.stat()  # an edited file is imported again
        cache_key = f"{module}@{st.st_mtime_ns}:{st.st_size}"
    if cache_key in _MODULES:
        return _MODULES[cache_key]
    if module.endswith(".py"):
        name = (
            "usersim_env_"
            + re.sub(r"\W", "_", path.stem)
            + "_"
            + hashlib.sha1(module.encode()).hexdigest()[:8]
        )
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except Exception as exc:  # noqa: BLE001  user code: any import failure is a load problem
            sys.modules.pop(name, None)
            raise ValueError(f"cannot import {display_path(module)}: {import_failure(exc, path)}") from None
    else:
        try:
            mod = importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001  user code: any import failure is a load problem
            raise ValueError(
                f"cannot import python tool module '{module}': {type(exc).__name__}: {exc} "
                "(put <module>.py beside the case file or make it importable)"
            ) from None
    _MODULES[cache_key] = mod
    return mod


def _functions(spec: str) -> list[Callable[..., Any]]:
    module, sep, fn = spec.rpartition(":")
    if not sep:
        module, fn = spec, ""
    mod = _import(module)
    if fn:
        target = getattr(mod, fn, None)
        if not callable(target):
            names = [n for n, v in vars(mod).items() if inspect.isfunction(v) and not n.startswith("_")]
            raise ValueError(
                f"python tool '{display_path(module)}:{fn}': no function '{fn}'.{did_you_mean(fn, names)} "
                f"Functions: {', '.join(names)}"
            )
        return [target]
    found = [
        v
        for n, v in vars(mod).items()
        if inspect.isfunction(v) and not n.startswith("_") and v.__module__ == mod.__name__
    ]
    if not found:
        raise ValueError(f"python tool module '{module}' defines no public functions")
    return found


def _doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """(description, {param: description}) from a docstring with an optional `Args:` section."""
    doc = inspect.getdoc(fn) or ""
    head, _, args = doc.partition("\nArgs:")
    params: dict[str, str] = {}
    current = None
    for line in args.splitlines():
        m = re.match(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if m:
            current = m[1]
            params[current] = m[2].strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
        elif not line.strip() and params:
            current = None
    return " ".join(head.split()) or fn.__name__, params


class _Writes:
    """`Tool.writes`: as given; for a python tool given None, read off its code (tool_effects) the
    first time it is asked for, once per function: only `no_unauthorized_action` asks, and reading
    the code of every tool of a suite is ~4 ms a tool that loading or validating a case never needs."""

    def __get__(self, obj: Tool | None, owner: type | None = None) -> bool:
        if obj is None:
            return True  # the field's default
        value = obj.__dict__.get("_writes")
        if value is None:
            value = _writes_of(obj.fn) if obj.fn is not None else True
            obj.__dict__["_writes"] = value
        return bool(value)

    def __set__(self, obj: Tool, value: bool | None) -> None:
        obj.__dict__["_writes"] = value


@functools.lru_cache(maxsize=1024)
def _writes_of(fn: Callable[..., Any]) -> bool:
    return writes_state(fn)


@dataclass
class Tool:
    """An environment tool ready to call: schema and a function (state, arguments) -> result."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[[Tables, dict[str, Any]], Any]
    writes: _Writes = _Writes()  # a bool; None for a python tool: read off its code when asked
    fn: Callable[..., Any] | None = None  # a python tool's function (user code); None: declarative

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class ToolError(Exception):
    """Raise it in a tool to refuse the call: the message goes to the agent, the state is rolled back."""


ToolFailure = ToolError  # the name the declarative tools use


def _python_tool(fn: Callable[..., Any]) -> Tool:
    description, schema, model, fields = _python_tool_parts(fn)

    def run(state: Tables, arguments: dict[str, Any]) -> Any:
        try:
            args = model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            raise ToolFailure(f"invalid arguments for {fn.__name__}: {problems}") from None
        return fn(state, **{k: getattr(args, k) for k in fields})

    return Tool(fn.__name__, description, copy.deepcopy(schema), run, writes=None, fn=fn)


@functools.lru_cache(maxsize=1024)
def _python_tool_parts(
    fn: Callable[..., Any],
) -> tuple[str, dict[str, Any], type[BaseModel], tuple[str, ...]]:
    """(description, JSON schema, argument model, parameter names) of a python tool, built once per
    function: every case of a suite loads the same tools module, and building the model is slow."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if not params or params[0].name not in STATE_PARAMS:
        raise ValueError(
            f"python tool '{fn.__name__}': the first parameter must be `db` (the state), got "
            f"({', '.join(p.name for p in params)})"
        )
    description, docs = _doc_parts(fn)
    hints = _type_hints(fn)
    fields: dict[str, Any] = {}
    for p in params[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(f"python tool '{fn.__name__}': *args / **kwargs are not supported")
        ann = hints.get(p.name, Any)
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (ann, Field(default, description=docs.get(p.name)) if docs.get(p.name) else default)
    model = create_model(f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    return description, schema, model, tuple(fields)


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    import typing

    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001  unresolvable hints: fall back to Any
        return {}


def _find(rows: list[dict[str, Any]], key: str, value: Any) -> dict[str, Any] | None:
    for r in rows:
        if r.get(key) == value or str(r.get(key)).strip().casefold() == str(value).strip().casefold():
            return r
    return None


def _lookup_tool(spec: LookupSpec, env: Environment) -> Tool:
    key = spec.key or env.key_of(spec.table)
    params = {
        "type": "object",
        "properties": {key: {"type": "string", "description": f"The {key} of the record."}},
        "required": [key],
    }

    def run(state: Tables, arguments: dict[str, Any]) -> Any:
        _only(spec.name, arguments, [key], [key])
        rec = _find(state.get(spec.table, []), key, arguments[key])
        if rec is None:
            raise ToolFailure(f"no {spec.table} record with {key}={arguments[key]}")
        return {f: rec.get(f) for f in spec.fields} if spec.fields else dict(rec)

    return Tool(spec.name, spec.description, params, run, writes=False)


def _update_tool(spec: UpdateSpec, env: Environment) -> Tool:
    key = spec.key or env.key_of(spec.table)
    props: dict[str, Any] = {key: {"type": "string", "description": f"The {key} of the record to change."}}
    sample = next(iter(env.state.get(spec.table, [])), {})
    for f in spec.fields:
        kind = {bool: "boolean", int: "integer", float: "number"}.get(type(sample.get(f)), "string")
        props[f] = {"type": kind, "description": f"New value of {f}."}
    params = {"type": "object", "properties": props, "required": [key, *spec.fields]}

    def run(state: Tables, arguments: dict[str, Any]) -> Any:
        _only(spec.name, arguments, list(props), [key, *spec.fields])
        rec = _find(state.get(spec.table, []), key, arguments[key])
        if rec is None:
            raise ToolFailure(f"no {spec.table} record with {key}={arguments[key]}")
        for field, want in spec.when.items():
            if rec.get(field) != want:
                raise ToolFailure(f"{spec.table} {arguments[key]} has {field}={rec.get(field)}, needs {want}")
        rec.update({f: arguments[f] for f in spec.fields})
        rec.update(copy.deepcopy(spec.set))
        return dict(rec)

    return Tool(spec.name, spec.description, params, run)


def _only(tool: str, arguments: dict[str, Any], known: list[str], required: list[str]) -> None:
    missing = [r for r in required if r not in arguments]
    if missing:
        raise ToolFailure(f"invalid arguments for {tool}: missing required argument(s) {', '.join(missing)}")
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise ToolFailure(f"invalid arguments for {tool}: unknown argument(s) {', '.join(unknown)}")


# id(environment) -> (weak reference, tools): not on the model, so cases stay picklable (Ray).
_BUILT: dict[int, tuple[weakref.ref[Any], dict[str, Tool]]] = {}


def build_tools(env: Environment) -> dict[str, Tool]:
    """The environment's tools by name (ValueError on a bad python tool or a duplicate name).
    Built once per environment: tools hold no state of their own (the state is passed in)."""
    cached = _BUILT.get(id(env))
    if cached is not None and cached[0]() is env:
        return cached[1]
    tools: dict[str, Tool] = {}
    for i, t in enumerate(env.tools):
        if t.python is not None:
            made = [_python_tool(fn) for fn in _functions(t.python)]
        elif t.lookup is not None:
            made = [_lookup_tool(t.lookup, env)]
        else:
            assert t.update is not None
            made = [_update_tool(t.update, env)]
        for tool in made:
            if tool.name in tools:
                raise ValueError(f"tools[{i}]: tool '{tool.name}' is defined twice")
            tools[tool.name] = tool
    _BUILT[id(env)] = (weakref.ref(env), tools)
    weakref.finalize(env, _BUILT.pop, id(env), None)
    return tools


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class EnvState:
    """One conversation's copy of the state, and its tools. `call` never raises for agent mistakes;
    it raises CaseError when a python tool has a bug."""

    def __init__(self, env: Environment, *, prelude: bool = True) -> None:
        self.env = env
        self.tables: Tables = copy.deepcopy(env.state)  # type: ignore[arg-type]
        self.tools = build_tools(env)
        for name, args in env._prelude if prelude else []:  # the case history's writes
            self.call(name, args)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """(result text, is_error). On an error the state is rolled back to before the call."""
        tool = self.tools[name]
        before = copy.deepcopy(self.tables)
        try:
            value = tool.run(self.tables, dict(arguments))
        except ToolFailure as exc:
            self.tables = before
            return f"Error: {exc}", True
        except Exception as exc:  # noqa: BLE001  the domain refused (ValueError ...) or a tool bug
            self.tables = before
            if tool.fn is not None and not is_refusal(exc, tool.fn, arguments):
                # a bug in the test author's tool: never the agent's business (toolcode)
                raise CaseError.from_exception(
                    user_traceback(exc, __name__), where=where_of(tool.fn)
                ) from exc
            msg = str(exc) or type(exc).__name__
            if not isinstance(exc, (ValueError, KeyError, LookupError, PermissionError)):
                msg = f"{type(exc).__name__}: {msg}"
            return f"Error: {msg}", True
        return _result_text(value), False

    def snapshot(self) -> Tables:
        return copy.deepcopy(self.tables)


def replay(env: Environment, calls: list[tuple[str, dict[str, Any]]]) -> EnvState:
    """The state after running these (tool, arguments) calls in order on a fresh copy; calls to
    tools outside the environment are ignored."""
    st = EnvState(env)
    for name, args in calls:
        if name in st.tools:
            st.call(name, args)
    return st
