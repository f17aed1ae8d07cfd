import pytest

from tests.judges.helpers import bot, case, state, user
from usersim.judges.checks import constraint as constraint_mod
from usersim.judges.checks import run_check
from usersim.judges.checks.memory import compute_memory_recall_score, fuzzy_match

KEY_INFO = {"name": "张三", "location": "北京", "job": "测试工程师"}


async def run(spec, transcript, **kw):
    return await run_check(
        spec, transcript=transcript, case=case(checks=[spec]), state=state(transcript, **kw)
    )


def test_memory_recall_score_seed_003_examples():
    # 记住名字和地点，忘了职业 -> 0.67 (seed 003's worked example)
    assert compute_memory_recall_score("你叫张三，在北京工作。", KEY_INFO) == 0.67
    # "北京" matches "北京市" exactly; "测试" is a fuzzy hit for 测试工程师 -> 1/3 + 1/3 + 0.5/3
    assert compute_memory_recall_score("张三，北京市，做测试的", KEY_INFO) == 0.83
    assert compute_memory_recall_score("张三 北京 测试工程师", KEY_INFO) == 1.0
    assert compute_memory_recall_score("我是通义千问", KEY_INFO) == 0.0
    assert fuzzy_match("测试工程师", "做测试") and not fuzzy_match("测试工程师", "做开发")
    assert not fuzzy_match("北京", "北方")  # two characters or less: exact containment only


async def test_memory_recall_check_reports_each_fact():
    spec = {
        "memory_recall": {
            "facts": [
                {"expected": "张三"},
                {"expected": "北京"},
                {"expected": "测试工程师", "fuzzy": ["QA"]},
            ],
            "threshold": 0.7,
        }
    }
    v = await run(spec, [user("你叫什么名字？在哪里工作？做什么的？"), bot("你叫张三，在北京工作。")])
    assert v.verdict == "fail" and v.score == 0.67
    assert (
        v.reason == "memory recall score 0.67 < threshold 0.7 (张三: exact; 北京: exact; 测试工程师: missing)"
    )
    v = await run(spec, [user("…"), bot("张三，北京，QA")])
    assert v.verdict == "pass" and v.score == 0.83
    assert "测试工程师: fuzzy via 'QA'" in v.reason


async def test_step_completion_partial_credit_c2_sc_02():
    # Seed 001 C2-SC-02: 3 communities x 3 dimensions; 7/9 = 78%.
    dims = {"房价": "万/平", "配套": "(?:商场|超市)", "交通": "地铁"}
    steps = [
        {"name": f"{c}·{d}", "check": {"count": {"pattern": f"{c}[^。]*{w}", "min": 1}}}
        for c in ("望京花园小区", "劲松五区", "百子湾家园")
        for d, w in dims.items()
    ]
    reply = (
        "望京花园小区：10万/平，有商场，近地铁。劲松五区：8万/平，有超市，地铁10号线。"
        "百子湾家园：约7.5万/平，配套和交通数据缺失。"
    )
    v = await run({"step_completion": {"steps": steps, "threshold": 0.75}}, [user("…"), bot(reply)])
    assert v.verdict == "pass" and v.score == pytest.approx(7 / 9, abs=1e-4)
    assert v.reason.startswith("7/9 steps (78%)")
    assert v.reason.endswith("missing: 百子湾家园·配套, 百子湾家园·交通; threshold 75%")
    v = await run({"step_completion": {"steps": steps, "threshold": 0.8}}, [user("…"), bot(reply)])
    assert v.verdict == "fail"


async def test_step_completion_reports_seven_of_nine():
    steps = [{"name": f"s{i}", "check": {"keywords": {"any": [f"k{i}"]}}} for i in range(9)]
    v = await run(
        {"step_completion": {"steps": steps}}, [user("…"), bot(" ".join(f"k{i}" for i in range(7)))]
    )
    assert v.verdict == "pass"
    assert v.reason == "7/9 steps (78%); done: s0, s1, s2, s3, s4, s5, s6; missing: s7, s8; threshold 50%"


