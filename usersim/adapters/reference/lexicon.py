"""Word lists the reference agent reads user messages with: places, brands, products, diets.

Deliberately small and explicit: the reference agent is a known-answer target, so what it can
recognise is written down here rather than learned.
"""

from __future__ import annotations

import re

from usersim.lang.quantity import number

# canonical city -> (country, aliases)
CITIES: dict[str, tuple[str, list[str]]] = {
    "上海": ("中国", ["Shanghai", "沪", "浦东", "虹桥"]),
    "北京": ("中国", ["Beijing", "首都"]),
    "广州": ("中国", ["Guangzhou"]),
    "深圳": ("中国", ["Shenzhen"]),
    "成都": ("中国", ["Chengdu"]),
    "杭州": ("中国", ["Hangzhou"]),
    "厦门": ("中国", ["Xiamen"]),
    "三亚": ("中国", ["Sanya"]),
    "西安": ("中国", ["Xi'an", "Xian"]),
    "重庆": ("中国", ["Chongqing"]),
    "南京": ("中国", ["Nanjing"]),
    "武汉": ("中国", ["Wuhan"]),
    "青岛": ("中国", ["Qingdao"]),
    "大连": ("中国", ["Dalian"]),
    "舟山": ("中国", ["Zhoushan"]),
    "昆明": ("中国", ["Kunming"]),
    "丽江": ("中国", ["Lijiang"]),
    "桂林": ("中国", ["Guilin"]),
    "香港": ("中国", ["Hong Kong"]),
    "东京": ("日本", ["Tokyo", "東京"]),
    "大阪": ("日本", ["Osaka", "关西"]),
    "京都": ("日本", ["Kyoto"]),
    "奈良": ("日本", ["Nara"]),
    "札幌": ("日本", ["Sapporo", "北海道"]),
    "冲绳": ("日本", ["Okinawa", "沖縄", "那霸"]),
    "首尔": ("韩国", ["Seoul"]),
    "曼谷": ("泰国", ["Bangkok"]),
    "清迈": ("泰国", ["Chiang Mai"]),
    "普吉岛": ("泰国", ["Phuket", "普吉"]),
    "新加坡": ("新加坡", ["Singapore"]),
    "吉隆坡": ("马来西亚", ["Kuala Lumpur"]),
    "巴厘岛": ("印度尼西亚", ["Bali"]),
    "马尔代夫": ("马尔代夫", ["Maldives"]),
    "巴黎": ("法国", ["Paris"]),
    "伦敦": ("英国", ["London"]),
    "纽约": ("美国", ["New York"]),
}
COUNTRIES = ["日本", "泰国", "韩国", "越南", "柬埔寨", "东南亚", "欧洲", "法国", "英国", "美国", "马来西亚"]
# Default city when the user only names a country and lets us choose (said out loud in the reply).
COUNTRY_DEFAULT_CITY = {
    "日本": "东京",
    "泰国": "曼谷",
    "韩国": "首尔",
    "东南亚": "新加坡",
    "法国": "巴黎",
    "英国": "伦敦",
}
# Sights people name instead of their city (故宫 -> 北京 for a weather query).
LANDMARK_CITY = {
    "故宫": "北京",
    "天安门": "北京",
    "长城": "北京",
    "颐和园": "北京",
    "国贸": "北京",
    "望京": "北京",
    "外滩": "上海",
    "迪士尼": "上海",
    "陆家嘴": "上海",
    "清水寺": "京都",
    "金阁寺": "京都",
    "岚山": "京都",
    "伏见稻荷": "京都",
    "祇园": "京都",
    "大皇宫": "曼谷",
    "卧佛寺": "曼谷",
    "考山路": "曼谷",
    "圣淘沙": "新加坡",
    "滨海湾": "新加坡",
    "乌节路": "新加坡",
    "亚特兰蒂斯": "三亚",
    "宽窄巷子": "成都",
    "鼓浪屿": "厦门",
    "西湖": "杭州",
}

