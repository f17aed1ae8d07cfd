"""The Python API: `usersim.run(cases, agent=...)` -> RunResult. The CLI's `run` and the pytest
plugin go through the same entry (graphs.runner.run_suite).

    import usersim
    result = usersim.run("cases/refund.yaml", agent=my_agent)   # a SPEC string or a callable
    assert result.passed, result.explain()       # the gate `usersim run` exits 0 on
    assert result.passed(strict=True)            # unjudged fails too, as `usersim run --strict`
    result.gate().exit_code                      # 0, 1 or 3, as `usersim run` would exit
    result.passed(allow_unjudged=True)           # a run that judged nothing may pass, as --allow-unjudged
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from usersim.adapters.base import AgentError
from usersim.cases.loader import find_case, load_cases
from usersim.cases.schema import Case
from usersim.core.gate import Gate
from usersim.core.record import RunRecord
from usersim.graphs.records_view import gate_of
from usersim.graphs.runner import make_config, run_suite
from usersim.reports.outcome import outcome_line

CaseLike = str | Path | Case


class Passed:
    """`result.passed`: truthy when the gate is green under the result's default rule, and callable
    for another: `result.passed(strict=True)` (unjudged fails too), `result.passed(fail_under=0.9)`,
    `result.passed(allow_unjudged=True)` (a run whose every conversation is unjudged passes).

    The gate is usersim.core.gate.decide, the same one that sets `usersim run`'s exit code.
    """

    __slots__ = ("_result",)

    def __init__(self, result: RunResult) -> None:
        self._result = result

    def __call__(
        self,
        *,
        strict: bool | None = None,
        fail_under: float | None = None,
        allow_unjudged: bool | None = None,
    ) -> bool:
        return self._result.gate(strict=strict, fail_under=fail_under, allow_unjudged=allow_unjudged).passed

    def __bool__(self) -> bool:
        return self()

    def __eq__(self, other: object) -> bool:
        return bool(self) == other if isinstance(other, bool) else NotImplemented

    def __hash__(self) -> int:
        return hash(bool(self))

    def __repr__(self) -> str:
        return repr(bool(self))


@dataclass
class RunResult:
    """What a run produced: its records, the summary, where the report is, and the counts.

    `records` is a sequence in plan order. From `usersim.run` it is a lazy view of the run folder's
    results.jsonl (graphs.records_view.StoredRecords): `len`, `counts`, `passed` and `gate()` read
    only the statuses; iterating parses one record at a time; indexing or `list(result.records)`
    reads them all into memory. So a 10,000-conversation run returns without holding its transcripts.

    `strict` is the default rule of `passed`, `gate()` and `failed` (set by `usersim.run(...,
    strict=True)` or the pytest plugin's `--usersim-strict`): unjudged conversations fail the gate.
    `allow_unjudged` (`usersim.run(..., allow_unjudged=True)`, as `usersim run --allow-unjudged`): a
    run that judged nothing (every conversation unjudged) passes instead of exit 3.
    """

    records: Sequence[RunRecord]
    summary: dict[str, Any]
    out_dir: Path
    counts: dict[str, int] = field(default_factory=dict)
    strict: bool = False
    allow_unjudged: bool = False

    @property
    def report_path(self) -> Path:
        return self.out_dir / "report.html"

    def gate(
        self,
        *,
        strict: bool | None = None,
        fail_under: float | None = None,
        allow_unjudged: bool | None = None,
    ) -> Gate:
        """The gate's decision (exit code, pass rate with what was left out, why), as `usersim run`
        with the same `--strict` / `--fail-under` / `--allow-unjudged` decides it. The two contradict:
        asking one drops the result's default for the other; asking both is a ValueError."""
        if strict is None:
            strict = self.strict and not allow_unjudged
        allow = (self.allow_unjudged and not strict) if allow_unjudged is None else allow_unjudged
        return gate_of(self.records, strict=strict, fail_under=fail_under, allow_unjudged=allow)

    @property
    def passed(self) -> Passed:
        """Green: at least one conversation ran, one was judged (unless allow_unjudged) and none
        failed, errored or is inconclusive (and, strict, none is unjudged). `bool(result.passed)`,
        or call it: `result.passed(strict=True)`."""
        return Passed(self)

    @property
    def failed(self) -> list[RunRecord]:
        """The conversations that did not pass (failed, error, inconclusive or unjudged)."""
        return [r for r in self.records if r.status != "passed"]

    def explain(self, transcript: bool = True) -> str:
        """Each non-passing conversation with its verdict reasons (and transcript), for a test failure."""
        lines = [
            f"{len(self.records)} conversation(s): {self.counts}; {self.gate().reason}; report: {self.report_path}"
        ]
        for r in self.failed:
            lines.append(outcome_line(r))
            for v in r.verdicts:
                if v.counts_toward_status and v.verdict != "pass":
                    lines.append(f"    {v.judge}: {v.verdict} — {v.reason}")
            if transcript:
                for i, m in enumerate(r.transcript):
                    calls = f" tool_calls={m.tool_calls}" if m.tool_calls else ""
                    lines.append(f"    [{i}] {m.role}: {m.content[:300]}{calls}")
        return "\n".join(lines)


def resolve_cases(cases: CaseLike | Iterable[CaseLike]) -> list[Case]:
    """Case objects from files, folders, case ids of the bundled library, or Case objects."""
    items = [cases] if isinstance(cases, (str, Path, Case)) else list(cases)
    out: list[Case] = []
    for item in items:
        if isinstance(item, Case):
            out.append(item)
        elif Path(item).exists():
            out.extend(load_cases([item]))
        else:
            out.append(find_case(str(item)))
    if not out:
        raise ValueError("no cases selected")
    return out


async def arun(
    cases: CaseLike | Iterable[CaseLike],
    *,
    agent: str | Callable[..., Any] = "reference",
    simulator: str = "rule",
    judge_model: str | None = None,
    out: str | Path | None = None,
    strict: bool = False,
    allow_unjudged: bool = False,
    **options: Any,
) -> RunResult:
    """`run` for code that already has an event loop (async tests, notebooks)."""
    if strict and allow_unjudged:  # before any conversation runs, as the CLI's usage error
        raise ValueError("strict=True and allow_unjudged=True contradict: choose one")
    if isinstance(agent, str):
        spec, fn = agent, None
    elif callable(agent):  # held by the run plan, not a global table: it may even cross to Ray workers
        spec, fn = f"callable:{getattr(agent, '__qualname__', None) or type(agent).__name__}", agent
    else:
        raise AgentError(f"agent must be a SPEC string or a callable, not {type(agent).__name__}")
    cfg = make_config(
        agent=spec,
        agent_callable=fn,
        simulator=simulator,
        judge_model=judge_model,
        **{"progress": False, **options},
    )
    out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="usersim-run-"))
    records = await run_suite(resolve_cases(cases), cfg, out_dir)
    summary_file = out_dir / "summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.is_file() else {}
    counts = records.tally().counts()
    return RunResult(
        records=records,
        summary=summary,
        out_dir=out_dir,
        counts=counts,
        strict=strict,
        allow_unjudged=allow_unjudged,
    )


