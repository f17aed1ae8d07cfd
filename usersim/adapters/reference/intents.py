"""Which intents a user message carries, and which slots our own last question asked about.

A message may carry several intents (weather + restaurant); each intent is matched in its own
clause so per-intent details (the hotel's dates, the flight's cities) come from the right part.
A message with no intent (an answer such as "两个人", a correction such as "是京都不是东京",
"那推荐吧") continues the topic of the latest visible user message that had one.
"""

from __future__ import annotations

import re

from usersim.adapters.reference.lexicon import find_sights

# Order = the order intents are handled and answered in.
INTENTS: list[tuple[str, str]] = [
    ("ratefix", r"汇率(?:是|为|改成|改为)?\s*1\s*[:：]\s*\d"),
    (
        "listops",
        r"按.{0,4}(?:评分|价格|距离|销量).{0,6}(?:排|从高到低|从低到高)|重新排|算.{0,4}总数|只要.{0,8}以内",
    ),
    ("digest", r"汇总|归纳|各自的结论"),
    (
        "reference",
        r"^(?:[^，,]{0,4}[，,])?\s*(?:它|他|她|这个|那个)(?!东西)|第[一二三]个|第[一二三]家|最后一个|那家.{1,3}(?:店|馆)",
    ),
    (
        "recall",
        r"叫什么来着|上次.{0,8}推荐|之前.{0,6}(推荐|说)的.{0,6}(是|叫)|还记得|记不记得|我叫什么|我是做什么|"
        r"我在哪.{0,3}(工作|上班)|我(刚才|之前|前面)说的|来着|你建议我|你推荐我|刚才说的",
    ),
    ("weather", r"天气|气温|下雨吗|weather"),
    (
        "trip",
        r"旅行|旅游|之旅|度假|出去玩|去.{1,8}玩|完整.{0,4}方案|出行方案|机票.{0,3}酒店.{0,3}行程|"
        r"规划.{0,60}从.{1,6}出发|从.{1,6}出发.{0,60}规划",
    ),
    ("flights", r"机票|航班|飞机票|订票|flights?\b"),
    ("trains", r"高铁|火车票|动车|车票"),
    ("itinerary", r"行程|日程|怎么安排|排一下|攻略|几天.{0,4}怎么玩|itinerary"),
    ("hotels", r"酒店|住宿|住哪|住在哪|民宿|宾馆|旅馆|住的地方|hotels?\b"),
    ("restaurants", r"餐厅|饭店|餐馆|美食|好吃的|吃什么|小吃|restaurants?\b"),
    ("housing", r"二手房|房源|买房|小区"),
    ("zhihu", r"知乎|高赞"),
    ("visa", r"签证|visa\b"),
    (
        "products",
        r"买|推荐几款|推荐.{0,3}[款台部]|有货|还有.{0,2}色的|蛋白粉|耳机|笔记本|手机|电脑|手提包|背包|充电宝|礼物",
    ),
    (
        "search",
        r"展览|演出|活动|新闻|对比|哪个好|值得|评价|口碑|怎么样|是什么|多少钱|攻略|装备|清单|准备什么",
    ),
]
_COMPILED = [(name, re.compile(p, re.IGNORECASE)) for name, p in INTENTS]
# An intent that another one in the same message already covers.
# A whole trip covers its parts wherever they are named; other intents only within their clause.
_EVERYTHING = {
    "trip",
    "flights",
    "hotels",
    "itinerary",
    "restaurants",
    "products",
    "search",
    "weather",
    "visa",
}
_COVERS_ANYWHERE = {
    "trip": {"flights", "hotels", "itinerary"},
    "restaurants": {"search"},
    "ratefix": _EVERYTHING,
    "listops": _EVERYTHING,
    "digest": _EVERYTHING | {"recall"},
    "reference": {"hotels", "search", "restaurants", "itinerary"},
}
_SUBSUMED = {
    "trip": {"search"},
    "itinerary": {"search"},
    "products": {"search"},
    "housing": {"products", "search"},
    "hotels": {"search"},
    "zhihu": {"search"},
    "flights": {"search"},
    "visa": {"search"},
    "recall": {"products", "search", "hotels"},
}
_CLAUSE = re.compile(r"[，,。；;！!？?\n]|还有|另外|顺便|对了|以及|\d\)\s*")