# Sights by city (itinerary-planning works on these); aliases users type -> the canonical sight.
SIGHTS: dict[str, list[str]] = {
    "京都": [
        "清水寺",
        "二年坂三年坂",
        "京都国立博物馆",
        "祇园",
        "八坂神社",
        "锦市场",
        "二条城",
        "金阁寺",
        "龙安寺",
        "仁和寺",
        "渡月桥",
        "岚山",
        "竹林小径",
        "天龙寺",
        "伏见稻荷大社",
        "东福寺",
        "南禅寺",
        "哲学之道",
        "银阁寺",
    ],
    "大阪": ["道顿堀", "心斋桥", "大阪城", "日本环球影城"],
    "东京": ["浅草寺", "秋叶原", "银座", "筑地", "东京塔", "涩谷", "明治神宫", "新宿", "东京晴空塔"],
    "曼谷": ["大皇宫", "玉佛寺", "卧佛寺", "郑王庙", "考山路", "暹罗广场", "四面佛", "乍都乍周末市场"],
    "新加坡": [
        "滨海湾花园",
        "滨海湾金沙",
        "鱼尾狮公园",
        "克拉码头",
        "牛车水",
        "小印度",
        "乌节路",
        "新加坡植物园",
        "新加坡动物园",
        "圣淘沙",
    ],
    "北京": ["天安门广场", "故宫", "南锣鼓巷", "天坛", "颐和园", "鸟巢", "三里屯", "798艺术区"],
    "上海": ["外滩", "南京路步行街", "豫园", "陆家嘴", "新天地", "田子坊", "上海迪士尼"],
    "成都": ["宽窄巷子", "大熊猫繁育研究基地", "武侯祠", "锦里", "太古里", "春熙路", "杜甫草堂"],
    "厦门": ["鼓浪屿", "菽庄花园", "南普陀寺", "厦门大学", "曾厝垵"],
}
SIGHT_ALIASES = {
    "伏见稻荷": "伏见稻荷大社",
    "鱼尾狮": "鱼尾狮公园",
    "植物园": "新加坡植物园",
    "动物园": "新加坡动物园",
    "岚山竹林": "竹林小径",
    "环球影城": "日本环球影城",
    "晴空塔": "东京晴空塔",
    "大熊猫基地": "大熊猫繁育研究基地",
    "滨海湾": "滨海湾花园",
    "圣淘沙岛": "圣淘沙",
    "迪士尼": "上海迪士尼",
}


def find_sights(text: str) -> list[str]:
    """Canonical sights named in the text, in order of mention (longest names first, no overlaps)."""
    names = {n: n for ns in SIGHTS.values() for n in ns} | SIGHT_ALIASES
    found: list[tuple[int, str]] = []
    taken: list[range] = []
    for alias in sorted(names, key=len, reverse=True):
        for m in re.finditer(re.escape(alias), text):
            span = range(m.start(), m.end())
            if not any(set(span) & set(t) for t in taken):
                taken.append(span)
                found.append((m.start(), names[alias]))
    return list(dict.fromkeys(name for _, name in sorted(found)))


def sight_city(sight: str) -> str | None:
    return next((c for c, ns in SIGHTS.items() if sight in ns), None)


_ALIAS: list[tuple[str, str]] = sorted(
    ((alias, city) for city, (_, aliases) in CITIES.items() for alias in [city, *aliases]),
    key=lambda pair: -len(pair[0]),
)
CITY_PATTERN = "|".join(re.escape(a) for a, _ in _ALIAS)


def canonical_city(name: str) -> str | None:
    """上海 for 'Shanghai' / '浦东'; None when not a known city."""
    low = name.strip().lower()
    for alias, city in _ALIAS:
        if alias.lower() == low:
            return city
    return None


