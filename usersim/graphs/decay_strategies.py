"""Seed 003's context-strategy comparison (上下文窗口策略对比表): the same decay sweep for each
context strategy of one agent (or for several agent SPECs), and one table of what each costs and
keeps — memory half-life, reference fail point, stable intervals, token cost, 用户画像注入 and
外部记忆 — in DIR/decay.json and DIR/report.html, each strategy's own sweep in DIR/<strategy>/.

Token cost is what the agent reports using (usage.agent.prompt_tokens per conversation, mean over
the sweep); the reference agent reports the tokens of the context its strategy kept. The profile
and memory columns are the agent's own description of its configuration (`describe()`), because
the seed asks that the comparison state them rather than assume them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import SlaThreshold
from usersim.graphs.decay import Runner, run_decay
from usersim.graphs.decay_summary import DecaySummary

_SCHEME = re.compile(r"^[a-z][a-z0-9_+-]*:")


def strategy_spec(agent: str, strategy: str) -> str:
    """The agent SPEC for one strategy: a full SPEC as given (it has a scheme, `openai:m`), else the
    strategy as an option of `agent` (`reference` + `window-4` -> `reference:window-4`)."""
    strategy = strategy.strip()
    if _SCHEME.match(strategy) or strategy == agent.split(":", 1)[0]:
        return strategy
    return f"{agent},{strategy}" if ":" in agent else f"{agent}:{strategy}"


def slug(strategy: str) -> str:
    """A folder name for a strategy's sweep."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", strategy.strip()).strip("_") or "strategy"


class StrategyRow(BaseModel):
    """One row of the comparison table."""

    model_config = ConfigDict(extra="forbid")

    strategy: str = Field(description="The strategy as given on the command line.")
    agent: str = Field(description="The agent SPEC it ran as.")
    out_dir: str = Field(description="Folder of this strategy's own sweep (results, decay.json, report).")
    context_strategy: str | None = Field(default=None, description="As the agent describes it.")
    window_turns: int | None = Field(default=None, description="Turns kept verbatim (保留轮数).")
    profile_injection: bool | None = Field(default=None, description="用户画像注入.")
    external_memory: bool | None = Field(default=None, description="外部记忆.")
    memory_half_life: int | None = Field(default=None, description="记忆半衰期 (turns).")
    reference_fail_point: int | None = Field(default=None, description="指代消解失效点 (turns).")
    switch_stable_lower: int | None = Field(default=None, description="话题切换稳定区间下限.")
    conflict_stable_lower: int | None = Field(default=None, description="冲突处理稳定区间下限.")
    drift_stable_lower: int | None = Field(default=None, description="语义漂移稳定区间下限.")
    mean_agent_tokens: float | None = Field(
        default=None, description="Token 消耗: mean agent prompt tokens per conversation."
    )
    memory_at_longest: float | None = Field(
        default=None, description="Memory score at the longest turn count swept."
    )
    sla_violations: list[str] = Field(default_factory=list, description="SLAs this strategy misses.")


class DecayComparison(BaseModel):
    """DIR/decay.json of `usersim decay --strategies`."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=2, description="decay.json format version.")
    kind: str = Field(default="strategies", description="A strategy comparison (not one sweep).")
    agent: str = Field(description="The agent the strategies are options of.")
    turns: list[int] = Field(description="Turn counts swept.")
    strategies: list[StrategyRow] = Field(description="The comparison table, in the order given.")
    runs: dict[str, DecaySummary] = Field(description="Each strategy's full decay summary.")


def row_of(strategy: str, spec: str, out_dir: Path, s: DecaySummary) -> StrategyRow:
    sys: dict[str, Any] = s.system
    memory = s.curves.get("memory")
    last = memory.points[-1].score if memory and memory.points else None
    return StrategyRow(
        strategy=strategy,
        agent=spec,
        out_dir=str(out_dir),
        context_strategy=sys.get("context_strategy"),
        window_turns=sys.get("window_turns"),
        profile_injection=sys.get("profile_injection"),
        external_memory=sys.get("external_memory"),
        memory_half_life=s.memory_half_life,
        reference_fail_point=s.reference_fail_point,
        switch_stable_lower=s.switch_stable_lower,
        conflict_stable_lower=s.conflict_stable_lower,
        drift_stable_lower=s.drift_stable_lower,
        mean_agent_tokens=s.mean_agent_tokens,
        memory_at_longest=last,
        sla_violations=s.sla_violations,
    )


async def run_strategies(
    *,
    agent: str,
    strategies: list[str],
    out_dir: str,
    turns: list[int],
    tests: list[str] | None = None,
    repeats: int = 3,
    seed: int = 0,
    concurrency: int = 4,
    resume: bool = False,
    sla: list[tuple[SlaThreshold, str | None]] | None = None,
    runner: Runner | None = None,
) -> DecayComparison:
    """One decay sweep per strategy (same cases, seed and repeats), then the comparison table."""
    from usersim.adapters.base import load_agent

    specs = [(s, strategy_spec(agent, s)) for s in strategies]
    seen: set[str] = set()
    for _, spec in specs:
        load_agent(spec)  # a bad strategy fails before any sweep runs
        if spec in seen:
            raise ValueError(f"--strategies names {spec} twice")
        seen.add(spec)
    out = Path(out_dir)
    rows, runs = [], {}
    for strategy, spec in specs:
        sub = out / slug(strategy)
        summary = await run_decay(
            agent=spec,
            out_dir=str(sub),
            turns=turns,
            tests=tests,
            repeats=repeats,
            seed=seed,
            concurrency=concurrency,
            resume=resume,
            runner=runner,
            sla=sla,
        )
        rows.append(row_of(strategy, spec, sub, summary))
        runs[strategy] = summary
    comparison = DecayComparison(agent=agent, turns=sorted(turns), strategies=rows, runs=runs)
    out.mkdir(parents=True, exist_ok=True)
    (out / "decay.json").write_text(comparison.model_dump_json(indent=2), encoding="utf-8")
    from usersim.reports.html_decay_compare import write_comparison_page

    write_comparison_page(out / "report.html", comparison.model_dump(mode="json"))
    return comparison
