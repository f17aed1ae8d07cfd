"""Checks read mentions in context: only recommended items count (constraint, count), negated
mentions are not forbidden mentions (keywords none), keywords ignore whitespace and case."""

from tests.judges.helpers import bot, case, state, user
from usersim.judges.checks import run_check
from usersim.judges.checks.mentions import find_all
from usersim.lang.polarity import Reader


async def run(spec, transcript):
    return await run_check(spec, transcript=transcript, case=case(checks=[spec]), state=state(transcript))


def _negated(text: str, word: str) -> bool:
    reader = Reader(text)
    offsets = find_all(word, text)
    assert offsets, (word, text)
    return all(reader.at(o, o + len(word)).negative for o in offsets)


def test_exclusion_context_marks_mentions_excluded():
    assert _negated("我排除了 MacBook Air（苹果），推荐华为 MateBook 14", "MacBook Air")
    assert not _negated("我排除了 MacBook Air（苹果），推荐华为 MateBook 14", "华为MateBook")
    assert _negated("Redmi Note 13 和 OPPO A3 已剔除。", "Redmi Note 13")
    assert _negated("推荐华为 MateBook 14 而不是 MacBook Air", "MacBook Air")
    assert not _negated("推荐华为 MateBook 14 而不是 MacBook Air", "华为 MateBook 14")
    assert _negated("MacBook Air（苹果），不考虑。", "MacBook Air")
    assert not _negated("MacBook Air（苹果）。不考虑小米。", "MacBook Air")  # another sentence
    assert _negated("不推荐：MacBook Air；推荐：华为 MateBook 14", "MacBook Air")
    listing = "已排除：\n- MacBook Air\n- 小米 Pro\n\n推荐：\n- 华为 MateBook 14"
    assert _negated(listing, "MacBook Air") and not _negated(listing, "华为 MateBook 14")
    assert not _negated("Day 2：环球影城玩一整天", "环球影城")


def test_recommending_idioms_and_forward_only_negations_do_not_negate():
    assert not _negated("不要错过寿司！", "寿司")
    assert not _negated("没想到寿司这么好吃", "寿司")
    assert not _negated("去了环球影城你不会后悔", "环球影城")  # 不会 reaches forward only
    assert _negated("环球影城就不去了", "环球影城")
    assert _negated("环球影城改成札幌", "环球影城")
    # "X 不是最便宜的" says something about X, it does not reject it
    assert not _negated("MacBook Air 13 不是最便宜的，但最轻", "MacBook Air 13")


LAPTOP = {"constraint": {"catalog": "products", "field": "brand", "op": "not_in", "value": ["Apple"]}}


async def test_constraint_counts_only_recommended_items():
    reply = "我排除了 MacBook Air 13（苹果），推荐华为 MateBook 14 2024，重 1.31kg，5999 元。"
    v = await run(LAPTOP, [user("推荐笔记本"), bot(reply)])
    assert v.verdict == "pass", v.reason
    assert "satisfying: 华为MateBook 14 2024" in v.reason
    assert "not counted (named as excluded/rejected): Apple MacBook Air 13 M3" in v.reason
    v = await run(LAPTOP, [user("推荐笔记本"), bot("推荐 MacBook Air 13 和华为 MateBook 14 2024。")])
    assert v.verdict == "fail" and "violating brand not_in ['Apple']: Apple MacBook Air 13 M3" in v.reason
    phones = {
        "constraint": {"catalog": "products", "field": "brand", "op": "not_in", "value": ["小米", "OPPO"]}
    }
    reply = "推荐以下几款：\n1. vivo Y200\n2. 荣耀X50\nRedmi Note 13 和 OPPO A3 已剔除。"
    v = await run(phones, [user("手机"), bot(reply)])
    assert v.verdict == "pass", v.reason
    assert "Redmi Note 13, OPPO A3" in v.reason
    v = await run(phones, [user("手机"), bot("Redmi Note 13 和 OPPO A3 都已剔除。")])
    assert v.verdict == "inconclusive" and v.reason.startswith("no recommended products item")


TABLE = """为你精选 5 款：

| # | 型号 | 价格 |
|---|---|---|
| 1 | vivo Y200 | 1599 |
| 2 | 荣耀X50 | 1399 |
| 3 | 华为畅享70 | 1199 |
| 4 | iQOO Z9 | 1499 |
| 5 | 一加Ace 3V | 1999 |
| - | OPPO A3 | 已剔除 |
"""


