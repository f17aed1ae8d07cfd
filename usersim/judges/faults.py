"""Whose fault a crashing check or judge is: the test author's (a plugin's or a user tool's code, a
case naming what its environment lacks) or usersim's own (a built-in's bug: infrastructure).

The crash becomes an `error` verdict whose details carry `fault` ("case" or "infrastructure"),
`where` and the `traceback`; the record's blame is read from `fault`.
"""

from __future__ import annotations

import os
import sysconfig
import traceback as _tb
from pathlib import Path
from typing import Any, Literal

from usersim.core.errors import CaseError
from usersim.core.secrets import redact
from usersim.core.verdict import Verdict

Fault = Literal["case", "infrastructure"]
MAX_TRACEBACK = 6000  # characters kept (the end: where it broke)
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve())
    for key in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(key))
)


def is_usersim(module: str | None) -> bool:
    """Whether a module name is part of usersim itself (not `usersim_env_*`, a user's tools file)."""
    return bool(module) and (module == "usersim" or str(module).startswith("usersim."))


def fault_of(exc: BaseException, owner: Any) -> Fault:
    """Who caused `exc`, raised while running `owner` (a check function or a judge object).

    A CaseError is the case's. Otherwise the innermost frame of the traceback that is usersim's or
    the user's decides: the user's code (a plugin, a tools file) is the case's fault, usersim's is
    infrastructure. Frames of the standard library and installed packages are skipped, unless they
    belong to the module `owner` comes from (a plugin installed as a package)."""
    if isinstance(exc, CaseError):
        return "case"
    own = _module_of(owner)
    for module, file in reversed(_walk(exc.__traceback__)):
        if module and module == own and not is_usersim(own):
            return "case"
        if is_usersim(module):
            return "infrastructure"
        if not _is_library(file):
            return "case"
    return "infrastructure" if is_usersim(own) else "case"


def crash_verdict(
    name: str, exc: BaseException, owner: Any, *, reason: str, criterion: str | None = None
) -> Verdict:
    """The `error` verdict for a check or judge that raised, with fault, where and traceback."""
    fault = fault_of(exc, owner)
    if isinstance(exc, CaseError):
        text, where = exc.traceback, exc.where
    else:
        tb = exc.__traceback__
        while fault == "case" and tb is not None and tb.tb_next and is_usersim(_module(tb)):
            tb = tb.tb_next  # the user's code first: usersim's runner frames above it say nothing
        text = "".join(_tb.format_exception(type(exc), exc, tb))
        where = f"{_module_of(owner) or '?'}:{getattr(owner, '__qualname__', type(owner).__name__)}"
    details: dict[str, Any] = {"fault": fault, "where": where}
    if text:
        details["traceback"] = redact(text[-MAX_TRACEBACK:])  # records never carry secrets
    return Verdict(judge=name, verdict="error", reason=reason, criterion=criterion, details=details)


def _module_of(owner: Any) -> str | None:
    return getattr(owner, "__module__", None) or type(owner).__module__


def _module(tb: Any) -> str | None:
    return tb.tb_frame.f_globals.get("__name__")


def _walk(tb: Any) -> list[tuple[str | None, str]]:
    out = []
    while tb is not None:
        frame = tb.tb_frame
        out.append((frame.f_globals.get("__name__"), frame.f_code.co_filename))
        tb = tb.tb_next
    return out


def _is_library(file: str) -> bool:
    if file.startswith("<"):  # <frozen ...>, <string>
        return True
    try:
        path = str(Path(file).resolve())
    except (OSError, ValueError):
        return False
    return any(path.startswith(d + os.sep) for d in _LIBRARY_DIRS)
