"""The built-in tools are declared by name (usersim.sandbox.tools.BUILTIN) and their family module is
imported when a tool is first looked up: the declaration matches what the modules register, a case
naming no built-in tool is validated without importing any, and a misspelt tool name is still told
with every tool listed."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import usersim.sandbox.tools as tools_pkg
from usersim.core import registry as registries

REPO = Path(__file__).resolve().parents[2]
FAMILIES = sorted(f"usersim.sandbox.tools.{m.name}" for m in pkgutil.iter_modules(tools_pkg.__path__))


def test_the_declared_tools_are_exactly_what_the_families_register():
    for name in FAMILIES:
        importlib.import_module(name)
    registered = {
        n: registries.tools.get(n).run.__module__
        for n in registries.tools.names()
        if registries.tools.get(n).run.__module__ in FAMILIES
    }
    assert registered == {n: f"usersim.sandbox.tools.{m}" for n, m in tools_pkg.BUILTIN.items()}
    assert set(tools_pkg.DEFAULT_TOOLS) >= set(tools_pkg.BUILTIN) - {"load_skill"}


_PROBE = """
import contextlib, io, json, sys
from usersim.cli import main
out = io.StringIO()
with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
    try:
        main(["validate", sys.argv[1]])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(),
                  "families": sorted(m for m in sys.modules if m.startswith("usersim.sandbox.tools."))}))
"""

CASE = """
id: TOOLS-01
dimension: B1
title: tools named
mode: static
tools: [%s]
input:
  message: 明天上海天气怎么样
judging:
  scoring: {methods: [auto]}
"""


def _validate(tmp_path: Path, tools: str) -> dict:
    case = tmp_path / "case.yaml"
    case.write_text(textwrap.dedent(CASE % tools), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(case)], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_case_is_validated_importing_only_the_tools_it_names(tmp_path):
    assert _validate(tmp_path, "")["families"] == []
    out = _validate(tmp_path, "maps_weather")
    assert out["code"] == 0, out["out"]
    assert out["families"] == []  # the name is known without its code


def test_a_misspelt_tool_is_named_with_a_suggestion(tmp_path):
    out = _validate(tmp_path, "maps_wether")
    assert out["code"] == 2
    assert "tools.0: unknown tool 'maps_wether'. Did you mean 'maps_weather'?" in out["out"]
