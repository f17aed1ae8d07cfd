"""Check types are declared by name and imported when first looked up (usersim.judges.checks.BUILTIN):
the declaration matches what the modules register, validating a case loads only the checks it uses,
and what a user sees is unchanged: an unknown name's did-you-mean with every check listed, a bad
field named, a plugin's check found. The import checks run in a fresh process, as `usersim validate`
starts."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import usersim.judges.checks as checks_pkg
from usersim.core import registry as registries
from usersim.core.registry import PluginError, Registry

REPO = Path(__file__).resolve().parents[2]
CHECK_MODULES = sorted(f"usersim.judges.checks.{m.name}" for m in pkgutil.iter_modules(checks_pkg.__path__))

# validates the given case files as the console script does; prints the exit code, what the command
# printed, and which check modules (and the judge layer's models) it imported
_PROBE = """
import contextlib, io, json, sys
from usersim.cli import main
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
    try:
        main(["validate", *sys.argv[1:]])
    except SystemExit as exc:
        code = exc.code
loaded = sorted(m for m in sys.modules if m.startswith("usersim.judges"))
print(json.dumps({"code": code, "out": err.getvalue(), "loaded": loaded}))
"""


def _validate(tmp_path: Path, body: str, *, extra_path: Path | None = None) -> dict:
    case = tmp_path / "case.yaml"
    case.write_text(textwrap.dedent(body), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(case)], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


CASE = """
id: LAZY-01
dimension: B1
title: one tool check
mode: static
input:
  message: 帮我查一下航班
judging:
  scoring: {methods: [auto]}
  checks:
%s
"""


def test_the_declared_names_are_exactly_what_the_modules_register():
    for name in CHECK_MODULES:
        importlib.import_module(name)
    registered = {
        n: registries.checks.get(n).fn.__module__
        for n in registries.checks.names()
        if registries.checks.get(n).fn.__module__.startswith("usersim.judges.checks.")
    }
    declared = {n: f"usersim.judges.checks.{m}" for n, m in checks_pkg.BUILTIN.items()}
    assert registered == declared


def test_validating_a_case_imports_only_the_checks_it_uses(tmp_path):
    out = _validate(tmp_path, CASE % "    - tool_called: {tool: search_flights}")
    assert out["code"] == 0, out["out"]
    loaded = set(out["loaded"])
    assert "usersim.judges.checks.tools" in loaded
    unused = {
        f"usersim.judges.checks.{m}" for m in ("clarification", "constraint", "graded", "security_leak")
    }
    unused |= {"usersim.judges.checks.security_actions", "usersim.judges.checks.state"}
    assert not loaded & unused, sorted(loaded & unused)
    assert "usersim.judges.base" not in loaded  # the judge layer's models: not needed to validate


def test_an_unknown_check_lists_every_check_before_any_is_imported(tmp_path):
    out = _validate(tmp_path, CASE % "    - tool_caled: {tool: search_flights}")
    assert out["code"] == 2
    available = ", ".join(sorted(checks_pkg.BUILTIN))
    assert (
        f"judging.checks.0: Unknown check 'tool_caled'. Did you mean 'tool_called'? Available: {available}"
        in out["out"]
    )
    assert not [m for m in out["loaded"] if m in CHECK_MODULES and not m.endswith((".registry", ".context"))]


def test_a_lazily_imported_check_still_validates_its_params(tmp_path):
    out = _validate(tmp_path, CASE % "    - keywords: {al: [航班]}")
    assert out["code"] == 2
    assert "judging.checks.0: keywords.al: unknown field 'al'. Did you mean 'all'?" in out["out"]
    out = _validate(tmp_path, CASE % "    - turns: {max: -1}")
    assert out["code"] == 2 and "judging.checks.0: turns.max:" in out["out"]


def test_a_plugin_check_by_entry_point_is_found_in_a_fresh_process(tmp_path):
    plugin = tmp_path / "site"
    plugin.mkdir()
    (plugin / "polite_check.py").write_text(
        textwrap.dedent(
            '''
            from pydantic import BaseModel, ConfigDict
            from usersim.judges.checks import Outcome, check_registry

            class Params(BaseModel):
                model_config = ConfigDict(extra="forbid")
                word: str

            @check_registry.register("says_please", Params)
            def says_please(params, ctx):
                """The final reply says a polite word."""
                return Outcome(True, "ok")
            '''
        ),
        encoding="utf-8",
    )
    info = plugin / "polite_check-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: polite-check\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[usersim.checks]\npolite = polite_check\n", encoding="utf-8")
    good = _validate(tmp_path, CASE % "    - says_please: {word: 请}", extra_path=plugin)
    assert good["code"] == 0, good["out"]
    bad = _validate(tmp_path, CASE % "    - says_please: {wrd: 请}", extra_path=plugin)
    assert bad["code"] == 2
    assert "says_please.wrd: unknown field 'wrd'. Did you mean 'word'?" in bad["out"]


@pytest.fixture
def module_named(monkeypatch):
    """A module importable by name (in sys.modules only after its first import) running `code`."""

    def make(name: str, code: str) -> str:
        finder_code = compile(textwrap.dedent(code), name, "exec")

        class Finder:
            @staticmethod
            def find_spec(fullname, path=None, target=None):
                if fullname != name:
                    return None
                import importlib.util

                class Loader:
                    def create_module(self, spec):
                        return None

                    def exec_module(self, module: types.ModuleType) -> None:
                        exec(finder_code, module.__dict__)

                return importlib.util.spec_from_loader(name, Loader())

        monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    return make


def test_a_lazy_name_is_imported_on_first_lookup_and_its_faults_are_named(module_named):
    reg: Registry = Registry("widget")
    module_named("lazy_widgets_ok", "import sys\nsys.modules['lazy_widgets_ok'].imported = True")
    reg.register_lazy("blue", "lazy_widgets_ok")
    assert reg.names() == ["blue"] and "blue" in reg
    assert "lazy_widgets_ok" not in sys.modules  # listed and found without importing it
    with pytest.raises(PluginError, match="widget 'blue': importing lazy_widgets_ok did not register it"):
        reg.get("blue")

    module_named(
        "lazy_widgets_reg", "from tests.judges.test_check_manifest import REG\nREG.register('red')(42)"
    )
    globals()["REG"] = reg
    reg.register_lazy("red", "lazy_widgets_reg")
    assert reg.get("red") == 42 and reg.get("red") == 42

    module_named("lazy_widgets_bad", "raise RuntimeError('half-installed')")
    reg.register_lazy("green", "lazy_widgets_bad")
    with pytest.raises(
        PluginError, match=r"widget 'green' \(lazy_widgets_bad\) failed to load: RuntimeError"
    ):
        reg.get("green")
    with pytest.raises(KeyError, match="Unknown widget 'gren'. Did you mean 'green'?"):
        reg.get("gren")


def test_a_declaration_never_replaces_a_registered_item():
    reg: Registry = Registry("widget")
    reg.register("blue")("real")
    reg.register_lazy("blue", "no.such.module")
    assert reg.get("blue") == "real"
