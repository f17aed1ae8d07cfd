"""The garbage collector while a run's conversations play.

A conversation allocates tens of thousands of short-lived objects (messages, pydantic models,
LangGraph's per-step tasks and checkpoints), and many live long enough (the whole conversation) to
be promoted to the oldest generation. With the interpreter's default thresholds that triggers a
full collection every few dozen conversations, and each one walks the whole heap — every module,
schema and cached reading imported before the run — about 100 ms each time: measured 0.25 ms of
CPU per model call, about 6% of the harness's cost, spent proving that imported modules are alive.

`quiet_heap()` around the run: the heap that exists when the run starts is frozen (`gc.freeze`:
never scanned, never freed by the collector — it was alive anyway) and the youngest generation's
threshold raised, so fewer collections promote a conversation's state on its way out. Reference
counting still frees every acyclic object at once; cycles are still collected, just less often.
Everything is restored when the last overlapping run ends.

At the interpreter's exit, after a run: the whole heap is frozen (an `atexit` hook, registered by
the process's first run). CPython's shutdown otherwise collects the full heap — every module,
class and schema, all about to go — ~0.25 s of CPU after `usersim run` or a script's
`usersim.arun`, a tenth of a 50-conversation run. Reference counting and module teardown still
free what they free; only cyclic garbage left at exit is not collected, which CPython never
promises to collect at shutdown either.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG_THRESHOLD = 10_000  # allocations between youngest-generation collections (the default is 700)

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None
_exit_hook: list[bool] = []  # registered once per process


@contextlib.contextmanager
def quiet_heap() -> Iterator[None]:
    """Freeze the pre-run heap and collect the young generation less often until the block ends
    (re-entrant and thread-safe: nested or overlapping runs restore the collector once, at the end)."""
    global _depth, _saved
    with _lock:
        _depth += 1
        if _depth == 1:
            if not _exit_hook:
                _exit_hook.append(True)
                atexit.register(gc.freeze)  # the shutdown's collection skips the heap (see above)
            _saved = gc.get_threshold()
            gc.freeze()
            if _saved[0]:  # 0: the caller turned automatic collection off; leave it off
                gc.set_threshold(max(_saved[0], YOUNG_THRESHOLD), *_saved[1:])
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()  # back into the oldest generation: collectable again
                _saved = None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for a block that imports modules: their import allocates ~10^5-10^6
    objects that live as long as the process (classes, pydantic schemas, langgraph, langchain-core),
    and the collector would rescan that growing heap again and again (~0.15 s of CPU for the
    conversation graph's import). Back on afterwards, unless it was off already; nothing is frozen."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
