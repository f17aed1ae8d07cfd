"""graphs.heap around imports and at exit: the collector paused while modules import (and back on
after, as it was), and the heap frozen at the interpreter's exit once a run happened, so the
shutdown's collection does not walk it."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

from usersim.graphs.heap import collector_paused


def test_the_collector_is_off_while_modules_import_and_back_on_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_comes_back_when_the_import_fails():
    try:
        with collector_paused():
            raise ImportError("a broken plugin")
    except ImportError:
        pass
    assert gc.isenabled()


EXIT = """
import atexit, gc, json, sys
# registered first, so it runs last: after usersim's hook (atexit runs hooks last-in first-out)
atexit.register(lambda: print(json.dumps({"frozen_at_exit": gc.get_freeze_count()})))
from usersim.graphs.heap import quiet_heap
RUNS = int(sys.argv[1])
for _ in range(RUNS):
    with quiet_heap():
        pass
print(json.dumps({"frozen_after_runs": gc.get_freeze_count(), "hooks": atexit._ncallbacks()}))
"""


def _exit(runs: int) -> list[dict]:
    proc = subprocess.run([sys.executable, "-c", EXIT, str(runs)], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_after_a_run_the_heap_is_frozen_at_exit_and_only_then():
    after, at_exit = _exit(2)
    assert after["frozen_after_runs"] == 0  # between runs everything is collectable again
    assert at_exit["frozen_at_exit"] > 1000  # the shutdown's collection skips the heap
    assert after["hooks"] == 2  # the printer and one hook, however many runs


def test_without_a_run_exit_is_left_alone():
    after, at_exit = _exit(0)
    assert after["hooks"] == 1 and at_exit["frozen_at_exit"] == 0
