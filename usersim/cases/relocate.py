"""Moving case data to another folder: the file references in it (environment state, python tool
modules, policy, persona) rewritten relative to the new file, so a case written elsewhere
(`usersim promote`, `usersim import --environment`) finds the same files, and a folder of them can
be copied anywhere together with those files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def relative_to(target: Path, folder: Path) -> str:
    """`target` as a path relative to `folder` (POSIX separators), or absolute when no relative
    path exists (another drive)."""
    try:
        return Path(os.path.relpath(target.resolve(), folder.resolve())).as_posix()
    except ValueError:
        return target.resolve().as_posix()


def _moved(value: str, src: Path, dst: Path) -> str:
    """A file reference written relative to `src`, rewritten relative to `dst` (unchanged when it
    names no existing file: an importable module, inline text)."""
    path = Path(value) if Path(value).is_absolute() else src / value
    return relative_to(path, dst) if path.is_file() else value


def _python(spec: str, src: Path, dst: Path) -> str:
    module, sep, fn = spec.rpartition(":")
    if not sep:
        module, fn = spec, ""
    candidates = [module] if module.endswith(".py") else [module.replace(".", "/") + ".py"]
    for c in candidates:
        path = Path(c) if Path(c).is_absolute() else src / c
        if path.is_file():
            return relative_to(path, dst) + (f":{fn}" if sep else "")
    return spec


def relocate(data: dict[str, Any], src: Path, dst: Path) -> dict[str, Any]:
    """A copy of raw case data read in folder `src`, its file references rewritten for folder `dst`."""
    out = dict(data)
    env = out.get("environment")
    if isinstance(env, dict):
        env = dict(env)
        if isinstance(env.get("state"), str):
            env["state"] = _moved(env["state"], src, dst)
        tools = []
        for t in env.get("tools") or []:
            if isinstance(t, dict) and isinstance(t.get("python"), str):
                t = {**t, "python": _python(t["python"], src, dst)}
            tools.append(t)
        if "tools" in env:
            env["tools"] = tools
        out["environment"] = env
    for key in ("policy", "persona"):
        value = out.get(key)
        if (
            isinstance(value, str)
            and "\n" not in value
            and value.strip().endswith((".md", ".txt", ".yaml", ".yml"))
        ):
            out[key] = _moved(value.strip(), src, dst)
    return out
