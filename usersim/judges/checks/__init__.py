"""Rule checks: the case-file check vocabulary (docs/design.md "Check vocabulary").

validate_check(spec)                         # ValueError naming check / field, did-you-mean
await run_check(spec, transcript=..., case=..., state=...) -> Verdict

Importing this package declares every built-in check type by name (BUILTIN) without importing its
code: a check's module, with its params model, is imported the first time the check is looked up
(validated or run), so validating a case loads only the checks it uses. The names below (Outcome,
check_registry, run_check, ...) are imported on first use as well.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from usersim.core import registry as registries

if TYPE_CHECKING:
    from usersim.judges.checks.context import CheckContext
    from usersim.judges.checks.registry import (
        Outcome,
        check_registry,
        compact,
        evaluate,
        run_check,
        to_verdict,
        validate_check,
    )

# check type -> the module of this package that registers it (`@check_registry.register`) on import;
# tests/judges/test_check_manifest.py holds it to what the modules register
BUILTIN: dict[str, str] = {
    "asked_clarification": "clarification",
    "constraint": "constraint",
    "count": "text",
    "estimates": "estimates",
    "final_state": "final_state",
    "graded": "graded",
    "keywords": "text",
    "memory_recall": "memory",
    "no_leak": "security_leak",
    "no_unauthorized_action": "security_actions",
    "skill_not_triggered": "state",
    "skill_triggered": "state",
    "step_completion": "state",
    "stop_reason": "state",
    "tool_called": "tools",
    "tool_not_called": "tools",
    "tool_order": "tools",
    "turns": "state",
}

for _name, _module in BUILTIN.items():
    registries.checks.register_lazy(_name, f"{__name__}.{_module}")

_EXPORTS = {
    "CheckContext": "usersim.judges.checks.context",
    "Outcome": "usersim.judges.checks.registry",
    "check_registry": "usersim.judges.checks.registry",
    "compact": "usersim.judges.checks.registry",
    "evaluate": "usersim.judges.checks.registry",
    "run_check": "usersim.judges.checks.registry",
    "to_verdict": "usersim.judges.checks.registry",
    "validate_check": "usersim.judges.checks.registry",
}


def __getattr__(name: str) -> Any:
    """The package's public names, imported on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "BUILTIN",
    "CheckContext",
    "Outcome",
    "check_registry",
    "compact",
    "evaluate",
    "run_check",
    "to_verdict",
    "validate_check",
]
