"""The cyclic garbage collector paced for a command that reads many files and exits.

`usersim validate` and `usersim cases list` allocate the process's long-lived objects (schema
modules, pydantic models and validators, the check modules a case uses) while they read their first
files, and the collector would rescan that growing heap every few hundred allocations: 25-30 ms of a
0.5 s validate, ~100 ms of a cold listing. Paused instead: after the first file what exists is
frozen (gc.freeze: mostly modules, models and validators, alive until the process ends anyway; the
little cyclic garbage of that one file with them), and every `every` files one collection frees
what those files left and freezes the survivors, so each collection looks only at the files since
the last: memory stays bounded however many files a folder has (the exception of a bad file holds
frames with their data until collected).

Frozen objects stay frozen (unfreezing would hand the whole heap to the collection Python runs at
exit, ~50 ms): as with the first command import (usersim/cli/__init__.py), only the process's first
paced block freezes; a later one in the same process (tests, a program calling the CLI) pauses
the collector and collects every `every` files, freezing nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator

EVERY = 50  # files between collections
_FIRST = [True]


@contextlib.contextmanager
def paced(every: int = EVERY) -> Iterator[Callable[[], None]]:
    """Pause the collector for the block; yields `tick`, to call after each file: every `every`-th
    call collects; in the process's first block the first call and those freeze what survived.
    Nothing changes when the collector was off already."""
    if not gc.isenabled():
        yield lambda: None
        return
    freeze, _FIRST[0] = _FIRST[0], False
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if done % every == 0:
            gc.collect()
        if freeze and (done == 1 or done % every == 0):
            gc.freeze()  # the first file's: mostly what lives as long as the process

    gc.disable()
    try:
        yield tick
    finally:
        gc.enable()