def find_city_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, canonical city) of every city mentioned, in order, without overlaps."""
    found: list[tuple[int, int, str]] = []
    taken: list[range] = []
    for alias, city in _ALIAS:  # longest aliases first
        for m in re.finditer(re.escape(alias), text, flags=re.IGNORECASE):
            span = range(m.start(), m.end())
            if any(set(span) & set(t) for t in taken):
                continue
            taken.append(span)
            found.append((m.start(), m.end(), city))
    return sorted(found)


def find_cities(text: str) -> list[tuple[int, str]]:
    """(position, canonical city) of every city mentioned, in order."""
    return [(start, city) for start, _end, city in find_city_spans(text)]


def country_of(city: str) -> str | None:
    return CITIES[city][0] if city in CITIES else None


# canonical brand -> aliases (lower-case matching)
BRANDS: dict[str, list[str]] = {
    "苹果": ["苹果", "apple", "macbook", "iphone", "airpods", "mac"],
    "联想": ["联想", "lenovo", "thinkpad", "thinkbook", "小新", "拯救者"],
    "华为": ["华为", "huawei", "matebook"],
    "荣耀": ["荣耀", "honor", "magicbook"],
    "小米": ["小米", "xiaomi", "redmi", "红米"],
    "OPPO": ["oppo"],
    "vivo": ["vivo"],
    "三星": ["三星", "samsung"],
    "戴尔": ["戴尔", "dell", "xps"],
    "惠普": ["惠普", "hp"],
    "华硕": ["华硕", "asus", "rog", "zenbook", "灵耀", "天选"],
    "索尼": ["索尼", "sony"],
    "Bose": ["bose"],
    "微软": ["微软", "surface"],
}


def find_brands(text: str) -> list[tuple[int, str]]:
    low = text.lower()
    found = []
    for brand, aliases in BRANDS.items():
        positions = [
            m.start()
            for a in aliases
            for m in re.finditer(re.escape(a), low)
            # "mac" inside "macbook" is fine, but not inside unrelated ASCII words ("machine")
            if not (a.isascii() and m.end() < len(low) and low[m.end()].isalpha() and a != "mac")
        ]
        if positions:
            found.append((min(positions), brand))
    return sorted(found)


# product words -> (search query, catalog category or "")
PRODUCTS: list[tuple[str, str, str]] = [
    (r"笔记本|电脑|laptop|notebook|MacBook|ThinkPad", "笔记本电脑", "笔记本电脑"),
    (r"降噪耳机|耳机|AirPods|headphone|earbuds", "降噪耳机", "耳机"),
    (r"手机|phone|iPhone", "手机", "手机"),
    (r"蛋白粉|protein", "蛋白粉", "蛋白粉"),
    (r"背包|双肩包|行李箱", "背包", "箱包"),
    (r"手提包|包包|女包", "手提包", "女包"),
    (r"相机|镜头", "相机", "相机"),
    (r"帐篷|露营|睡袋", "露营装备", "露营装备"),
    (r"充电宝|移动电源", "充电宝", ""),
    (r"礼物|生日礼", "礼物", ""),
]

ROOM_TYPES = ["海景房", "大床房", "双床房", "标准间", "套房", "家庭房", "亲子房", "单人间"]

# diet words -> what to exclude (restaurants / products)
DIET_RULES: list[tuple[str, str]] = [
    (r"海鲜过敏|对海鲜过敏|不吃海鲜|不能吃海鲜", "海鲜"),
    (r"不吃辣|不能吃辣|吃不了辣|怕辣", "辣"),
    (r"花生过敏|对花生过敏", "花生"),
    (r"吃素|素食", "肉"),
    (r"乳糖不耐|牛奶过敏|不能喝牛奶", "乳糖"),
]


def cn_number(text: str) -> float | None:
    """'12', '1.5', '两', '十五', '二十' -> number; None when not a number."""
    return number(text)


NUM = r"(?:\d+(?:\.\d+)?|[一二两三四五六七八九十]+)"