async def test_constraint_checks_recommended_items(monkeypatch):
    catalog = [
        {"name": "ThinkPad X1 Carbon", "weight_kg": 1.12, "brand": "Lenovo", "price": 7999},
        {"name": "Dell XPS 14", "weight_kg": 1.64, "brand": "Dell", "price": 8999},
    ]

    def lookup(name, text):
        assert name == "products"
        return [i for i in catalog if i["name"] in text]

    monkeypatch.setattr(constraint_mod, "_lookup", lookup)
    spec = {"constraint": {"catalog": "products", "field": "weight_kg", "op": "<=", "value": "1.5kg"}}
    v = await run(spec, [user("推荐几款"), bot("推荐 ThinkPad X1 Carbon，轻薄。")])
    assert v.verdict == "pass"
    assert v.reason == "1 recommended products item(s) found; satisfying: ThinkPad X1 Carbon (weight_kg=1.12)"
    v = await run(spec, [user("推荐几款"), bot("ThinkPad X1 Carbon 和 Dell XPS 14 都不错。")])
    assert v.verdict == "fail" and v.score == 0.5
    assert "violating weight_kg <= 1.5kg: Dell XPS 14 (weight_kg=1.64)" in v.reason
    brand = {
        "constraint": {"catalog": "products", "field": "brand", "op": "not_in", "value": ["Apple", "Dell"]}
    }
    assert (await run(brand, [user("…"), bot("Dell XPS 14")])).verdict == "fail"
    v = await run(spec, [user("…"), bot("建议去实体店看看。")])
    assert v.verdict == "inconclusive"
    assert (
        v.reason
        == "no recommended products item from the catalog found in the reply; cannot check weight_kg <= 1.5kg"
    )


async def test_state_checks():
    t = [user("帮我规划京都行程"), bot("好的")]
    v = await run({"skill_triggered": {"skill": "itinerary-planning"}}, t, skills=[("itinerary-planning", 1)])
    assert v.verdict == "pass" and v.reason == "skill itinerary-planning triggered in turn 1"
    v = await run({"skill_triggered": {"skill": "flight-selection"}}, t, skills=[("itinerary-planning", 1)])
    assert (
        v.verdict == "fail"
        and v.reason == "skill flight-selection was never triggered (skills triggered: itinerary-planning)"
    )
    v = await run({"skill_not_triggered": {}}, t, skills=[("itinerary-planning", 1)])
    assert v.verdict == "fail" and v.reason == "skill itinerary-planning was triggered in turn 1"
    assert (await run({"skill_not_triggered": {"skill": "flight-selection"}}, t)).verdict == "pass"
    v = await run({"stop_reason": {"in": ["goal_met"]}}, t, stop="max_turns")
    assert v.verdict == "fail" and v.reason == "stopped: max_turns; required one of goal_met"
    assert (
        await run({"stop_reason": {"in": ["goal_met", "max_turns"]}}, t, stop="max_turns")
    ).verdict == "pass"
    v = await run({"turns": {"max": 0 + 1}}, t + [user("再来"), bot("好")])
    assert v.verdict == "fail" and v.reason == "2 user turns, over the limit of 1"


async def test_constraint_against_the_sandbox_catalog():
    catalog = pytest.importorskip("usersim.sandbox.catalog")
    laptops = [p for p in catalog.products() if p.get("weight_kg")]
    light = min(laptops, key=lambda p: p["weight_kg"])
    heavy = max(laptops, key=lambda p: p["weight_kg"])
    bound = (light["weight_kg"] + heavy["weight_kg"]) / 2
    spec = {"constraint": {"catalog": "products", "field": "weight_kg", "op": "<=", "value": bound}}
    v = await run(spec, [user("推荐几款轻的"), bot(f"推荐 {light['name']}。")])
    assert v.verdict == "pass" and f"satisfying: {light['name']} (weight_kg={light['weight_kg']})" in v.reason
    v = await run(spec, [user("推荐几款轻的"), bot(f"推荐 {light['name']} 和 {heavy['name']}。")])
    assert v.verdict == "fail" and f"violating weight_kg <= {bound}: {heavy['name']}" in v.reason
    with pytest.raises(ValueError, match="unknown catalog 'product'. Did you mean 'products'?"):
        from usersim.judges.checks import validate_check

        validate_check({"constraint": {"catalog": "product", "field": "price", "op": "<=", "value": 1}})


async def test_constraint_nested_field(monkeypatch):
    monkeypatch.setattr(
        constraint_mod, "_lookup", lambda name, text: [{"name": "A", "specs": {"ram": "16GB"}}]
    )
    spec = {"constraint": {"catalog": "products", "field": "specs.ram", "op": ">=", "value": "16"}}
    v = await run(spec, [user("…"), bot("A")])
    assert v.verdict == "pass" and v.reason.endswith("satisfying: A (specs.ram=16GB)")
