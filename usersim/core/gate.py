"""The gate: the one definition of a green run, and the one denominator rule every rate uses.

The CLI's exit code, `RunResult.passed`, the pytest plugin, summary.json (its rates, pass^k, flip
rate, long-context accuracy) and the report all come from here.

A record's `status` is the truth; nothing else about a record (e.g. `simulator_suspect`, a display
field) changes whether it counts.

- Green: at least one conversation ran, at least one was judged, and none failed, errored or is
  inconclusive. `unjudged` (some criterion had no judge) beside judged conversations keeps the gate
  green unless `strict`, which makes it red like a failure.
- Nothing judged is not a pass: when conversations ran but none was judged (every one unjudged or
  inconclusive: the pass rate is 0/0) the gate is inconclusive, exit 3, unless `allow_unjudged`
  (`--allow-unjudged`) says a run of unjudged conversations is green.
- Exit codes: 0 green; 1 any conversation failed or errored (or, strict, unjudged), or no
  conversation ran; 3 the only non-passes are inconclusive (the simulator could not give a clean
  conversation even when simulated again), or nothing was judged; 2 usage errors (raised before any
  conversation). `fail_under` replaces "any failed or errored" by "the pass rate is below RATE";
  inconclusive conversations and a run that judged nothing still give exit 3.
- Every rate is passed / judged, judged = passed + failed + error (+ unjudged when strict).
  Left out, and always shown beside the rate: unjudged (unless strict) and inconclusive. So
  unjudged is never counted as passed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.verdict import Status

STATUSES: tuple[Status, ...] = ("passed", "failed", "error", "unjudged", "inconclusive")
EXIT_GREEN: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2  # raised by the CLI (click usage errors) before any conversation runs
EXIT_INCONCLUSIVE: Final = 3
ExitCode = Literal[0, 1, 3]


class Fraction(BaseModel):
    """A rate with its numerator, its denominator and what was left out of the denominator."""

    model_config = ConfigDict(extra="forbid")

    numerator: int = Field(description="Counted as passing (e.g. passed conversations).")
    denominator: int = Field(description="What the rate is over (e.g. passed + failed + error).")
    value: float | None = Field(description="numerator / denominator (0..1, 4 places); null when 0/0.")
    left_out: dict[str, int] = Field(
        default_factory=dict, description="What was not in the denominator -> how many (non-zero only)."
    )
    text: str = Field(description="'6/28 = 21.4% (left out: 2 unjudged)': the rate as shown everywhere.")


def fraction(numerator: int, denominator: int, left_out: Mapping[str, int] | None = None) -> Fraction:
    """The Fraction of `numerator` over `denominator`; zero counts in `left_out` are dropped."""
    kept = {k: n for k, n in (left_out or {}).items() if n}
    value = round(numerator / denominator, 4) if denominator else None
    shown = f"{numerator}/{denominator} = " + (f"{numerator / denominator:.1%}" if denominator else "—")
    if kept:
        shown += " (left out: " + ", ".join(f"{n} {k}" for k, n in kept.items()) + ")"
    return Fraction(numerator=numerator, denominator=denominator, value=value, left_out=kept, text=shown)


@dataclass(frozen=True)
class Tally:
    """How many conversations have each status."""

    passed: int = 0
    failed: int = 0
    error: int = 0
    unjudged: int = 0
    inconclusive: int = 0

    @classmethod
    def of(cls, statuses: Iterable[str]) -> Tally:
        counts = dict.fromkeys(STATUSES, 0)
        for s in statuses:
            if s not in counts:
                raise ValueError(f"unknown status {s!r}; expected one of {', '.join(STATUSES)}")
            counts[s] += 1
        return cls(**counts)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.error + self.unjudged + self.inconclusive

    def counts(self) -> dict[str, int]:
        """Status -> count in the fixed order passed, failed, error, unjudged, inconclusive (zeros dropped)."""
        return {s: n for s in STATUSES if (n := getattr(self, s))}

    def judged(self, strict: bool = False) -> int:
        """The denominator of every rate: passed + failed + error (+ unjudged when strict)."""
        return self.passed + self.failed + self.error + (self.unjudged if strict else 0)

    def left_out(self, strict: bool = False) -> dict[str, int]:
        """What the denominator leaves out: unjudged (unless strict) and inconclusive."""
        return {"unjudged": 0 if strict else self.unjudged, "inconclusive": self.inconclusive}


def pass_rate(tally: Tally, strict: bool = False) -> Fraction:
    """passed / judged, with the left-out statuses."""
    return fraction(tally.passed, tally.judged(strict), tally.left_out(strict))


class Gate(BaseModel):
    """The gate's decision on a set of conversations."""

    model_config = ConfigDict(extra="forbid")

    passed: bool = Field(description="Green: exit_code is 0.")
    exit_code: ExitCode = Field(
        description="0 green, 1 failed or errored, 3 only inconclusive non-passes or nothing judged."
    )
    strict: bool = Field(description="Unjudged conversations turned the gate red like failures.")
    allow_unjudged: bool = Field(
        default=False,
        description="A run that judged nothing (every conversation unjudged) was accepted as green "
        "(--allow-unjudged) instead of exit 3.",
    )
    nothing_judged: bool = Field(
        default=False,
        description="Conversations ran but none was judged (passed + failed + error = 0): the pass rate is 0/0.",
    )
    fail_under: float | None = Field(
        default=None, description="Pass-rate threshold (0..1) that replaced 'any failed or errored'."
    )
    counts: dict[str, int] = Field(description="Status -> conversations (non-zero only).")
    pass_rate: Fraction = Field(description="passed / judged, with what was left out.")
    inconclusive: list[str] = Field(default_factory=list, description="Ids of inconclusive records, all.")
    red: list[str] = Field(
        default_factory=list,
        description="Ids of the records that turn the gate red (failed, error, strict: unjudged).",
    )
    reason: str = Field(description="Why the gate decided so, in one line.")


