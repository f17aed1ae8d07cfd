"""usersim: persona-driven simulated users talk to your agent; judges score what happened.

    import usersim
    result = usersim.run("cases/refund.yaml", agent=my_agent)
    assert result.passed, result.explain()

`run`, `arun` and `RunResult` are imported on first use so that `import usersim` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["RunResult", "__version__", "arun", "run"]

if TYPE_CHECKING:
    from usersim.api import RunResult, arun, run


def __getattr__(name: str) -> Any:
    if name in ("run", "arun", "RunResult"):
        from usersim import api

        return getattr(api, name)
    raise AttributeError(f"module 'usersim' has no attribute '{name}'")
