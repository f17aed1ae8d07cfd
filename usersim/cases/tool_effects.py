"""Which environment tools write: a python tool's code read for changes to the state it is given.

A python tool writes when its function (or a function of the same module it passes the state, or
a record taken from it, to) stores into, deletes from or calls a mutating method on the state or on
anything taken from it: `row["status"] = ...`, `db["disputes"].append(...)`, `del db[t][0]`,
`account.update(...)`. Changing a fresh local (`out = []; out.append(...)`) is not a write. A function
attribute `writes = True / False` set in the tools file overrides the reading (code the reading
cannot follow: a helper of another module, `setattr`). Declarative tools say it themselves:
`update` writes, `lookup` reads. `no_unauthorized_action` uses this to know the write tools.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "popitem",
        "clear",
        "update",
        "setdefault",
        "sort",
        "reverse",
    }
)


def writes_state(fn: Callable[..., Any]) -> bool:
    """Whether the python tool `fn` (first parameter: the state) may change the state."""
    declared = getattr(fn, "writes", None)
    if isinstance(declared, bool):
        return declared
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return True
    if not params:
        return False
    return _mutates(fn, {0}, set())


def _tree(fn: Callable[..., Any]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        node = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _root(node: ast.AST) -> str | None:
    """The variable an expression like `a["x"][0].b` starts from."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _mutates(fn: Callable[..., Any], tainted_params: set[int], seen: set[tuple[int, frozenset[int]]]) -> bool:
    key = (id(fn), frozenset(tainted_params))
    if key in seen:
        return False
    seen.add(key)
    tree = _tree(fn)
    if tree is None:  # no source to read: assume the worst
        return True
    args = [a.arg for a in tree.args.posonlyargs + tree.args.args]
    tainted = {args[i] for i in tainted_params if i < len(args)}
    # names holding the state or anything taken from it (to a fixed point: loops, reassignments)
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            new: set[str] = set()
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if value is not None and _names(value) & tainted:
                    new = set().union(*(_targets(t) for t in targets))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if _names(node.iter) & tainted:
                    new = _targets(node.target)
            if new - tainted:
                tainted |= new
                changed = True
    module = inspect.getmodule(fn)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                if isinstance(t, (ast.Subscript, ast.Attribute)) and _root(t) in tainted:
                    return True
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in MUTATORS and _root(func.value) in tainted:
                return True
            helper = getattr(module, func.id, None) if isinstance(func, ast.Name) and module else None
            if inspect.isfunction(helper) and helper.__module__ == getattr(module, "__name__", None):
                passed = {i for i, a in enumerate(node.args) if _names(a) & tainted}
                if passed and _mutates(helper, passed, seen):
                    return True
    return False