async def test_count_reads_tables_and_lists_and_skips_excluded_rows():
    v = await run({"count": {"exactly": 5}}, [user("5 款手机"), bot(TABLE)])
    assert v.verdict == "pass", v.reason
    assert v.reason.startswith("5 table rows (| 1 | vivo Y200")
    assert "1 excluded/rejected not counted (| - | OPPO A3 | 已剔除 |)" in v.reason
    four = TABLE.replace("| 5 | 一加Ace 3V | 1999 |\n", "")
    assert (await run({"count": {"exactly": 5}}, [user("5 款"), bot(four)])).verdict == "fail"
    bullets = "- vivo Y200\n- 荣耀X50\n- 华为畅享70\n- iQOO Z9\n- 一加Ace 3V\n- Redmi Note 13（小米，已剔除）"
    v = await run({"count": {"exactly": 5}}, [user("5 款"), bot(bullets)])
    assert v.verdict == "pass" and "1 excluded/rejected not counted" in v.reason
    # a list and a table of the same items count once
    both = TABLE + "\n1. vivo Y200\n2. 荣耀X50"
    assert (await run({"count": {"exactly": 5}}, [user("5 款"), bot(both)])).verdict == "pass"


async def test_keywords_none_ignores_negated_mentions():
    spec = {"keywords": {"none": ["环球影城", "大阪城"], "any": ["札幌"]}}
    v = await run(spec, [user("改去北海道"), bot("好的，改成北海道 3 天，不再去环球影城了。Day 1 札幌。")])
    assert v.verdict == "pass", v.reason
    assert "only negated mentions of 环球影城 (not counted)" in v.reason
    v = await run(spec, [user("改去北海道"), bot("Day 1 札幌；Day 2 环球影城。")])
    assert v.verdict == "fail" and "forbidden present: 环球影城" in v.reason
    crab = {"keywords": {"all": ["难波东方"], "none": ["蟹道乐"]}}
    good = "您说的第一个是难波东方酒店（不是餐厅列表里的蟹道乐），步行约 3 分钟，含早餐。"
    assert (await run(crab, [user("第一个"), bot(good)])).verdict == "pass"
    assert (await run(crab, [user("第一个"), bot("第一个是蟹道乐，难波东方也不错。")])).verdict == "fail"


async def test_keywords_ignore_whitespace_and_case():
    spec = {"keywords": {"all": ["华为 MateBook"], "any": ["matebook 14"]}}
    v = await run(spec, [user("推荐"), bot("推荐华为MateBook 14 2024。")])
    assert v.verdict == "pass", v.reason
    # numbers still compare by value, not as loose text
    assert (await run({"keywords": {"any": ["4"]}}, [user("?"), bot("14 件")])).verdict == "fail"


def test_a_space_between_latin_letters_is_kept():
    assert find_all("Tokyo", "switched to Kyoto 京都") == []  # "to Kyoto" squashed is "tokyoto"
    assert find_all("Tokyo", "The Tokyo search was dropped") == [4]
    assert find_all("Day1", "Day 1: 清水寺") == [0]  # a letter and a digit may be spaced
    assert find_all("New York", "NewYork or New  York") == [0, 11]
    assert find_all("华为 MateBook", "华为MateBook 14") == [0]


def test_a_city_or_sight_counts_under_its_other_names():
    from usersim.judges.checks.mentions import place_names, spellings

    assert "Hangzhou" in place_names("杭州") and "Kiyomizu-dera" in place_names("清水寺")
    assert place_names("北京故宫") == () and place_names("PVG") == () and place_names("降噪") == ()
    assert "沪" not in place_names("上海")  # one character: inside too many other words
    assert ("Tokyo", "places") in spellings("东京", {})


def test_a_mention_only_offered_for_later_is_not_said():
    from usersim.judges.checks.mentions import Texts

    def reading(text: str, word: str) -> str:
        return Texts([(0, text)]).mentions(word, {})[0].reading.polarity

    assert reading("如果你告诉我天数，我可以再帮你排成 Day 1、Day 2 的行程。", "Day 1") == "negated"
    assert reading("If you'd like, I can also plan it as Day 1 and Day 2.", "Day 1") == "negated"
    assert (
        reading("如果想住东京，推荐东京柏悦。", "东京") == "hypothetical"
    )  # a conditional recommendation stays unsure
    assert reading("我可以再帮你查东京的酒店。", "东京") != "negated"  # no condition: an offer naming it


def test_lexicon_spellings_ignore_whitespace():
    from usersim.lang.lexicon import synonyms

    assert ("day_one", "第一日") in synonyms("第 1 天")
    assert ("day_one", "Day one") in synonyms("DAY 1")
    assert all(p != "天气" for _, p in synonyms("气温"))  # the temperature is not the weather
