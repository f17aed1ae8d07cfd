"""usersim: persona-driven simulated users talk to your agent; judges score what happened.

    import usersim
    result = usersim.run("cases/refund.yaml", agent=my_agent)
    assert result.passed, result.explain()

`run`, `arun` and `RunResult` are imported on first use so that `import usersim` stays cheap.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["RunResult", "__version__", "arun", "run"]

if TYPE_CHECKING:
    from usersim.api import RunResult, arun, run


def __getattr__(name: str) -> Any:
    if name in ("run", "arun", "RunResult"):
        return getattr(_api(), name)
    raise AttributeError(f"module 'usersim' has no attribute '{name}'")


def _api() -> Any:
    """usersim.api, imported the first time with the cyclic collector paused (graphs.heap: its
    imports are ~10^5 long-lived objects the collector would rescan as the heap grows)."""
    if "usersim.api" in sys.modules:
        return sys.modules["usersim.api"]
    from usersim.graphs.heap import collector_paused

    with collector_paused():
        from usersim import api
    return api
