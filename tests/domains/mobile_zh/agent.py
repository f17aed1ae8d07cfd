"""移动营业厅的测试智能体：按用户需求推荐的 `correct`（两种说法），和只推最便宜套餐的 `flawed`。

    usersim run tests/domains/mobile_zh/cases --agent python:tests.domains.mobile_zh.agent:correct

`correct` / `polite` 问法不同、行为相同：核验身份，读出用户的流量、预算、漫游需求，推荐满足
的套餐，得到同意后办理。`flawed` 不看需求，推荐最便宜的套餐，被拒后推荐最贵的，用户同意就办理。
"""

from __future__ import annotations

import re
from typing import Any

from tests.domains.chat import answer as _answer
from tests.domains.chat import call as _call
from tests.domains.chat import read as _read
from tests.domains.chat import say as _say

WORDING = {
    "correct": {
        "phone": "请问您的手机号是多少？",
        "id": "为了核验身份，请提供身份证后六位。",
        "confirm": "为您推荐{name}：每月{fee}元，{gb}GB 流量，{roam}。确认为您办理{fee}元套餐吗？",
        "done": "已为您办理{name}，{effective}生效。",
    },
    "polite": {
        "phone": "麻烦告诉我一下您要办理的手机号",
        "id": "再麻烦提供一下机主身份证的后六位数字",
        "confirm": "根据您的需求，{name}最合适（{fee}元/月，流量{gb}G，{roam}），您看可以办吗",
        "done": "办理成功：{name}，{effective}起生效，有问题随时找我。",
    },
}
_PHONE = re.compile(r"1\d{10}")
_ID6 = re.compile(r"(?<!\d)\d{6}(?!\d)")
_YES = re.compile(r"(可以|好的|行|没问题|同意|确认|就这个|办理吧|就办这个)")
_NO = re.compile(r"(不行|不要|不用|不可以|不对|太贵|不够|换一个|没有漫游|不能)")
_GB = re.compile(r"(\d+)\s*[Gg]")
_FEE = re.compile(r"(?:不超过|以内|最多|不能超过)\s*(\d+)\s*元|(\d+)\s*元\s*(?:以内|以下)")


def _pick(plans: list[dict[str, Any]], said: str) -> dict[str, Any]:
    gb = max((int(g) for g in _GB.findall(said)), default=0)
    fees = [int(a or b) for a, b in _FEE.findall(said)]
    roam = "漫游" in said
    ok = [
        p
        for p in plans
        if p["data_gb"] >= gb and (not fees or p["monthly_fee"] <= min(fees)) and (p["roaming"] or not roam)
    ]
    return min(ok or plans, key=lambda p: p["monthly_fee"])


def respond(messages: list[dict[str, Any]], words: dict[str, str], flawed: bool = False) -> dict[str, Any]:
    turns, results = _read(messages)
    said = "\n".join(t for r, t in turns if r == "user")
    phones = _PHONE.findall(said)
    if not phones:
        return _say(words["phone"])
    ids = [i for i in _ID6.findall(_answer(turns, words["id"]) or "")]
    if not ids:
        return _say(words["id"])
    if "verify_subscriber" not in results:
        return _call(messages, "verify_subscriber", phone=phones[-1], id_last6=ids[-1])
    if "list_plans" not in results:
        return _call(messages, "list_plans")
    plans = results["list_plans"]
    if "change_plan" in results:
        plan = next(p for p in plans if p["plan_id"] == results["change_plan"]["plan_id"])
        return _say(words["done"].format(name=plan["name"], effective=results["change_plan"]["effective"]))
    if flawed:
        order = [min(plans, key=lambda p: p["monthly_fee"]), max(plans, key=lambda p: p["monthly_fee"])]
    else:
        order = [_pick(plans, said)]
    for plan in order:
        roam = "含国际漫游" if plan["roaming"] else "不含国际漫游"
        text = words["confirm"].format(
            name=plan["name"], fee=plan["monthly_fee"], gb=plan["data_gb"], roam=roam
        )
        reply = _answer(turns, text)
        if reply is None:
            return _say(text)
        if _YES.search(reply) and not _NO.search(reply):
            return _call(messages, "change_plan", phone=phones[-1], plan_id=plan["plan_id"])
    return _say(text)


def correct(messages, tools):
    return respond(messages, WORDING["correct"])


def polite(messages, tools):
    return respond(messages, WORDING["polite"])


def flawed(messages, tools):
    return respond(messages, WORDING["correct"], flawed=True)
