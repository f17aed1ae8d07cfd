"""usersim/cli/collector.py: the cyclic collector paused while a command reads files, run every N
files so cyclic garbage (a bad file's exception and its frames) does not pile up, and back on
afterwards."""

from __future__ import annotations

import gc
import weakref

import pytest

from usersim.cli import collector


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def _cycles(n: int) -> list[weakref.ref[Node]]:
    return [weakref.ref(Node()) for _ in range(n)]


@pytest.fixture
def later_block(monkeypatch):
    """As in a process that ran a paced block before (this test process): nothing is frozen."""
    monkeypatch.setattr(collector, "_FIRST", [False])


def test_garbage_is_collected_every_n_files_and_the_collector_comes_back(later_block):
    assert gc.isenabled()
    frozen = gc.get_freeze_count()  # (an earlier command in this process may have frozen some)
    with collector.paced(every=3) as tick:
        assert not gc.isenabled()
        first = _cycles(20)
        tick()
        tick()
        assert all(r() is not None for r in first)  # paused: the cycles are still there
        tick()  # the 3rd file: one collection
        assert all(r() is None for r in first)
        second = _cycles(20)
        tick()
        tick()
        assert all(r() is not None for r in second)
        tick()
        assert all(r() is None for r in second)
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # a later block freezes nothing


def test_the_collector_comes_back_when_the_block_raises(later_block):
    with pytest.raises(RuntimeError), collector.paced() as tick:
        tick()
        raise RuntimeError("a file broke the command")
    assert gc.isenabled()


def test_nothing_changes_when_the_collector_was_off(monkeypatch):
    monkeypatch.setattr(collector, "_FIRST", [True])
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        with collector.paced(every=1) as tick:
            tick()
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.enable()
    assert collector._FIRST == [True]  # the first real block still freezes


def test_the_first_block_of_a_process_freezes_what_the_first_file_loaded(tmp_path):
    """In a fresh process (as `usersim validate` runs): after the first file the long-lived objects
    are frozen, so later collections skip them; garbage of later files is still collected."""
    import json
    import subprocess
    import sys

    code = """
import gc, json, weakref
from usersim.cli import collector
class Node:
    def __init__(self):
        self.me = self
with collector.paced(every=2) as tick:
    tick()
    frozen = gc.get_freeze_count()
    later = [weakref.ref(Node()) for _ in range(10)]
    tick()
    collected = all(r() is None for r in later)
print(json.dumps({"frozen": frozen, "collected": collected, "enabled": gc.isenabled()}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    assert out["frozen"] > 1000 and out["collected"] and out["enabled"], out