def detect(text: str) -> list[str]:
    """Intents in the message, in handling order."""
    found = [name for name, p in _COMPILED if p.search(text)]
    clause = {n: clause_for(text, n) for n in found}
    # An intent is covered by another only when both come from the same clause ("推荐几款耳机" is
    # not also a web search; "另外帮我查下杭州的展览" in a clause of its own still is).
    found = [
        n
        for n in found
        if not any(n in _SUBSUMED.get(o, set()) and clause[o] == clause[n] for o in found if o != n)
        and not any(n in _COVERS_ANYWHERE.get(o, set()) for o in found)
    ]
    # "想飞上天和太阳肩并肩" style lyrics name no flight keyword and stay unmatched on purpose.
    return found


def choose(
    text: str, earlier: list[str], has_images: bool, *, details: bool = False, asked: set[str] = frozenset()
) -> list[str]:  # type: ignore[assignment]
    """The intents to handle for the current message (`earlier`: visible user messages before it;
    `details`: the message names concrete details such as cities, dates, party or budget; `asked`:
    the slots our last reply asked about)."""
    intents = detect(text)
    if details and asked and intents == ["reference"]:
        # "这个我没什么要求。天数：6 天" / "第一次弄这个": an answer to our question, where 这个 means
        # "this whole business", continues the topic; it points at no one thing to resolve.
        intents = []
    if not intents and re.search(r"不吃|过敏|不耐受|忌口", text):
        intents = ["restaurants"]  # a new diet constraint re-plans the food (B1-IF-05)
    if "trip" in intents and re.search(r"礼物|送给|送女朋友|送男朋友|送妈妈|送爸爸", text):
        intents = list(
            dict.fromkeys("products" if i == "trip" else i for i in intents)
        )  # "她喜欢旅行": a gift hint
    elif not intents and len(find_sights(text)) >= 2:
        intents = ["itinerary"]  # "景点去清水寺、金阁寺、岚山": arrange these sights
    if not intents and not details and re.search(r"它|那个|这个|那家|那款|那件", text) and not has_images:
        # "帮我把它订了吧": resolve the pointer or ask, never guess. A message that names its own
        # details ("东京和大阪都去会不会太赶？第一次弄这个") has nothing to resolve.
        intents = ["reference"]
    intents = intents or topic(earlier) or (["search"] if text.strip() else [])
    if (
        "trip" in intents
        and re.search(r"行程|日程|排一下|排个", text)
        and not re.search(r"机票|航班|酒店|住宿|出发|方案|旅行|旅游", text)
    ):
        intents = ["itinerary" if i == "trip" else i for i in intents]  # "去新加坡玩 3 天…帮我排个行程"
    if (
        "flights" in intents
        and ({"itinerary", "trip"} & set(intents))
        and not re.search(
            r"(查|搜|订|买|找|比价|看看).{0,8}(机票|航班)|(机票|航班).{0,4}(多少钱|怎么买)", text
        )
    ):
        intents = [i for i in intents if i != "flights"]  # "基于这个航班时间排行程": the flights are done
    return intents


def topic(earlier: list[str]) -> list[str]:
    """The intents of the latest earlier message that had some (an answer continues that topic)."""
    for text in reversed(earlier):
        found = [
            i
            for i in detect(text)
            if i not in ("recall", "search", "visa", "reference", "listops", "ratefix", "digest")
        ]
        if found:
            return found
    return []


def clause_for(text: str, intent: str) -> str:
    """The part of the message that carries `intent` (the whole text when it cannot be isolated)."""
    pattern = dict(_COMPILED)[intent]
    parts = [p for p in _CLAUSE.split(text) if p and p.strip()]
    hits = [p for p in parts if pattern.search(p)]
    return hits[0] if len(parts) > 1 and hits else text


# What our own clarification lines ask about (we write them, so we can read them back).
_ASKED = {
    "origin": r"出发地|从哪个城市出发",
    "destination": r"目的地|想去哪个城市|去哪个城市",
    "dates": r"日期|哪天出发",
    "duration": r"玩几天|几天",
    "party": r"几位|人数",
    "budget": r"预算",
    "purpose": r"用途",
    "brand": r"品牌",
    "product": r"哪件商品|哪款商品",
    "checkin": r"入住|离店",
    "entry": r"飞入|入境",
    "exit": r"飞出|离开",
}


def asked_slots(reply: str) -> set[str]:
    """Slots our previous reply asked the user about (its question lines)."""
    asked: set[str] = set()
    for line in reply.splitlines():
        if "？" not in line and "?" not in line:
            continue
        for slot, p in _ASKED.items():
            if re.search(p, line):
                asked.add(slot)
    return asked