def run(
    cases: CaseLike | Iterable[CaseLike],
    *,
    agent: str | Callable[..., Any] = "reference",
    simulator: str = "rule",
    judge_model: str | None = None,
    out: str | Path | None = None,
    strict: bool = False,
    allow_unjudged: bool = False,
    **options: Any,
) -> RunResult:
    """Run cases against an agent and judge them.

    cases: a case file, a folder, a bundled case id ("C2-E2E-04"), a Case, or a list of these.
    agent: an agent SPEC ("reference", "openai:MODEL", "python:mod:fn", "http://...") or a callable
        `(messages, tools) -> assistant message dict` (sync or async).
    simulator: "rule" (offline) or "openai:MODEL"; judge_model: "openai:MODEL" or None.
    out: the run folder (default: a new temporary folder).
    strict: the default rule of `result.passed`: unjudged conversations fail the gate too (as
        `usersim run --strict`); `result.passed(strict=...)` asks the other rule.
    allow_unjudged: a run whose every conversation is unjudged passes (as `usersim run
        --allow-unjudged`); by default nothing judged is not a pass (exit 3).
    options: any RunConfig field — repeats, lengths, positions, concurrency, seed, resume,
        extra_judges, max_tool_rounds, ...
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            arun(
                cases,
                agent=agent,
                simulator=simulator,
                judge_model=judge_model,
                out=out,
                strict=strict,
                allow_unjudged=allow_unjudged,
                **options,
            )
        )
    raise RuntimeError("usersim.run() was called inside a running event loop; use `await usersim.arun(...)`")
