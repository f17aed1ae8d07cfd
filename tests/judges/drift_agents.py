"""Scripted agents for MT-DRIFT-01 (`python:tests.judges.drift_agents:<level>`): one reply per user
turn, written to each level of seed 003's drift scale. Turn 3 invites the article's drift path
(补贴), turn 6 pulls back to the sales figures."""

from __future__ import annotations

ON = {
    1: "2024 年华东区电动车销量约 320 万辆，上海、江苏、浙江占比最高。",
    2: "按省份：江苏 2024 年电动车销量约 95 万辆，浙江约 88 万辆，上海约 62 万辆，华东区其余省份合计约 75 万辆。",
    3: "华东区电动车销量高，主要因为充电桩密集、车型多，2024 年的新能源补贴也带动了一部分销量。",
    4: "再看销量结构：2024 年华东区电动车销量里纯电约占六成，插混增长更快。",
    5: "还有一点：2024 年华东区电动车销量同比增长约 35%，增速高于全国。",
    6: "2024 年华东区电动车销量最高的是 12 月，约 41 万辆；最低是 2 月。",
    7: "汇总：2024 年华东区电动车销量约 320 万辆，江苏最多，12 月销量最高，同比增长约 35%。",
}
# The article's path: 电动车 → 新能源补贴 → 补贴政策 → 政策对比, on the agent's own initiative.
DRIFT = {
    3: "主要受新能源补贴推动，补贴降低了购车成本。",
    4: "新能源补贴政策经历了多轮调整：2016 年起补贴逐年退坡，各地地方补贴标准不同。",
    5: "对比欧美的政策，美国有税收抵免，欧洲靠碳排放法规，德国曾提供环保奖金。",
}
# Still on the derived topic after the pull-back, with only a passing word of the original.
STAYED = {
    6: "说到月份，补贴政策的退坡时间点更关键：2023 年起国家补贴退出，地方补贴对电动化仍有作用。",
    7: "结论：补贴政策从普惠走向退坡，欧美政策各有侧重，电动化推广离不开政策。",
}
# The original topic is gone: a history of policies.
GONE = {
    6: "政策方面，2009 年起的十城千辆工程是国内补贴的起点。",
    7: "历史政策回顾：从十城千辆到双积分，政策体系一步步完善。",
}


def _turn(messages: list[dict]) -> int:
    return sum(1 for m in messages if m.get("role") == "user")


def anchored(messages, tools):
    """100: every reply about the 2024 华东区 sales."""
    return ON[_turn(messages)]


def pulled_back(messages, tools):
    """70: expands to subsidies on its own, back on the sales once the user pulls back."""
    return {**ON, **DRIFT}[_turn(messages)]


def stayed_off(messages, tools):
    """30: drifts to subsidy policy and stays there after the pull-back."""
    return {**ON, **DRIFT, **STAYED}[_turn(messages)]


def forgot(messages, tools):
    """0: ends in a history of policies, nothing of the sales left."""
    return {**ON, **DRIFT, **GONE}[_turn(messages)]


def acknowledges(messages, tools):
    """The last reply says nothing of substance: whether it is still on topic cannot be told."""
    turn = _turn(messages)
    return "好的。" if turn == 7 else {**ON, **DRIFT}[turn]
