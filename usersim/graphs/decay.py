"""Decay sweeps (seed 003): how memory, reference resolution, topic switching, conflict handling
and semantic drift hold up as the conversation gets longer.

For each turn count n the seed's four tests become static scripted cases that the agent answers
live: the probe goes in turn 1, then n - 1 turns of unrelated small talk (capped at 12, as the
seed's code does with its 12 filler topics), then the last turn asks for what was planted (memory),
refers to it with a pronoun (reference), switches back to it (switch) or changes the instruction
(conflict, four levels averaged as the seed does). Semantic drift (维度五, 理解一致性保持) follows
the seed's own test: a precise instruction, then n - 1 follow-up questions about its details that
never restate it (用户追问细节), then a request to sum up; the drift judge scores the whole
conversation on the seed's scale (100 anchored / 70 drifted but back / 30 drifted / 0 forgotten)
and its score is the point. The checks are the seed's: recall score;
销售/数据/分析 for the reference; 100 for the switch; for the instruction conflict 30 and no stray 5. The summary
follows the seed's terms: memory half-life (memory is roughly exponential), reference fail point
(step-shaped at the window edge) and stable-interval lower bounds (switch, conflict, drift) — each
the first turn count whose mean score drops below 0.5 — with the agent's system configuration
recorded beside every curve, because the curve measures that configuration, not the bare model
(graphs.decay_summary; strategy comparisons in graphs.decay_strategies, SLAs in graphs.decay_sla).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Awaitable, Callable
from typing import Any

from usersim.cases.schema import Case, SlaThreshold
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.graphs.decay_summary import (
    DECAY_TESTS,
    HALF,
    DecayCurve,
    DecayPoint,
    DecaySummary,
    expected_recall,
    summarize_decay,
)

__all__ = [
    "DECAY_TESTS",
    "HALF",
    "DecayCurve",
    "DecayPoint",
    "DecaySummary",
    "build_decay_case",
    "build_decay_cases",
    "expected_recall",
    "run_decay",
    "summarize_decay",
]

SEED_FILE = "003_a968a190fd70a84b.txt"
DEFAULT_TURNS = [3, 5, 7, 8, 10, 12, 15, 20]
CONFLICT_LEVELS = ("instruction", "goal", "constraint", "implicit")
FILLER_CAP = 12  # seed 003 test_memory: range(min(n_turns - 1, len(filler_topics))) with 12 topics

# The seed's filler topics (test_memory), then more of the same kind so 20 turns never repeat one.
FILLER_TOPICS = [
    "今天天气怎么样？",
    "给我讲个笑话。",
    "计算 1+1 等于几？",
    "Python 是什么语言？",
    "帮我写一首诗。",
    "什么是人工智能？",
    "推荐一本好书。",
    "怎么做番茄炒蛋？",
    "地球为什么是圆的？",
    "什么是区块链？",
    "如何学习编程？",
    "什么是机器学习？",
    "推荐一部好看的电影。",
    "怎么泡一杯好喝的绿茶？",
    "周末适合做什么运动？",
    "绿萝怎么养才长得好？",
    "彩虹是怎么形成的？",
    "怎么缓解眼睛疲劳？",
    "推荐几首适合放松的音乐。",
    "猫为什么喜欢钻纸箱？",
    "怎么做一杯手冲咖啡？",
    "早睡早起有什么好处？",
]
# Arithmetic small talk would blur tests whose probe is itself a calculation.
_NO_ARITHMETIC = {"switch", "conflict"}

# 维度五: the seed's method (精准指令 -> 追问细节 -> 5-10 轮后检查是否还锚定在原话题上) in a domain every
# agent with the default tools can serve; follow-ups are detail questions that name no city, date
# or product, so only an agent that still holds the instruction can answer on topic.
DRIFT_INSTRUCTION = "帮我查一下 6 月 15 日从上海飞大阪的机票，一个人，经济舱。"
DRIFT_FOLLOW_UPS = [
    "有直飞的吗？",
    "最便宜的是哪一班？",
    "行李怎么算？",
    "早上出发的有吗？",
    "大概要飞多久？",
    "哪一班到得最早？",
    "晚上出发的呢？",
    "有没有全服务航空的？",
    "改成两个人呢？",
    "要是只带手提行李呢？",
    "哪一班性价比最高？",
    "能帮我比较一下前两班吗？",
]
DRIFT_CHECK = "好，最后把刚才的结果汇总一下。"
DRIFT_THRESHOLD = 70  # seed 003: 70 = 轻微发散但能拉回, the lowest level that still holds the intent

_MEMORY_FACTS = {"name": "张三", "location": "北京", "job": "测试工程师"}
RECALL_QUESTION = "你还记得我叫什么名字吗？在哪里工作？做什么的？"

REFERENCE_WORDS = ("销售", "数据", "分析")  # seed 003 test_reference: any of them counts
# Seed 003 test_conflict (instruction): "30" in the reply and no "5" once "5*6" is removed — a stray 5
# means the old 2+3 answer is still there. The new instruction restated (5*6, 5 × 6, 6×5, 5乘以6)
# is not a stray 5; 15, 50 or 0.5 are other numbers, not the old answer.
STRAY_FIVE = r"(?<![\d.])(?<![*×xX✕乘])(?<![*×xX✕]\s)(?<!乘以)5(?![\d.])(?!\s*(?:[*×xX✕]|乘以?)\s*6)"
_CONFLICTS: dict[str, tuple[str, str, list[dict[str, Any]]]] = {
    "instruction": (
        "帮我计算 2+3。",
        "不对，改成计算 5*6。",
        [{"keywords": {"any": ["30"]}}, {"count": {"pattern": STRAY_FIVE, "max": 0}}],
    ),
    "goal": (
        "帮我分析华东区销售额。",
        "不对，改成分析全国。",
        [{"keywords": {"any": ["全国", "整体"], "none": ["华东"]}}],
    ),
    "constraint": (
        "按销售额排序，展示全部数据。",
        "只要 Q1 的数据。",
        [{"keywords": {"any": ["Q1", "一季度"]}}],
    ),
    "implicit": (
        "假设 2024 年销售额增长了 20%。",
        "不对，其实是下降了 10%。",
        [{"keywords": {"any": ["下降", "-10", "-0.1"]}}],
    ),
}

_ID = re.compile(r"^DECAY-(memory|reference|switch|conflict|drift)(?:-([a-z]+))?-(\d+)$")


def filler_turns(n_turns: int) -> int:
    """Turns between the probe and the check question: the seed's `min(n_turns - 1, 12)` (its
    filler list has 12 topics), so a sweep point n has min(n - 1, 12) + 2 user turns."""
    return min(n_turns - 1, FILLER_CAP)


def decay_case_id(test: str, n_turns: int, level: str | None = None) -> str:
    """DECAY-<test>[-<conflict level>]-<turns>, e.g. DECAY-conflict-goal-08."""
    return f"DECAY-{test}{'-' + level if level else ''}-{n_turns:02d}"


def parse_decay_id(case_id: str) -> tuple[str, str | None, int] | None:
    """(test, conflict level, n_turns) of a decay case id, or None for any other case."""
    m = _ID.match(case_id)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def _fillers(test: str, n: int, seed: int, count: int) -> list[str]:
    if test == "drift":
        pool = list(DRIFT_FOLLOW_UPS)
    else:
        pool = [t for t in FILLER_TOPICS if not (test in _NO_ARITHMETIC and "计算" in t)]
    rng = random.Random(int.from_bytes(hashlib.sha256(f"{test}|{n}|{seed}".encode()).digest()[:8], "big"))
    rng.shuffle(pool)
    return [pool[i % len(pool)] for i in range(count)]


def _probe(name: str, level: str, n_turns: int) -> tuple[str, list[str], str, list[dict[str, Any]], str, str]:
    """(first message, scripted turns right after it, last question, checks, title, category name):
    the seed's test_memory / test_reference / test_switch / test_conflict texts."""
    if name == "memory":
        f = _MEMORY_FACTS
        check = {
            "memory_recall": {
                "facts": [{"expected": v} for v in f.values()],
                "threshold": expected_recall(n_turns),
            }
        }
        # The seed's code asks 「你叫什么名字？…」, which literally asks the agent's own name (its
        # article then counts "我是通义千问" as forgetting); 「你还记得我叫…」 asks what it means.
        return (
            f"我叫{f['name']}，在{f['location']}工作，做{f['job']}的。",
            [],
            RECALL_QUESTION,
            [check],
            "信息记忆（注入→干扰→回忆）",
            "信息记忆",
        )
    if name == "reference":
        # The seed's check: 销售, 数据 or 分析 in the reply (its article suggests an LLM judge for a
        # stricter reading; the rule stays the seed's).
        return (
            "我有一份销售数据，包含 2024 年全年的销售额。",
            [],
            "能分析一下它吗？",
            [{"keywords": {"any": list(REFERENCE_WORDS)}}],
            "指代消解（第 n 轮用代词指代第 1 轮的实体）",
            "指代消解",
        )
    if name == "switch":
        return (
            "帮我计算 25*4 等于多少。",
            ["给我写一首关于春天的诗。"],
            "刚才计算的结果是多少？",
            [{"keywords": {"any": ["100"]}}],
            "话题切换（切到别的话题后第 n 轮切回）",
            "话题切换",
        )
    if name == "drift":
        return (
            DRIFT_INSTRUCTION,
            [],
            DRIFT_CHECK,
            [],  # scored by the drift judge (judging.drift_threshold)
            "语义漂移（精准指令后连续追问细节，第 n 轮检查是否仍锚定原话题）",
            "语义漂移",
        )
    probe, ask, checks = _CONFLICTS[level]
    return probe, [], ask, checks, f"冲突处理·{level}（第 n 轮改指令）", "冲突处理"


