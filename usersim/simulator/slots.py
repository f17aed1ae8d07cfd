"""Which user facts an agent reply asks for (slot detection, Chinese and English).

The rule simulator answers only what was asked (reveal_policy when_asked), so it needs to know
which slots a question is about: "你打算玩几天？" -> duration, "What's your budget?" -> budget.
"""

from __future__ import annotations

import re

from usersim.simulator.signals import is_asking, sentences

# slot -> regex over one asking sentence. Order matters only for ties within a sentence.
SLOT_PATTERNS: dict[str, str] = {
    "origin": r"从哪(里|儿|个城市)?(出发|走|飞)|出发(地|城市|点)|哪里出发|哪个城市出发|where .*(from|departing)|departure city|leaving from|flying from|depart(ing)? from|from which city|starting point",
    "destination": r"去哪(里|儿)?|哪个城市(?!出发)|哪些城市|目的地|想去的地方|哪个国家|where (do you|would you|are you).*(go|travel|visit)|destination|which cit(y|ies)(?!.*(depart|from))|where to\b",
    "dates": r"什么时候|哪天|哪几天|几号|几月|日期|出发时间|具体时间|when |what dates?|which dates?|travel dates|dates",
    "duration": r"几天|多少天|多久|多长时间|玩几|待几|how (many|long).*(days|nights|stay|trip)|how long|duration",
    "budget": r"预算|多少钱|价位|价格区间|花费|价格范围|心理价|budget|price range|how much.*(spend|pay)",
    "party_size": r"几个人|几位|多少人|几口人|和谁|同行|一个人(去|还是)|和朋友|和家人|带孩子|几个大人|how many (people|travell?ers|guests|of you)|travell?ing with|party size",
    "purpose": r"用途|用来(做|干)|主要(用|做)|做什么用|什么场景|工作还是|use it for|what.*for\b|purpose|primary use",
    "brand": r"品牌|牌子|哪家|brand",
    "weight": r"重量|轻薄|便携|多重|weight|portable|lightweight",
    "preferences": r"喜欢|偏好|兴趣|感兴趣|风格|类型的|想体验|景点|想玩|prefer|interests?|what kind|what type|style",
    "accommodation": r"住宿|住什么|住哪|酒店.{0,6}(要求|类型|星级|档次|预算|偏好)|民宿|accommodation|hotel preference|where.*stay",
    "district": r"哪个区|区域|片区|位置|地段|商圈|which (area|district|neighbou?rhood)|location",
    "bedrooms": r"几居|几室|户型|几个房间|bedrooms?|how many rooms",
    "area_sqm": r"面积|平米|多大的房|square (meters|metres|feet)|size of the (flat|apartment)",
    "diet": r"忌口|过敏|饮食|不吃|吃辣|口味|dietary|allerg|food restriction|spicy",
    "cuisine": r"菜系|想吃什么|什么菜|cuisine|what food",
    "screen_size": r"屏幕|尺寸|几寸|screen size|inch",
    "os": r"系统|Windows|macOS|Mac 还是|operating system",
    "name": r"怎么称呼|您贵姓|你叫什么|your name",
}
_COMPILED = {slot: re.compile(p, re.IGNORECASE) for slot, p in SLOT_PATTERNS.items()}
KNOWN_SLOTS = sorted(SLOT_PATTERNS)
_GENERIC = {"preferences"}


def asking_sentences(text: str) -> list[str]:
    """Sentences of an agent reply that ask the user something."""
    return [s for s in sentences(text) if is_asking(s)]


def asked_slots(text: str) -> list[str]:
    """Slots the agent asks about, in the order it asks them (each once)."""
    found: list[tuple[int, int, str]] = []
    for n, sentence in enumerate(asking_sentences(text)):
        hits = [(n, m.start(), slot) for slot, p in _COMPILED.items() if (m := p.search(sentence))]
        # "对品牌有偏好吗" is about the brand: a generic slot yields to a specific one in its sentence
        if any(slot not in _GENERIC for _n, _p, slot in hits):
            hits = [h for h in hits if h[2] not in _GENERIC]
        found.extend(hits)
    ordered: list[str] = []
    for _n, _pos, slot in sorted(found):
        if slot not in ordered:
            ordered.append(slot)
    return ordered


def asks_anything(text: str) -> bool:
    """Whether the reply asks the user anything at all (even about a slot we cannot name)."""
    return bool(asking_sentences(text))


# "需要我帮你预订吗？" / "Shall I book it?": the agent asks for a go-ahead, not for a fact.
_CONFIRM = re.compile(
    r"(需要我|要不要我|要我|是否需要|是否要|帮您预订|帮你预订|下单吗|就订|确定要|"
    r"shall i|should i|would you like me to|do you want me to|want me to)",
    re.IGNORECASE,
)


def asks_confirmation(text: str) -> bool:
    """Whether the reply asks the user's go-ahead ("需要我帮你预订吗？")."""
    return any(_CONFIRM.search(s) for s in asking_sentences(text))
