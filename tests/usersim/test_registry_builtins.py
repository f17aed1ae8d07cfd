"""A role's built-in names are found without reading the environment's entry points (a scan of every
installed distribution's metadata); plugins are still found by entry point, when a name is not built
in or the whole list is asked for. Each probe runs `usersim validate` (or a lookup) in a fresh
process with a plugin distribution installed on its path, as a user would have it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from usersim.core.registry import Registry

REPO = Path(__file__).resolve().parents[2]

# validates the files as the console script does; reports the exit code and output, whether the
# entry points were read and whether the plugin modules were imported
_PROBE = """
import contextlib, io, json, sys
from usersim.cli import main
from usersim.core import registry
out = io.StringIO()
with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
    try:
        main(["validate", *sys.argv[1:]])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({
    "code": code,
    "out": out.getvalue(),
    "entry_points_read": registry._all_entry_points.cache_info().currsize > 0,
    "plugins": sorted(m for m in sys.modules if m.startswith("shiny_")),
}))
"""

PLUGIN = '''
from pydantic import BaseModel, ConfigDict

from usersim.judges.checks import Outcome, check_registry
from usersim.sandbox.tools import Args, register


class ShineParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str


@check_registry.register("shines", ShineParams)
def shines(params, ctx):
    """The final reply shines."""
    return Outcome(True, "it shines")


class PolishArgs(Args):
    surface: str


@register("polish_surface", "Polish a surface.", PolishArgs)
def polish_surface(args, ctx):
    return {"polished": args.surface}
'''

CASE = """
id: SHINY-01
dimension: B1
title: a case naming checks and tools
mode: static
input:
  message: 帮我查一下航班
%s
judging:
  scoring: {methods: [auto]}
  checks:
%s
"""


def _site(tmp_path: Path, entry_points: str, module: str | None = PLUGIN) -> Path:
    """A folder holding one installed distribution `shiny-plugin` with these entry points."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    if module is not None:
        (site / "shiny_plugin.py").write_text(textwrap.dedent(module), encoding="utf-8")
    info = site / "shiny_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: shiny-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
    return site


def _validate(tmp_path: Path, site: Path, checks: str, tools: str = "") -> dict:
    case = tmp_path / "case.yaml"
    case.write_text(CASE % (tools, checks), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(case)], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


ENTRY_POINTS = """
[usersim.checks]
shiny = shiny_plugin

[usersim.tools]
shiny = shiny_plugin
"""


def test_built_in_names_need_no_entry_points_and_no_plugin(tmp_path):
    site = _site(tmp_path, ENTRY_POINTS)
    out = _validate(
        tmp_path,
        site,
        "    - tool_called: {tool: search_flights}\n    - keywords: {any: [航班]}",
        "tools: [search_flights]",
    )
    assert out["code"] == 0, out["out"]
    assert not out["entry_points_read"]
    assert out["plugins"] == []  # installed, but nothing the case names comes from it


def test_a_plugin_check_and_tool_are_found_by_entry_point(tmp_path):
    site = _site(tmp_path, ENTRY_POINTS)
    out = _validate(
        tmp_path,
        site,
        "    - shines: {word: 亮}\n    - tool_called: {tool: polish_surface, args: {surface: 桌面}}",
        "tools: [search_flights, polish_surface]",
    )
    assert out["code"] == 0, out["out"]
    assert out["entry_points_read"] and out["plugins"] == ["shiny_plugin"]
    # the plugin's params are validated like a built-in check's
    bad = _validate(tmp_path, site, "    - shines: {wrd: 亮}")
    assert bad["code"] == 2
    assert "judging.checks.0: shines.word: Field required" in bad["out"]
    assert "shines.wrd: unknown field 'wrd'. Did you mean 'word'? Fields: word" in bad["out"]


