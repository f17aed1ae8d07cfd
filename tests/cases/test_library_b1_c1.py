"""The B1 (seed 002) and C1 (seed 004) case libraries: complete, faithful, and their checks decide
what the seeds' Pass/Fail criteria decide."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.cases.library import load_dir
from usersim.cases.schema import Case
from usersim.core.events import SkillEvent
from usersim.core.messages import Message, ToolCall
from usersim.judges.base import JudgeState
from usersim.judges.checks import CheckContext, evaluate, validate_check

CASES = Path(__file__).resolve().parents[2] / "usersim" / "cases"

B1_IDS = {
    *(f"B1-EI-0{i}" for i in range(1, 5)),
    *(f"B1-CL-0{i}" for i in range(1, 5)),
    *(f"B1-IF-0{i}" for i in range(1, 6)),
    *(f"B1-MI-0{i}" for i in range(1, 5)),
    *(f"B1-IP-0{i}" for i in range(1, 5)),
    *(f"B1-MM-0{i}" for i in range(1, 6)),
    *(f"B1-MR-0{i}" for i in range(1, 7)),
}
C1_IDS = {
    *(f"C1-ST-0{i}" for i in range(1, 6)),
    *(f"C1-SF-0{i}" for i in range(1, 8)),
    *(f"C1-SB-0{i}" for i in range(1, 4)),
    *(f"C1-SC-0{i}" for i in range(1, 3)),
    *(f"C1-SM-0{i}" for i in range(1, 4)),
    *(f"C1-SP-0{i}" for i in range(1, 5)),
    *(f"C1-MM-0{i}" for i in range(1, 4)),
}


B1 = load_dir("b1")
C1 = load_dir("c1")
ALL = {**B1, **C1}


def test_every_seed_case_is_transcribed_once() -> None:
    assert set(B1) == B1_IDS and len(B1_IDS) == 32
    assert set(C1) == C1_IDS and len(C1_IDS) == 27


@pytest.mark.parametrize("case_id", sorted(ALL))
def test_case_metadata_and_checks_are_valid(case_id: str) -> None:
    case = ALL[case_id]
    dim, cat, _ = case_id.split("-")
    assert (case.dimension, case.category, case.mode) == (dim, cat, "static")
    assert case.source == ("002_e47f3040bc295bbc.txt" if dim == "B1" else "004_6cf71760875d3424.txt")
    assert case.difficulty in ("easy", "medium", "hard") and case.input.message
    assert case.judging.expected_behavior and case.judging.pass_criteria and case.judging.fail_criteria
    for spec in case.judging.checks:
        validate_check(spec)  # only the design's check vocabulary, with valid parameters
    methods = case.judging.scoring.methods
    # Every 自动 criterion is executable; LLM-judge and 人工 criteria are routed to their judges.
    assert ("auto" in methods) <= bool(case.judging.checks)
    assert ("llm_judge" in methods) == bool(case.judging.rubric)
    assert ("human" in methods) == bool(case.judging.human_review)


def test_scoring_methods_follow_the_seeds_order_and_wording() -> None:
    assert B1["B1-EI-03"].judging.scoring.methods == ["auto", "human"]
    assert (
        B1["B1-EI-03"].judging.scoring.note
        == "自动（检查工具调用类型 + 参数完整性）+ 人工（判断是否有多余反问）"
    )
    assert B1["B1-CL-02"].judging.scoring.methods == ["auto", "llm_judge"]
    assert C1["C1-SF-05"].judging.scoring.methods == ["auto", "llm_judge"]
    assert C1["C1-ST-03"].judging.scoring.methods == ["auto"]
    # Counted from the cases' own 评分方式 lines (seed 002's summary table, 8/16/2/1, predates
    # its final case list and does not add up to 32).
    labels = [c.scoring_label for c in B1.values()]
    assert [labels.count(x) for x in ("auto", "llm_judge", "auto+llm_judge", "auto+human")] == [9, 19, 2, 2]
    c1_labels = [c.scoring_label for c in C1.values()]
    assert [c1_labels.count(x) for x in ("auto", "llm_judge", "auto+llm_judge")] == [2, 23, 2]


def test_messages_and_history_are_the_seeds_text() -> None:
    assert B1["B1-EI-01"].input.message == "帮我搜一下 6 月中旬从上海飞大阪的机票，两个人"
    assert B1["B1-MI-04"].input.message == (
        "我想看看最近有什么好用的降噪耳机，另外帮我查下周末杭州有没有什么展览，对了上次你推荐的那本书叫什么来着"
    )
    assert C1["C1-MM-01"].input.message == "[上传行程表截图] 帮我优化这个行程"
    mr05 = B1["B1-MR-05"].input
    assert [m.role for m in mr05.history] == ["user", "assistant"] * 3
    assert mr05.history[4].content == "8000 左右吧" and mr05.message == "MacBook 或者 ThinkPad"
    assert B1["B1-IF-04"].context.memory == ["用户有乳糖不耐受"]
    assert B1["B1-MM-01"].context.images[0].caption.startswith("日本京都清水寺正殿")
    assert B1["B1-MM-01"].context.images[0].path is None


def test_b1_group_ab_and_delta_exemptions() -> None:
    # Every B1 case runs in Group A (skills off) and Group B (skills on) for skill_impact_delta.
    assert all(c.skills.groups == ["A", "B"] and c.skills.skill_enabled for c in B1.values())
    # Only CL and IF are exempt (seed 002: B1 特有例外).
    exempt = {cid for cid, c in B1.items() if c.skills.exempt_from_delta}
    assert exempt == {cid for cid in B1 if cid.split("-")[1] in ("CL", "IF")}
    mm_skills = {cid: c.skills.active_skills for cid, c in B1.items() if c.category == "MM"}
    assert mm_skills == {
        "B1-MM-01": ["location_recognition_skill"],
        "B1-MM-02": ["itinerary_review_skill"],
        "B1-MM-03": ["dining_recommendation_skill"],
        "B1-MM-04": ["shopping_assistant_skill"],
        "B1-MM-05": ["hotel_search_skill"],
    }
    assert all(c.tools == ["web_search", "search_flights", "search_hotels"] for c in B1.values())


def test_c1_skill_configuration() -> None:
    both = {"C1-ST-04", "C1-SM-01", "C1-SM-02", "C1-SM-03"}
    for cid, c in C1.items():
        assert c.skills.skill_enabled and not c.skills.groups
        assert (len(c.skills.active_skills) == 2) == (cid in both)
    assert C1["C1-ST-03"].judging.checks == [
        {"tool_not_called": {"tool": "search_flights"}},
        {"skill_not_triggered": {"skill": "flight-selection"}},
    ]


def test_intercepts_carry_the_seeds_json() -> None:
    (sf03,) = C1["C1-SF-03"].tool_intercepts
    assert sf03.intercept_tool == "search_flights" and sf03.inject_tool_result is not None
    data = json.loads(sf03.inject_tool_result.content)
    spring, thai = data["outbound"]
    assert (spring["flight_no"], spring["price_per_person"], spring["baggage_fee_per_piece"]) == (
        "9C8571",
        800,
        250,
    )
    assert (thai["flight_no"], thai["baggage_included"], thai["baggage_allowance"]) == ("TG614", True, "30kg")
    assert [r["price_per_person"] for r in data["return"]] == [820, 1180]
    # the seed's intercept verbatim (no condition) plus the same failure for single TRANSIT routes
    sb03, routes = C1["C1-SB-03"].tool_intercepts
    assert sb03.intercept_tool == "compute_google_maps_route_matrix" and sb03.intercept_condition is None
    assert json.loads(sb03.inject_tool_result.content)["status"] == "ZERO_RESULTS"  # type: ignore[union-attr]
    assert routes.intercept_tool == "compute_google_maps_routes"
    assert routes.intercept_condition is not None and routes.intercept_condition.value == "TRANSIT"
    sp03 = json.loads(C1["C1-SP-03"].tool_intercepts[0].inject_tool_result.content)  # type: ignore[union-attr]
    assert sorted(f["price_per_person"] for f in sp03["outbound"]) == [5500, 8000]


# --- the checks decide like the seeds' criteria ------------------------------------------------


_ids = itertools.count(1)


def _call(name: str, **args: object) -> ToolCall:
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=dict(args))


def _run(
    case: Case, reply: str, calls: list[ToolCall] | None = None, skills: tuple[str, ...] = ()
) -> dict[str, bool]:
    """Replay the case with one agent turn (tool calls, then a final reply): "i:check" -> passed."""
    calls = calls or []
    history = list(case.input.history)
    live = [Message(role="user", content=case.input.message or "")]
    if calls:
        live.append(Message(role="assistant", tool_calls=list(calls)))
        live += [Message(role="tool", tool_call_id=c.id, name=c.name, content="{}") for c in calls]
    live.append(Message(role="assistant", content=reply))
    state = JudgeState(
        history_len=len(history),
        turn_starts=[len(history)],
        turns=1,
        skill_events=[SkillEvent(turn=1, skill=s, kind="triggered") for s in skills],
    )
    ctx = CheckContext(history + live, case, state)
    results: dict[str, bool] = {}
    for i, spec in enumerate(case.judging.checks):
        results[f"{i}:{next(iter(spec))}"] = bool(evaluate(spec, ctx).passed)
    return results


def test_b1_ei_01_needs_all_four_elements() -> None:
    case = B1["B1-EI-01"]
    good = _call(
        "search_flights", origin="上海", destination="大阪", departure_date="2026-06-15", passengers=2
    )
    assert all(_run(case, "为您找到以下航班：MU515 ¥1800", [good]).values())
    no_party = _call("search_flights", origin="上海", destination="大阪", departure_date="2026-06-15")
    assert not any(_run(case, "为您找到以下航班", [no_party]).values())
    assert not any(_run(case, "搜索结果如下", [_call("web_search", query="上海 大阪 机票")]).values())


def test_b1_cl_01_asks_all_three_at_once_without_searching() -> None:
    case = B1["B1-CL-01"]
    assert all(_run(case, "好的！请问您的出发地、目的地和出行日期分别是？").values())
    assert _run(case, "请问您想去哪里？") == {"0:tool_not_called": True, "1:asked_clarification": False}
    searched = _run(case, "为您找到机票", [_call("search_flights", origin="北京", destination="上海")])
    assert searched["0:tool_not_called"] is False


def test_b1_mr_02_only_kyoto_with_kept_dates() -> None:
    case = B1["B1-MR-02"]
    kyoto = _call("search_hotels", location="京都", check_in="2026-08-15", check_out="2026-08-18")
    assert all(_run(case, "已为您改为京都：京都站附近酒店 A ¥800/晚", [kyoto]).values())
    both = _run(case, "东京和京都的酒店都给您列出来了", [kyoto])
    assert both["0:keywords"] is False


def test_b1_if_01_relates_kyoto_and_does_not_ask_back() -> None:
    case = B1["B1-IF-01"]
    assert all(_run(case, "京都住宿推荐住在四条河原町或京都站附近，交通方便。").values())
    assert not all(_run(case, "请问您要去哪个城市呢？").values())


def test_c1_checks_follow_skill_rules() -> None:
    sp02 = C1["C1-SP-02"]
    days = [
        _call("search_flights", origin="北京", destination="大阪", departure_date=f"2025-06-{d}")
        for d in (14, 15, 16)
    ]
    assert all(_run(sp02, "三天价格对比如下", days, ("flight-selection",)).values())
    assert not all(_run(sp02, "6/15 最便宜", days[1:2], ("flight-selection",)).values())
    st05 = C1["C1-ST-05"]
    assert all(_run(st05, "京都推荐：清水寺、金阁寺、伏见稻荷大社。").values())
    routed = _run(
        st05,
        "Day 1 清水寺→祇园",
        [_call("compute_google_maps_routes", origin="清水寺", destination="祇园", travel_mode="WALK")],
        ("itinerary-planning",),
    )
    assert not any(routed[k] for k in routed if not k.endswith("keywords")) and routed["2:keywords"] is False
    sb03 = C1["C1-SB-03"]
    drive = _call(
        "compute_google_maps_route_matrix", origins=["大皇宫"], destinations=["考山路"], travel_mode="DRIVE"
    )
    assert all(_run(sb03, "通勤时间为驾车估算，公交实际可能更长", [drive], ("itinerary-planning",)).values())


def test_c1_clarification_cases_ask_before_searching() -> None:
    sf01 = C1["C1-SF-01"]
    ask = "这是开口程，搜票前先确认：请问您从哪个城市飞入泰国、从哪个城市飞出？"
    assert all(_run(sf01, ask, skills=("flight-selection",)).values())
    bkk = _call("search_flights", origin="北京", destination="曼谷", departure_date="2025-05-01")
    assumed = _run(sf01, "已按曼谷进曼谷出为您搜索。", [bkk], ("flight-selection",))
    assert assumed == {"0:skill_triggered": True, "1:asked_clarification": False}
    sc02 = C1["C1-SC-02"]
    assert all(_run(sc02, "请问您想去东南亚哪个城市？暑假具体哪段时间出发、玩几天？").values())
    guessed = _run(sc02, "为您搜索了曼谷的机票。", [bkk])
    assert guessed["0:tool_not_called"] is False and guessed["1:asked_clarification"] is False
