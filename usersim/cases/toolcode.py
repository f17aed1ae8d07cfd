"""The user's python tool code: a refusal meant for the agent vs a bug in the tool, and what the
code writes (so `usersim validate` knows the tables and fields a tool may create).

A python environment tool refuses a call by raising one of

* `ToolError` (usersim.cases.environment.ToolError), or any exception class named `ToolError`;
* `ValueError` or `PermissionError` (and their subclasses) — the bank example's idiom;
* an exception class defined in the tools file itself (`class Refused(Exception)`);
* a `KeyError` / `IndexError` whose key is one of the call's argument values (`users[user_id]`
  with an ID the agent made up: the agent's mistake, told to the agent).

The agent sees `Error: <message>` and the state is rolled back. Anything else (a `KeyError('plan')`
on a column name, `TypeError`, `AttributeError` ...) is a bug in the test author's tool: it is raised
as `CaseError` and the conversation ends as `error`, blamed on the case, with the traceback.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import traceback
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

REFUSALS: tuple[type[BaseException], ...] = (ValueError, PermissionError)


def is_refusal(exc: BaseException, fn: Callable[..., Any], arguments: dict[str, Any]) -> bool:
    """Whether `exc`, raised by the tool function `fn` for `arguments`, is a deliberate error result."""
    kind = type(exc)
    if isinstance(exc, REFUSALS) or any(c.__name__ == "ToolError" for c in kind.__mro__):
        return True
    if kind.__module__ == getattr(fn, "__module__", None):  # the tools file's own exception class
        return True
    if isinstance(exc, LookupError) and exc.args:  # a lookup of the agent's own value
        wanted = _norm(exc.args[0])
        return any(_norm(v) == wanted for v in _scalars(arguments))
    return False


def _norm(value: Any) -> str:
    return str(value).strip().casefold()


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _scalars(v)
    else:
        yield value


def display_path(path: str | Path) -> str:
    """A path relative to the working directory when it is under it (shorter in messages)."""
    p = Path(path)
    try:
        rel = os.path.relpath(p)
    except ValueError:  # another drive (Windows)
        return str(p)
    return str(p) if rel.startswith("..") else rel


def where_of(fn: Callable[..., Any]) -> str:
    """`<file>:<function>` of a tool function, for CaseError.where."""
    try:
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except TypeError:
        file = getattr(fn, "__module__", "?")
    return f"{display_path(file)}:{fn.__name__}"


def user_traceback(exc: BaseException, skip_module: str) -> BaseException:
    """`exc` with the leading frames of usersim's tool runner (`skip_module`) dropped from its
    traceback, so the record shows the user's code first."""
    tb: TracebackType | None = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") == skip_module and tb.tb_next:
        tb = tb.tb_next
    return exc.with_traceback(tb)


def import_failure(exc: BaseException, path: Path) -> str:
    """`Type: message (file:line)` for an exception raised while importing a tools file: the line
    in that file (or, for a syntax error, in the file that has it)."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"{type(exc).__name__}: {exc.msg} ({display_path(exc.filename or path)}:{exc.lineno})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    if frames:
        text += f" ({display_path(path)}:{frames[-1].lineno})"
    return text


def written_names(module: Any) -> set[str]:
    """Keys the module's code writes or creates: `row["x"] = ...`, `{"x": ...}`, `d.setdefault("x",
    ...)`, `dict(x=...)`, `d.update(x=...)`. Reading `row["x"]` does not count: a tool reading a column
    that does not exist is exactly the bug validation is for."""
    try:
        known = _WRITTEN.get(module)
    except TypeError:  # not weak-referenceable: read it each time
        known = None
    if known is None:
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            return set()
        known = _written_in(source)
        try:
            _WRITTEN[module] = known
        except TypeError:
            pass
    return set(known)


# module -> written_names: every case of a suite asks about the same imported tools module (an
# edited file is imported again as a new module object, so it is read again)
_WRITTEN: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=256)
def _written_in(source: str) -> frozenset[str]:
    """written_names of one source text (every case of a suite shares its tools module)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            out |= _strings([node.slice])
        elif isinstance(node, ast.Dict):
            out |= _strings([k for k in node.keys if k is not None])
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name == "setdefault":
                out |= _strings(node.args[:1])
            if name in ("dict", "update"):
                out |= {k.arg for k in node.keywords if k.arg}
    return frozenset(out)


def _strings(nodes: list[ast.expr]) -> set[str]:
    return {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}