def build_decay_case(test: str, n_turns: int, seed: int = 0) -> Case:
    """The seed-003 test `test` (memory / reference / switch / conflict[:level] / drift) as a static
    scripted case of `n_turns` user turns. Plain `conflict` picks level CONFLICT_LEVELS[seed % 4]."""
    name, _, level = test.partition(":")
    if name not in DECAY_TESTS:
        raise UnknownNameError(
            f"Unknown decay test '{name}'.{did_you_mean(name, set(DECAY_TESTS))} "
            f"Available: {', '.join(DECAY_TESTS)}"
        )
    if name == "conflict":
        level = level or CONFLICT_LEVELS[seed % len(CONFLICT_LEVELS)]
        if level not in CONFLICT_LEVELS:
            raise UnknownNameError(
                f"Unknown conflict level '{level}'.{did_you_mean(level, set(CONFLICT_LEVELS))} "
                f"Available: {', '.join(CONFLICT_LEVELS)}"
            )
    elif level:
        raise ValueError(f"only conflict has levels ('conflict:goal'); got '{test}'")
    if n_turns < 3:
        raise ValueError(f"n_turns must be at least 3 (probe, small talk, check), got {n_turns}")
    probe, first_extra, ask, checks, title, cat_name = _probe(name, level, n_turns)
    middle = first_extra + _fillers(name, n_turns, seed, filler_turns(n_turns) - len(first_extra))
    script = middle + [ask]
    return Case.model_validate(
        {
            "id": decay_case_id(name, n_turns, level or None),
            "dimension": "MT",
            "category": "DECAY",
            "category_name": cat_name,
            "title": f"{title}：{n_turns} 轮",
            "mode": "static",
            "context_type": "synthetic",
            "source": SEED_FILE,
            "tags": ["decay", name, f"turns-{n_turns}"] + ([f"conflict-{level}"] if level else []),
            "input": {"message": probe, "script": script},
            "judging": {
                "expected_behavior": [f"第 {n_turns} 轮仍能正确处理第 1 轮的信息：{ask}"],
                "scoring": {"methods": ["auto"], "note": "自动（衰减曲线，seed 003）"},
                "checks": checks,
                **({"drift_threshold": DRIFT_THRESHOLD} if name == "drift" else {}),
            },
        }
    )


