"""Rule checks: the case-file check vocabulary (docs/design.md "Check vocabulary").

validate_check(spec)                         # ValueError naming check / field, did-you-mean
await run_check(spec, transcript=..., case=..., state=...) -> Verdict
"""

from usersim.judges.checks import (  # noqa: F401  register
    clarification,
    constraint,
    estimates,
    final_state,
    graded,
    memory,
    security_actions,
    security_leak,  # noqa: F401  register no_leak
    state,
    text,
    tools,
)
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

__all__ = [
    "CheckContext",
    "Outcome",
    "check_registry",
    "compact",
    "evaluate",
    "run_check",
    "to_verdict",
    "validate_check",
]