def test_an_unknown_name_lists_the_plugins_names_too(tmp_path):
    site = _site(tmp_path, ENTRY_POINTS)
    out = _validate(tmp_path, site, "    - shine: {word: 亮}", "tools: [polish_surfac]")
    assert out["code"] == 2
    assert "judging.checks.0: Unknown check 'shine'. Did you mean 'shines'? Available: " in out["out"]
    assert ", shines, " in out["out"] and "tool_called" in out["out"]
    assert "tools.0: unknown tool 'polish_surfac'. Did you mean 'polish_surface'?" in out["out"]
    args = _validate(tmp_path, site, "    - tool_called: {tool: polish_surfac}")
    assert args["code"] == 2
    assert "unknown tool 'polish_surfac'. Did you mean 'polish_surface'?" in args["out"]


def test_a_broken_plugin_does_not_stop_built_in_names_and_is_named_when_it_is_needed(tmp_path):
    site = _site(tmp_path, "[usersim.checks]\noops = shiny_missing_module_xyz\n", module=None)
    ok = _validate(tmp_path, site, "    - keywords: {any: [航班]}")
    assert ok["code"] == 0, ok["out"]
    assert not ok["entry_points_read"]
    bad = _validate(tmp_path, site, "    - polished: {word: 亮}")
    assert bad["code"] == 2
    assert (
        "check plugin 'oops' (shiny_missing_module_xyz, entry-point group usersim.checks) failed to load: "
        "ModuleNotFoundError" in bad["out"]
    ), bad["out"]


_LANG_PROBE = """
import json, sys
from usersim.core import registry
from usersim.lang.resources import languages, language_codes
en = languages.get("en").name
read_for_en = registry._all_entry_points.cache_info().currsize > 0
fr = languages.get("fr")
print(json.dumps({"en": en, "read_for_en": read_for_en, "fr": [fr.code, fr.name], "codes": language_codes()}))
"""


def test_a_language_plugin_is_found_beside_the_built_in_ones(tmp_path):
    site = tmp_path / "site"
    (site / "fr").mkdir(parents=True)
    (site / "shiny_french.py").write_text(
        "from pathlib import Path\nfrom usersim.lang.resources import Language\n"
        "fr = Language(code='fr', name='Français', data_dir=Path(__file__).parent / 'fr')\n",
        encoding="utf-8",
    )
    _site(tmp_path, "[usersim.languages]\nfr = shiny_french:fr\n", module=None)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", _LANG_PROBE], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {
        "en": "English",
        "read_for_en": False,
        "fr": ["fr", "Français"],
        "codes": ["en", "fr", "zh"],
    }


def test_the_built_in_modules_are_the_builtin_entry_points():
    """core/registry.py names each role's built-in module as a string (the modules live in the
    layers above it); they must stay the package's own `builtin` entry points."""
    from importlib.metadata import entry_points

    from usersim.core import registry
    from usersim.lang.resources import languages

    for reg in (registry.agents, registry.simulators, registry.judges, registry.checks, registry.tools):
        (ep,) = [e for e in entry_points(group=str(reg.group)) if e.name == "builtin"]
        assert reg.builtin == ep.value, reg.role
    langs = {e.name: e.value for e in entry_points(group="usersim.languages")}
    assert languages.builtin == "usersim.lang.builtin"
    assert {"zh": "usersim.lang.builtin:zh", "en": "usersim.lang.builtin:en"}.items() <= langs.items()


def test_a_name_is_looked_up_in_the_builtin_module_before_the_entry_points(monkeypatch):
    reg: Registry[str] = Registry("widget", "usersim.test-widgets", builtin="shiny_widgets_builtin")
    module = type(sys)("shiny_widgets_builtin")
    monkeypatch.setitem(sys.modules, "shiny_widgets_builtin", module)
    reg.register("blue")("the built-in blue")
    reads: list[str] = []

    def entry_points() -> None:
        reads.append("read")
        reg._items["red"] = "a plugin's red"

    monkeypatch.setattr(reg, "_load_entry_points", entry_points)
    assert reg.get("blue") == "the built-in blue" and "blue" in reg
    assert reads == []
    assert reg.get("red") == "a plugin's red"
    assert reads == ["read"]
    assert "green" not in reg and reads == ["read"]  # read once per process
    assert reg.names() == ["blue", "red"]
