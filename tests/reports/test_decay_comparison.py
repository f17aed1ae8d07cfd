"""The decay report reads decay.json v2: five lines, token cost, SLA marks, and the strategy
comparison page of `usersim decay --strategies`."""

from __future__ import annotations

from usersim.cases.schema import SlaThreshold
from usersim.graphs.decay_strategies import DecayComparison, row_of
from usersim.graphs.decay_summary import summarize_decay
from usersim.reports.html_decay import decay_section
from usersim.reports.html_decay_compare import write_comparison_page

CS = SlaThreshold(scenario="客服 Agent", dimension="memory", min_score=0.8, at_turn=10)


def recs(test: str, scores: dict[int, float], tokens: int = 1000) -> list[dict]:
    return [
        {
            "case_id": f"DECAY-{test}-{n:02d}",
            "score": s,
            "status": "passed",
            "usage": {"agent": {"prompt_tokens": tokens * n}},
        }
        for n, s in scores.items()
    ]


def sweep(memory: dict[int, float], drift: dict[int, float], system: dict, tokens: int, agent: str):
    return summarize_decay(
        recs("memory", memory, tokens) + recs("drift", drift, tokens),
        system=system,
        sla=[(CS, "cs.yaml")],
        agent=agent,
    )


FULL = sweep(
    {3: 1.0, 10: 1.0},
    {3: 1.0, 10: 0.7},
    {"context_strategy": "full", "window_turns": None},
    900,
    "reference:full",
)
WINDOW = sweep(
    {3: 1.0, 10: 0.0},
    {3: 1.0, 10: 0.0},
    {"context_strategy": "window", "window_turns": 4, "profile_injection": False, "external_memory": False},
    300,
    "reference:window-4",
)


def test_one_sweep_shows_the_drift_line_token_cost_and_the_sla_miss():
    html = decay_section(WINDOW.model_dump(mode="json"))
    assert "语义漂移检测率（理解一致性保持）" in html and "drift_stable_lower" in html
    assert "Decay: token cost (agent prompt tokens per conversation) by turns" in html
    assert "memory SLA: 客服 Agent ≥ 80% @ 10 轮" in html  # the dashed SLA line on the chart
    assert "Below SLA: memory: 客服 Agent ≥ 80% @ 10 轮 — below the line at 10 turns (0% at 10 turns)" in html
    assert '<td class="fail">客服 Agent ≥ 80% @ 10 轮: BELOW SLA at 10 turns; 0.0% at 10 turns</td>' in html
    ok = decay_section(FULL.model_dump(mode="json"))
    assert (
        '<td class="pass">客服 Agent ≥ 80% @ 10 轮: met (100.0% at 10 turns)</td>' in ok
        and "Below SLA" not in ok
    )


def test_comparison_page_has_the_seed_columns(tmp_path):
    c = DecayComparison(
        agent="reference",
        turns=[3, 10],
        strategies=[
            row_of("full", "reference:full", tmp_path / "full", FULL),
            row_of("window-4", "reference:window-4", tmp_path / "w", WINDOW),
        ],
        runs={"full": FULL, "window-4": WINDOW},
    )
    assert c.strategies[1].memory_half_life == 10 and c.strategies[0].memory_half_life is None
    assert c.strategies[1].mean_agent_tokens < c.strategies[0].mean_agent_tokens
    page = write_comparison_page(tmp_path / "report.html", c.model_dump(mode="json")).read_text(
        encoding="utf-8"
    )
    for header in (
        "策略",
        "保留轮数",
        "用户画像注入",
        "外部记忆",
        "记忆半衰期",
        "语义漂移稳定区间下限",
        "Token 消耗",
    ):
        assert f"<th>{header}</th>" in page
    assert "<td>&gt; 10</td>" in page  # the full history never fell below half within the sweep
    assert "<td>❌</td>" in page and "<td>all</td>" in page
    assert "Memory score by turns, per strategy" in page and "Drift score by turns, per strategy" in page
    assert "<h3>full — reference:full</h3>" in page and "<h3>window-4 — reference:window-4</h3>" in page
