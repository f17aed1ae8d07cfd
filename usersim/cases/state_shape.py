"""What an environment's state can hold: its tables, each table's key field and the fields its
records may have. Checks that read the state (final_state, plugins) use it to tell a test author's
typo (a table, key or column that cannot exist) from an agent that did not do the work.

A table or field can exist when the starting state has it, `environment.keys` / `environment.fields`
name it, a declarative tool reads or writes it, or a python tool's code writes it (`row["x"] = ...`,
`{"x": ...}`, `db.setdefault("x", [])`; see toolcode.written_names).
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass, field
from typing import Any

from usersim.cases.environment import Environment, Tables, build_tools, table_key
from usersim.cases.toolcode import written_names
from usersim.core.registry import did_you_mean


@dataclass
class StateShape:
    """The tables and fields an environment's state can have."""

    env: Environment
    tables: dict[str, set[str]] = field(default_factory=dict)  # table -> fields known for it
    written: set[str] = field(default_factory=set)  # names python tools write (any table)

    @classmethod
    def of(cls, env: Environment) -> StateShape:
        """The shape of `env` (built once per environment object)."""
        cached = _SHAPES.get(id(env))
        if cached is not None and cached[0]() is env:
            return cached[1]
        shape = cls(env)
        state: Tables = env.state  # type: ignore[assignment]  # read from its file at load
        for table, rows in state.items():
            shape.tables[table] = {f for r in rows for f in r}
        for table, key in env.keys.items():
            shape.tables.setdefault(table, set()).add(key)
        for table, fields in env.fields.items():
            shape.tables.setdefault(table, set()).update(fields)
        for t in env.tools:
            spec = t.lookup or t.update
            if spec is not None:
                known = shape.tables.setdefault(spec.table, set())
                known.update(f for f in [spec.key, *(spec.fields or [])] if f)
                if t.update is not None:
                    known.update(t.update.set)
        modules = {tool.fn.__module__ for tool in build_tools(env).values() if tool.fn is not None}
        for name in modules:
            if name in sys.modules:
                shape.written |= written_names(sys.modules[name])
        _SHAPES[id(env)] = (weakref.ref(env), shape)
        weakref.finalize(env, _SHAPES.pop, id(env), None)
        return shape

    def key_of(self, table: str, final: Tables | None = None) -> str:
        """The key field of `table`: environment.keys, else `id`, else the first field of its first
        record (in the starting state; for a table a tool creates, in the `final` state when given)."""
        state: Tables = self.env.state  # type: ignore[assignment]
        return table_key(state if table in state or final is None else final, self.env.keys, table)

    def table_problem(self, table: str, final: Tables | None = None) -> str | None:
        """Why `table` cannot exist (with did-you-mean), or None when it can."""
        if table in self.tables or table in self.written or (final is not None and table in final):
            return None
        names = sorted(self.tables)
        return (
            f"no table '{table}' in the environment.{did_you_mean(table, names)} "
            f"Tables: {', '.join(names) or 'none'}"
        )

    def field_problem(self, table: str, name: str, final: Tables | None = None) -> str | None:
        """Why records of `table` cannot have field `name` (with did-you-mean), or None when they can."""
        known = set(self.tables.get(table, set()))
        if final is not None:
            known |= {f for r in final.get(table, []) for f in r}
        if name in known or name in self.written:
            return None
        fields = ", ".join(sorted(known)) or "none"
        return (
            f"'{table}' has no field '{name}'.{did_you_mean(name, known)} Fields: {fields} (no record has "
            f"it and no tool writes it; list fields a tool adds in environment.fields.{table})"
        )

    def key_problem(self, table: str, record: dict[str, Any], final: Tables | None = None) -> str | None:
        """Why an expected record of `table` lacks its key field, or None when it has it."""
        key = self.key_of(table, final)
        if key in record:
            return None
        why = (
            "environment.keys"
            if table in self.env.keys
            else f"the default: `id`, else the first field of the first record; set environment.keys.{table}"
        )
        fields = ", ".join(str(k) for k in record) or "none"
        return f"record without the key field '{key}' of '{table}' ({why}); it has: {fields}"


# id(environment) -> (weak reference, shape): not on the model, so cases stay picklable.
_SHAPES: dict[int, tuple[weakref.ref[Any], StateShape]] = {}