def _threshold(fail_under: float) -> float:
    """--fail-under takes 0.9 or 90."""
    return fail_under / 100 if fail_under > 1 else fail_under


class Gated(Protocol):
    """What the gate reads of a conversation: a RunRecord, or an `IdStatus` from the store's columns."""

    @property
    def id(self) -> str: ...

    @property
    def status(self) -> str: ...


class IdStatus(NamedTuple):
    """A conversation's id and status alone (building a RunRecord for them costs ~2 ms: pydantic
    inspects every default factory's signature on each model_construct)."""

    id: str
    status: str


NOTHING_JUDGED_HINT = (
    "nothing judged is not a pass (give the run the judge its criteria need, e.g. --judge-model, "
    "or accept it with --allow-unjudged)"
)


def decide(
    records: Iterable[Gated],
    *,
    strict: bool = False,
    fail_under: float | None = None,
    allow_unjudged: bool = False,
) -> Gate:
    """The gate over records; see the module docstring for the rule. `strict` and `allow_unjudged`
    contradict each other (unjudged red vs a run of unjudged ones green): asking both is a ValueError."""
    if strict and allow_unjudged:
        raise ValueError(
            "strict (unjudged fails the gate) and allow_unjudged (unjudged may pass it) contradict"
        )
    records = list(records)
    tally = Tally.of(r.status for r in records)
    rate = pass_rate(tally, strict)
    red_statuses = {"failed", "error"} | ({"unjudged"} if strict else set())
    red = [r.id for r in records if r.status in red_statuses]
    inconclusive = [r.id for r in records if r.status == "inconclusive"]
    what = "failed, errored or were unjudged (--strict)" if strict else "failed or errored"
    nothing_judged = bool(records) and rate.denominator == 0
    blocked = nothing_judged and tally.unjudged > 0 and not allow_unjudged  # all-inconclusive: below
    code: ExitCode
    if not records:
        code, reason = EXIT_FAILED, "no conversation ran"
    elif fail_under is not None:
        need = _threshold(fail_under)
        met = rate.value is None or rate.value >= need
        reason = f"pass rate {rate.text} {'>=' if met else '<'} --fail-under {need:.1%}"
        code = EXIT_FAILED if not met else (EXIT_INCONCLUSIVE if inconclusive or blocked else EXIT_GREEN)
    elif red:
        code, reason = (
            EXIT_FAILED,
            f"{len(red)} of {len(records)} conversation(s) {what}; pass rate {rate.text}",
        )
    else:
        code = EXIT_INCONCLUSIVE if inconclusive or blocked else EXIT_GREEN
        reason = f"pass rate {rate.text}"
    if code == EXIT_INCONCLUSIVE and inconclusive:
        nothing_else = "" if fail_under is not None else " and nothing failed or errored"
        reason += f"; {len(inconclusive)} inconclusive conversation(s){nothing_else}"
    if code != EXIT_FAILED and nothing_judged and tally.unjudged:
        if allow_unjudged:
            reason += f"; nothing was judged ({tally.unjudged} unjudged), accepted by --allow-unjudged"
        else:
            reason += (
                f"; nothing was judged: {tally.unjudged} of {len(records)} conversation(s) unjudged "
                f"(a criterion no judge could decide), {NOTHING_JUDGED_HINT}"
            )
    return Gate(
        passed=code == EXIT_GREEN,
        exit_code=code,
        strict=strict,
        allow_unjudged=allow_unjudged,
        nothing_judged=nothing_judged,
        fail_under=None if fail_under is None else _threshold(fail_under),
        counts=tally.counts(),
        pass_rate=rate,
        inconclusive=inconclusive,
        red=red,
        reason=f"{reason}: exit {code}",
    )