def build_decay_cases(tests: list[str], turns: list[int], seed: int = 0) -> list[Case]:
    """Every test at every turn count; `conflict` expands to its four levels (the seed averages them)."""
    out = []
    for test in tests:
        for n in turns:
            if test == "conflict":
                out += [build_decay_case(f"conflict:{lv}", n, seed) for lv in CONFLICT_LEVELS]
            else:
                out.append(build_decay_case(test, n, seed))
    return out


Runner = Callable[..., Awaitable[list[Any]]]


async def run_decay(
    *,
    agent: str,
    out_dir: str,
    turns: list[int] | None = None,
    tests: list[str] | None = None,
    repeats: int = 3,
    seed: int = 0,
    concurrency: int = 4,
    resume: bool = False,
    runner: Runner | None = None,
    sla: list[tuple[SlaThreshold, str | None]] | None = None,
) -> DecaySummary:
    """Build the sweep, run it (graphs.runner.run_cases unless `runner` is given) and summarise.
    The seed asks for at least 3 repeats per turn count: sampling noise hides the real decay."""
    from pathlib import Path

    from usersim.adapters.base import load_agent

    described = load_agent(agent).describe()  # fails fast on a bad SPEC, before any conversation runs
    cases = build_decay_cases(list(tests or DECAY_TESTS), list(turns or DEFAULT_TURNS), seed)
    if runner is None:
        from usersim.graphs.runner import run_cases as runner
    records = await runner(
        cases,
        agent=agent,
        out_dir=out_dir,
        repeats=repeats,
        seed=seed,
        concurrency=concurrency,
        resume=resume,
    )
    # the configuration recorded with the runs is authoritative; describe() covers runs that recorded none
    summary = summarize_decay(records, agent=agent, sla=sla)
    if not summary.system:
        summary = summarize_decay(records, agent=agent, system=described, sla=sla)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "decay.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")
    if (out / "results.jsonl").is_file():
        from usersim.reports.rebuild import rebuild

        rebuild(out)  # report.html was written before decay.json existed: add the decay section
    return summary
