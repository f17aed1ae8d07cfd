"""The C2 (seed 001) and MT (seed 003) case libraries: complete, faithful to the seeds, and their
checks decide what the seeds' criteria decide."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.cases.library import load_dir
from usersim.cases.schema import Case
from usersim.core.messages import Message, ToolCall
from usersim.judges.base import JudgeState
from usersim.judges.checks import CheckContext, evaluate, validate_check
from usersim.personas.loader import load_persona

CASES = Path(__file__).resolve().parents[2] / "usersim" / "cases"
C2_IDS = {
    f"C2-{cat}-0{i}"
    for cat, n in [
        ("TD", 4),
        ("PR", 4),
        ("E2E", 4),
        ("SC", 2),
        ("EP", 3),
        ("SR", 3),
        ("CD", 4),
        ("SV", 3),
        ("MM", 4),
    ]
    for i in range(1, n + 1)
}
D_IDS = {f"D-{i:02d}" for i in range(1, 21)}
# The seed's 20-scenario table: ID -> 轮数.
D_TURNS = {
    "D-01": 3,
    "D-02": 5,
    "D-03": 8,
    "D-04": 12,
    "D-05": 15,
    "D-06": 4,
    "D-07": 5,
    "D-08": 6,
    "D-09": 4,
    "D-10": 5,
    "D-11": 8,
    "D-12": 10,
    "D-13": 3,
    "D-14": 4,
    "D-15": 3,
    "D-16": 3,
    "D-17": 20,
    "D-18": 30,
    "D-19": 8,
    "D-20": 6,
}
D_CATEGORY = {
    **dict.fromkeys(["D-01", "D-02", "D-03", "D-04", "D-05", "D-17", "D-18"], "MEM"),
    **dict.fromkeys(["D-06", "D-07", "D-08", "D-09", "D-19"], "REF"),
    **dict.fromkeys(["D-10", "D-11", "D-12"], "SW"),
    **dict.fromkeys(["D-13", "D-14", "D-15", "D-16", "D-20"], "CONF"),
}
# The reference table's 插入轮数 column.
REF_INSERTED = {1: 2, 2: 2, 3: 2, 4: 3, 5: 2, 6: 2, 7: 2, 8: 3, 9: 5, 10: 3}


C2 = load_dir("c2")
MT = load_dir("mt")
ALL = {**C2, **MT}


def _user_turns(case: Case) -> int:
    inp = case.input
    return sum(m.role == "user" for m in inp.history) + bool(inp.message) + len(inp.script)


def test_every_seed_case_is_transcribed_once() -> None:
    assert set(C2) == C2_IDS and len(C2) == 31
    assert {i for i in MT if i.startswith("D-")} == D_IDS
    assert {i for i in MT if i.startswith("MT-REF-")} == {f"MT-REF-{i:02d}" for i in range(1, 11)}
    assert {i for i in MT if i.startswith("MT-CONF-")} == {f"MT-CONF-{i:02d}" for i in range(1, 8)}
    assert len(C2) + len(D_IDS) == 51  # this part of the 126 (B1 32 + C1 27 + C2 31 + C5 16 + D 20)


@pytest.mark.parametrize("case_id", sorted(ALL))
def test_case_metadata_and_checks_are_valid(case_id: str) -> None:
    case = ALL[case_id]
    if case_id.startswith("C2-"):
        assert (case.dimension, case.category) == ("C2", case_id.split("-")[1])
        assert case.source == "001_4ab098446c310439.txt" and case.difficulty is not None
    else:
        assert case.dimension == "MT" and case.source == "003_a968a190fd70a84b.txt"
        assert case.category == D_CATEGORY.get(case_id, case_id.split("-")[1])
    assert case.mode == ("organic" if case_id in ("C2-TD-04", "C2-E2E-04") else "static")
    j = case.judging
    assert j.expected_behavior and j.pass_criteria and j.fail_criteria and j.scoring.note
    for spec in [*j.checks, *(m.check for m in j.milestones)]:
        validate_check(spec)  # only the design's vocabulary, with valid parameters
    methods = j.scoring.methods
    # automatic scoring needs a rule check, or the drift judge with a threshold (维度五 cases)
    assert ("auto" in methods) <= bool(j.checks or j.drift_threshold is not None)
    assert ("llm_judge" in methods) == bool(j.rubric)
    assert ("human" in methods) == bool(j.human_review)
    ids = [m.id for m in j.milestones]
    for i, m in enumerate(j.milestones):  # requires point backwards: the milestones form a DAG
        assert set(m.requires) <= set(ids[:i]), f"{case_id}: {m.id} requires {m.requires}"


def test_c2_scoring_difficulty_and_milestones_follow_the_seed() -> None:
    labels = [c.scoring_label for c in C2.values()]
    assert [labels.count(x) for x in ("llm_judge", "auto", "auto+llm_judge", "llm_judge+human")] == [
        24,
        5,
        1,
        1,
    ]
    assert C2["C2-SC-02"].judging.scoring.note == "自动（计算完成维度数）+ LLM-judge"
    assert C2["C2-E2E-04"].judging.scoring.note == "LLM-judge + 人工（评估对话流畅度和任务完成质量）"
    assert C2["C2-SR-01"].judging.scoring.note == '自动（检查是否有第二次以 "北京" 为参数的正确调用）'
    diff = {cid: c.difficulty for cid, c in C2.items()}
    assert [diff[f"C2-TD-0{i}"] for i in range(1, 5)] == ["easy", "medium", "medium", "hard"]
    assert [diff[f"C2-CD-0{i}"] for i in range(1, 5)] == ["easy", "medium", "hard", "hard"]
    td02 = C2["C2-TD-02"].judging.milestones
    assert [(m.id, m.requires) for m in td02] == [
        ("flights", []),
        ("itinerary", ["flights"]),
        ("hotel", ["itinerary"]),
    ]
    assert all(not c.skills.skill_enabled for c in C2.values())


def test_messages_history_and_images_are_the_seeds_text() -> None:
    assert C2["C2-TD-04"].input.message == "我想暑假去日本玩"
    assert C2["C2-SC-02"].input.message == (
        "帮我对比北京朝阳区 3 个小区的二手房情况：望京花园小区、劲松五区、百子湾家园，要看房价、周边配套、交通"
    )
    assert C2["C2-CD-01"].context.current_date == "2026-04-07"
    pr01 = C2["C2-PR-01"].input
    assert [m.role for m in pr01.history] == ["user", "assistant", "user", "assistant", "tool"]
    assert pr01.history[3].tool_calls[0].name == "search_flights" and pr01.history[4].is_error
    assert pr01.history[4].content == "该日期无航班" and pr01.message == "查不到航班，有其他方法吗"
    e2e02 = C2["C2-E2E-02"].input.history
    assert [tc.name for m in e2e02 for tc in m.tool_calls] == ["search_flights", "web_search", "web_search"]
    (img,) = C2["C2-MM-02"].context.images
    assert img.path is None and img.caption.startswith("一张3天天气预报截图，显示5月11日（晴，24°C）")
    assert C2["C2-MM-01"].input.message == "[图片] 帮我实现这个清单"
    ref01 = MT["MT-REF-01"].input  # the article's test_reference dialogue, verbatim
    assert [m.content for m in ref01.history if m.role == "user"] == [
        "我有一份销售数据，包含 2024 年全年的销售额。",
        "今天天气怎么样？",
        "计算 2+3 等于几？",
    ]
    assert ref01.message == "能分析一下它吗？"
    assert (MT["MT-CONF-02"].input.message, MT["MT-CONF-02"].input.script) == (
        "帮我分析华东区销售额。",
        ["不对，改成分析全国。"],
    )


# The seeds' 工具拦截配置 JSON, verbatim.
SEED_INTERCEPTS = {
    "C2-SC-01": '{ "type": "tool_intercept", "intercept_tool": "search_hotels", "inject_tool_result": { "is_error": true, "content": "Error: Hotel search service temporarily unavailable (HTTP 503). Please try again later." } }',
    "C2-SC-02": '{ "type": "tool_intercept", "intercept_tool": "beike_search_community_detail", "intercept_condition": { "param": "community_name", "value": "百子湾家园" }, "inject_tool_result": { "is_error": false, "content": "{\\"community_name\\": \\"百子湾家园\\", \\"district\\": \\"朝阳区\\", \\"avg_price_per_sqm\\": null, \\"nearby_amenities\\": null, \\"subway_distance\\": null, \\"message\\": \\"该小区数据暂未收录，信息缺失\\"}" } }',
    "C2-EP-01": '{ "type": "tool_intercept", "intercept_tool": "search_flights", "intercept_on_call_number": 1, "inject_tool_result": { "is_error": true, "content": "Error: Rate limit exceeded (HTTP 429). Too many requests. Please retry after 60 seconds." } }',
    "C2-EP-02": '{ "type": "tool_intercept", "intercept_tool": "beike_search_resale_housing", "inject_tool_result": { "is_error": false, "content": "{\\"total\\": 3, \\"listings\\": [{\\"listing_id\\": \\"bj_001\\", \\"community_name\\": null, \\"address\\": \\"朝阳区劲松路某号\\", \\"bedrooms\\": 3, \\"area_sqm\\": 92, \\"total_price_wan\\": 680, \\"unit_price\\": 73913}, {\\"listing_id\\":\\"bj_002\\", \\"community_name\\": null, \\"address\\": \\"朝阳区百子湾南二路某号\\", \\"bedrooms\\": 3, \\"area_sqm\\": 105, \\"total_price_wan\\": 790, \\"unit_price\\": 75238}, {\\"listing_id\\": \\"bj_003\\", \\"community_name\\": null, \\"address\\": \\"朝阳区望京花园路某号\\", \\"bedrooms\\": 3, \\"area_sqm\\": 118, \\"total_price_wan\\": 920, \\"unit_price\\": 77966}]}" } }',
    "C2-EP-03": '{ "type": "tool_intercept", "intercept_tool": "search_flights", "inject_tool_result": { "is_error": true, "content": "Error: Flight search service is currently unavailable due to an internal server error (HTTP 500). The issue has been reported." } }',
    "C2-SR-01": '{ "type": "tool_intercept", "intercept_tool": "maps_weather", "intercept_condition": { "param": "city", "value": "故宫" }, "inject_tool_result": { "is_error": true, "content": "{\\"error\\": \\"InvalidCityParameter\\", \\"message\\": \\"城市参数错误：\'故宫\' 不是有效的城市名称，请输入城市名（如：北京、上海）\\", \\"code\\": 400}" } }',
}


@pytest.mark.parametrize("case_id", sorted(SEED_INTERCEPTS))
def test_intercepts_are_the_seeds_json(case_id: str) -> None:
    (icpt,) = C2[case_id].tool_intercepts
    dumped = icpt.model_dump(exclude_none=True, exclude={"latency_s", "timeout"})
    assert dumped == json.loads(SEED_INTERCEPTS[case_id])


def test_world_facts_are_injected_not_written_into_criteria() -> None:
    sv01 = json.loads(C2["C2-SV-01"].tool_intercepts[0].inject_tool_result.content)  # type: ignore[union-attr]
    assert len(sv01["results"]) == 4  # 搜索结果只有 4 个
    sv02 = json.loads(C2["C2-SV-02"].tool_intercepts[0].inject_tool_result.content)  # type: ignore[union-attr]
    assert min(h["price_per_night"] for h in sv02["hotels"]) == 500  # 清水寺附近最便宜也要 500


def test_organic_cases_use_library_personas() -> None:
    td04, e2e04 = C2["C2-TD-04"], C2["C2-E2E-04"]
    assert (td04.persona, td04.max_turns, td04.goal) == (
        "japan-first-trip",
        20,
        "最终规划出包含机票、行程、酒店的完整方案",
    )
    assert (e2e04.persona, e2e04.max_turns, e2e04.goal) == (
        "vague-laptop-buyer",
        15,
        "最终确定具体购买的型号和购买渠道",
    )
    buyer = load_persona(e2e04.persona)  # the budget check is the persona's budget on every path
    (budget_check,) = [c["constraint"] for c in e2e04.judging.checks if "constraint" in c]
    assert budget_check["value"] == buyer.goal.constraints["max_price"] == 8000
    lowered = [e.value for e in buyer.events if e.kind == "add_constraint" and e.slot == "max_price"]
    assert lowered == ["6000"]  # path-dependent: left to the fidelity judge and the rubric
    assert load_persona(td04.persona).goal.required == ["flights", "itinerary", "hotel"]
    assert [m.id for m in td04.judging.milestones][-1] == "complete_plan"


@pytest.mark.parametrize("case_id", sorted(D_TURNS))
def test_d_scenarios_have_the_seeds_turn_count(case_id: str) -> None:
    assert _user_turns(MT[case_id]) == D_TURNS[case_id]
    assert f"turns-{D_TURNS[case_id]}" in MT[case_id].tags


def test_memory_series_shares_planted_facts_and_thresholds() -> None:
    series = ["D-01", "D-02", "D-03", "D-04", "D-05", "D-17", "D-18"]
    first = {MT[c].input.history[0].content for c in series}
    assert first == {"我叫张三，在北京工作，做测试工程师的。下个月想请年假去大阪玩一趟，先跟你打个招呼。"}
    assert {MT[c].input.message for c in series} == {"对了，你还记得我叫什么名字吗？在哪里工作？做什么的？"}
    fillers = [m.content for m in MT["D-18"].input.history[2:]]  # after the greeting
    assert not any(w in t for t in fillers for w in ("张三", "北京", "测试", "工程师"))  # no leaked key facts
    thresholds = [MT[c].judging.checks[0]["memory_recall"]["threshold"] for c in series]
    assert thresholds == [0.9, 0.7, 0.5, 0.3, 0.3, 0.3, 0.3]  # 1-3 / 4-6 / 7-10 / >10 轮
    assert all(MT[c].judging.scoring.note == "Memory Recall Score" for c in series)


def test_reference_table_rows_keep_inserted_turns() -> None:
    for num, inserted in REF_INSERTED.items():
        assert _user_turns(MT[f"MT-REF-{num:02d}"]) == inserted + 2


# --- the checks decide like the seeds' criteria ------------------------------------------------

_ids = itertools.count(1)


def _call(name: str, **args: object) -> ToolCall:
    return ToolCall(id=f"c{next(_ids)}", name=name, arguments=dict(args))


def _passes(case: Case, *replies: str | tuple[list[ToolCall], str]) -> dict[str, bool | None]:
    """Replay the case: one agent reply per live user turn (message, then script); a reply may
    carry tool calls. Returns "i:check" -> passed."""
    users = ([case.input.message] if case.input.message else []) + list(case.input.script)
    history = list(case.input.history)
    live: list[Message] = []
    for user, reply in zip(users, replies, strict=True):
        calls, text = reply if isinstance(reply, tuple) else ([], reply)
        live.append(Message(role="user", content=user))
        if calls:
            live.append(Message(role="assistant", tool_calls=calls))
            live += [Message(role="tool", tool_call_id=c.id, name=c.name, content="{}") for c in calls]
        live.append(Message(role="assistant", content=text))
    starts = [len(history) + i for i, m in enumerate(live) if m.role == "user"]
    state = JudgeState(history_len=len(history), turn_starts=starts, turns=len(users))
    ctx = CheckContext(history + live, case, state)
    return {f"{i}:{next(iter(s))}": evaluate(s, ctx).passed for i, s in enumerate(case.judging.checks)}


SC02_TABLE = """| 小区 | 房价 | 周边配套 | 交通 |
| 望京花园小区 | 均价约 6.8 万/平 | 凯德MALL、望京医院 | 14号线望京站步行 8 分钟 |
| 劲松五区 | 均价约 6.2 万/平 | 劲松小学、超市 | 10号线劲松站 500 米 |
| 百子湾家园 | 挂牌均价约 5.9 万/平（网络搜索） | 数据缺失 | 数据缺失 |"""


def test_c2_sc_02_partial_credit_is_seven_of_nine() -> None:
    case = C2["C2-SC-02"]
    calls = [
        _call("beike_search_community_detail", community_name=n)
        for n in ("望京花园小区", "劲松五区", "百子湾家园")
    ]
    assert all(_passes(case, (calls, SC02_TABLE + "\n说明：百子湾家园配套和交通信息暂未收录。")).values())
    gave_up = SC02_TABLE.rsplit("\n", 1)[0] + "\n| 百子湾家园 | 数据缺失 | 数据缺失 | 数据缺失 |"
    assert _passes(case, (calls, gave_up + "\n百子湾家园信息缺失。"))["0:step_completion"] is False  # 6/9
    silent = SC02_TABLE.replace("数据缺失", "-")
    assert _passes(case, (calls, silent))["2:keywords"] is False  # 不说明缺失情况


def test_c2_counting_and_constraint_checks() -> None:
    sv01 = C2["C2-SV-01"]
    five = "\n".join(f"{i}. {c}：适合周末" for i, c in enumerate(["苏州", "杭州", "厦门", "成都", "南京"], 1))
    four = "\n".join(f"- **{c}**\n  - 交通：高铁\n  - 推荐：老街" for c in ["苏州", "杭州", "厦门", "成都"])
    assert _passes(sv01, five)["0:step_completion"] is True
    assert _passes(sv01, four + "\n目前只找到 4 个符合条件的城市。")["0:step_completion"] is True
    assert _passes(sv01, four)["0:step_completion"] is False  # sub-bullets are not cities
    sr03 = C2["C2-SR-03"]
    ok = ["荣耀X50 ¥1399", "华为畅享70 ¥1199", "vivo Y200 ¥1599", "iQOO Z9 ¥1499", "荣耀Play 9T ¥999"]
    assert all(_passes(sr03, "\n".join(f"{i}. {p}" for i, p in enumerate(ok, 1))).values())
    xiaomi = ok[:4] + ["Redmi Note 13 ¥1099"]
    assert _passes(sr03, "\n".join(f"{i}. {p}" for i, p in enumerate(xiaomi, 1)))["2:constraint"] is False
    assert _passes(sr03, "\n".join(f"{i}. {p}" for i, p in enumerate(ok[:4], 1)))["0:count"] is False


def test_c2_error_isolation_and_self_correction() -> None:
    ep03 = C2["C2-EP-03"]
    calls = [
        _call("maps_weather", city="北京", date="2026-04-08"),
        _call("search_flights", origin="北京", destination="上海", departure_date="2026-04-08"),
        _call("search_hotels", location="上海", near="外滩", check_in="2026-04-08", check_out="2026-04-10"),
    ]
    good = "1) 北京明天多云 18°C；2) 机票查询失败（服务故障），请稍后重试；3) 外滩附近酒店：外滩茂悦酒店"
    assert all(_passes(ep03, (calls, good)).values())
    stopped = _passes(ep03, (calls[:2], "北京明天多云。机票查询失败，请稍后再试。"))
    assert stopped["2:tool_called"] is False and stopped["5:keywords"] is False
    sr01 = C2["C2-SR-01"]
    fixed = [_call("maps_weather", city="故宫"), _call("maps_weather", city="北京")]
    assert all(_passes(sr01, (fixed, "故宫在北京，北京明天晴，12-22°C。")).values())
    assert not all(_passes(sr01, (fixed[:1], "请问故宫在哪个城市？")).values())


def test_mt_memory_recall_score_and_length_thresholds() -> None:
    exact = "你叫张三，在北京工作，是一名测试工程师。"
    vague = "你叫张三，在北京做测试的。"  # 1 + 1 + 0.5 -> 0.83
    assert _passes(MT["D-01"], exact) == {"0:memory_recall": True}
    assert _passes(MT["D-01"], vague) == {"0:memory_recall": False}  # 1-3 轮 needs ≥0.9
    assert _passes(MT["D-04"], vague) == {"0:memory_recall": True}  # >10 轮 allows ≥0.3
    assert _passes(MT["D-18"], "我是通义千问，不在传统意义上的公司工作。") == {"0:memory_recall": False}


def test_mt_reference_and_switch_checks() -> None:
    assert all(_passes(MT["D-08"], "难波东方酒店步行到难波站约 3 分钟，房型不含早餐。").values())
    assert not all(_passes(MT["D-08"], "蟹道乐道顿堀本店不提供早餐哦。").values())
    d09 = MT["D-09"]
    assert all(_passes(d09, "请问你想订的是什么？机票还是酒店？").values())
    guessed = _passes(d09, ([_call("search_hotels", location="三亚")], "已为你找到三亚的酒店"))
    assert guessed == {"0:graded": False}  # the graded check's done checks: no question, a hotel search
    assert all(_passes(MT["D-10"], "总预算是 7680 元。").values())
    assert not all(_passes(MT["D-10"], "总预算是 6,880 元。").values())
    assert _passes(MT["MT-REF-06"], "你是指新秀丽 Cosmolite 还是地平线 8 号？") == {
        "0:asked_clarification": True
    }


def test_mt_conflicts_let_the_later_instruction_win() -> None:
    d13 = MT["D-13"]
    assert all(
        _passes(
            d13,
            "按评分：1. 心斋桥十字酒店 4.7 2. 梅田阪急国际酒店 4.5 3. 难波东方酒店 4.2 4. 新大阪站前 APA 酒店 3.9",
        ).values()
    )
    assert not all(
        _passes(d13, "1. 新大阪站前 APA 酒店 2. 难波东方酒店 3. 心斋桥十字酒店 4. 梅田阪急国际酒店").values()
    )
    d15 = MT["D-15"]
    assert all(
        _passes(
            d15, "1. 防水双肩包 359 元\n2. 20000mAh 充电宝 199 元\n3. 旅行颈枕 89 元\n合计 647 元"
        ).values()
    )
    assert not all(
        _passes(
            d15, "1. 降噪耳机 1,299 元\n2. 防水双肩包 359 元\n3. 充电宝 199 元\n4. 颈枕 89 元\n合计 1,946 元"
        ).values()
    )
    d16 = MT["D-16"]
    assert all(_passes(d16, "好的，之前按 1:21 算的结果作废，重新计算：8 万日元约 4,211 元人民币。").values())
    assert not all(_passes(d16, "好的，记住了。").values())
    d20 = MT["D-20"]  # scripted: six live turns
    plan = "第一天：上午大阪城，下午心斋桥购物 → 道顿堀，晚上通天阁看夜景。"
    assert all(_passes(d20, "好的", "已换成海游馆", "已改为通天阁", "已恢复", "已添加", plan).values())
    stale = plan.replace("通天阁", "梅田蓝天大厦")
    assert not any(_passes(d20, "好的", "好", "好", "好", "好", stale).values())


def test_c2_td_02_milestones_follow_the_dependency_order() -> None:
    case = C2["C2-TD-02"]

    def reached(reply: str) -> list[str]:
        history = [
            Message(role="user", content=case.input.message or ""),
            Message(role="assistant", content=reply),
        ]
        ctx = CheckContext(history, case, JudgeState(history_len=0, turn_starts=[0], turns=1))
        return [m.id for m in case.judging.milestones if evaluate(m.check, ctx).passed]

    ordered = (
        "1. 先查上海→大阪机票，确定到达/离开时间\n2. 再按航班时间排 5 天行程\n3. 最后按行程的活动区域选酒店"
    )
    assert reached(ordered) == ["flights", "itinerary", "hotel"]
    hotel_first = "1. 先订京都酒店\n2. 查机票\n3. 排行程"
    assert reached(hotel_first) == ["flights", "itinerary"]  # 顺序错误（先订酒店再查机票）
