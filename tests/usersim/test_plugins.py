"""Plugins by entry point: a third-party package adds a check type and a judge without touching
usersim; a broken plugin is named in the error."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from tests.support.cli import usersim
from usersim.core import registry as registries
from usersim.core.registry import PluginError, Registry

PLUGIN = '''
from pydantic import BaseModel, ConfigDict
from usersim.judges.checks import Outcome, check_registry
from usersim.core.verdict import Verdict


class PoliteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str = "请"


@check_registry.register("says_please", PoliteParams)
def says_please(params, ctx):
    """The final reply contains a polite word."""
    final = [m for m in ctx.transcript if m.role == "assistant"][-1].content
    ok = params.word in final
    return Outcome(ok, f"final reply {'contains' if ok else 'lacks'} {params.word!r}")


class LengthJudge:
    name = "reply_length"

    async def __call__(self, *, transcript, case, state):
        n = sum(len(m.content) for m in transcript if m.role == "assistant")
        return [Verdict(judge="reply_length", verdict="pass", reason=f"{n} characters", counts_toward_status=False)]


def make_length_judge(config):
    return LengthJudge()
'''

CASE = """
id: PLUG-01
dimension: B1
title: plugin check
mode: static
input:
  message: 帮我订个酒店
judging:
  scoring: {methods: [auto]}
  checks:
    - says_please: {word: "请"}
"""


@pytest.fixture
def plugin_dist(tmp_path, monkeypatch):
    """An installed distribution 'polite-plugin' with entry points, on sys.path."""
    (tmp_path / "polite_plugin.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    info = tmp_path / "polite_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: polite-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[usersim.checks]\npolite = polite_plugin\n\n[usersim.judges]\nreply_length = polite_plugin:make_length_judge\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # the role registries read entry points once per process: let them read again, then restore.
    # Load them first: restoring a table that was never loaded would leave the registry empty for
    # the tests after this one (the built-in modules are imported by then, so a reload adds nothing)
    for reg in (registries.checks, registries.judges):
        reg.names()
        monkeypatch.setattr(reg, "_items", dict(reg._items))
        monkeypatch.setattr(reg, "_loaded", False)
    yield tmp_path
    sys.modules.pop("polite_plugin", None)


def test_a_plugin_check_validates_and_decides_through_the_cli(plugin_dist, tmp_path):
    case = tmp_path / "plug.yaml"
    case.write_text(CASE, encoding="utf-8")
    assert usersim("validate", str(case)).returncode == 0
    res = usersim(
        "run",
        str(case),
        "--agent",
        "reference",
        "--judge",
        "reply_length",
        "--out",
        str(tmp_path / "o"),
        check=False,
    )

    rec = json.loads((tmp_path / "o" / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    judges = {v["judge"]: v for v in rec["verdicts"]}
    assert judges["says_please"]["verdict"] in {"pass", "fail"}
    assert judges["says_please"]["reason"].startswith("final reply ")
    assert judges["reply_length"]["reason"].endswith("characters")
    assert res.returncode in (0, 1)


def test_builtins_come_from_the_same_entry_points():
    from importlib.metadata import entry_points

    groups = ("agents", "simulators", "judges", "checks", "tools")
    builtin = {
        g: [e.value for e in entry_points(group=f"usersim.{g}") if e.name == "builtin"] for g in groups
    }
    assert builtin == {
        "agents": ["usersim.adapters.catalog"],
        "simulators": ["usersim.simulator.catalog"],
        "judges": ["usersim.judges.select"],
        "checks": ["usersim.judges.checks"],
        "tools": ["usersim.sandbox.tools"],
    }
    assert {"tool_called", "keywords", "constraint"} <= set(registries.checks.names())
    assert {"reference", "openai", "python"} <= set(registries.agents.names())


def test_a_broken_plugin_is_named(tmp_path, monkeypatch):
    info = tmp_path / "broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[usersim.judges]\noops = no_such_module_xyz:make\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        PluginError,
        match=r"judge plugin 'oops' \(no_such_module_xyz:make, entry-point group usersim.judges\)",
    ):
        Registry("judge", "usersim.judges").get("rules")


def test_threads_reading_a_registry_wait_for_the_plugins_being_loaded(monkeypatch):
    """A LangGraph Server runs graph steps on a thread pool: a second thread asking while the
    first loads the entry points used to see an empty registry ("Unknown language 'en'. Available: ")."""
    import threading
    import time

    from usersim.core.registry import Registry

    reg: Registry[str] = Registry("thing", "usersim.test-nothing")

    def slow_load() -> None:
        time.sleep(0.2)  # the first thread is still importing the plugin modules
        reg._items["en"] = "English"

    monkeypatch.setattr(reg, "_load_entry_points", slow_load)
    found: list[str] = []
    threads = [threading.Thread(target=lambda: found.append(reg.get("en"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == ["English"] * 8
