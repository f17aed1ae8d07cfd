"""Handlers that work on the conversation itself: pointers (它/他/那个/第一个), list operations
(re-sort, filter, total), corrected numbers (汇率), and digests of earlier conclusions.

They read only what is visible (the context strategy decides how far back that is), so a
reference or a number that scrolled out of view is asked about, never invented.
"""

from __future__ import annotations

import re

from usersim.adapters.reference.kb import STAY_AREA
from usersim.adapters.reference.planner import Ctx, Done, Handler
from usersim.lang import quantity

_NOUNS = (
    "行李箱",
    "箱子",
    "充电宝",
    "相机",
    "耳机",
    "手机",
    "电脑",
    "笔记本",
    "旅行保险",
    "保险",
    "花费明细",
    "花费报告",
    "报告",
    "销售数据",
    "数据",
    "航班",
    "机票",
    "酒店",
    "行程",
)
_INTRO = re.compile(r"我.{0,8}?(?:买了|看中了|在看|在比较|比较|有一|把|想买|准备了|整理好了|订了|定了|写了)")
_MODEL = re.compile(r"[A-Za-z][A-Za-z0-9\-:]*\d[A-Za-z0-9\-]*|[A-Z][a-z]{3,}|[\u4e00-\u9fa5]{2,3}\s*\d+\s*号")
_ORDINAL = {
    "第一个": 0,
    "第一家": 0,
    "第二个": 1,
    "第二家": 1,
    "第三个": 2,
    "第三家": 2,
    "最后一个": -1,
    "最后一家": -1,
}
_SENT = re.compile(r"(?<=[。！？!?；;\n])")


def sentences(texts: list[str]) -> list[str]:
    return [s.strip(" |") for t in texts for s in _SENT.split(t) if s.strip()]


def list_items(text: str) -> list[str]:
    """The numbered items of a reply ("1. 难波东方酒店：…")."""
    return [m.group(1).strip() for m in re.finditer(r"(?:^|\n|\|)\s*\d+[.、)]\s*([^\n|]+)", text)]


def amounts(text: str) -> list[tuple[str, float]]:
    """("购物", 3000.0) pairs from "购物 3,000 元"."""
    out = []
    for q in quantity.money(text):
        if q.currency != "CNY":
            continue
        label = re.search(r"([\u4e00-\u9fa5A-Za-z]{2,8}?)\s*(?:\d+\s*晚\s*)?[¥￥]?\s*$", text[: q.start])
        if label:
            out.append((label.group(1), q.value))
    return out


class Reference(Handler):
    """ "它/他/那个/这个/第一个/那家X店": resolve from what the user introduced, or ask which one."""

    name = "reference"

    def person(self, ctx: Ctx) -> tuple[str, str] | None:
        for text in reversed(ctx.user_messages[:-1]):
            m = re.search(
                r"(同事|朋友|我妈|我爸|老婆|老公|女朋友|男朋友|孩子)([\u4e00-\u9fa5]{2,3}?)?(?:要|想|说|下周|明天)",
                text,
            )
            if m:
                return (m.group(1) + (m.group(2) or "")), text
        return None

    def thing(self, ctx: Ctx) -> tuple[str, list[str], str] | None:
        """(noun, models named with it, the message) of the newest thing the user introduced."""
        for text in reversed(ctx.user_messages[:-1]):
            if not (_INTRO.search(text) or re.search(r"要飞|飞往|还有.{1,4}件事", text)):
                continue
            last = re.search(
                r"[：:]\s*([^，。]+?)，\s*最后一个", text
            )  # "三件事：订酒店、换日元、买保险，最后一个…"
            if last:
                return last.group(1).split("、")[-1].lstrip("买订换"), [], text
            noun = next((n for n in _NOUNS if n in text), "航班" if re.search(r"要飞|飞往", text) else None)
            models = [m.strip() for m in _MODEL.findall(text) if not re.fullmatch(r"\d+.*", m)]
            if noun or models:
                return noun or models[0], models, text
        return None

    def ordinal(self, ctx: Ctx) -> str | None:
        which = next((v for k, v in _ORDINAL.items() if k in ctx.text), None)
        shop = re.search(r"那家\s*([\u4e00-\u9fa5]{1,3}?)(?:店|馆|餐厅)", ctx.text)
        want_hotel = bool(re.search(r"住|订|酒店|早餐|入住", ctx.text))
        for reply in reversed(ctx.assistant_texts):
            items = list_items(reply)
            if shop:
                key = shop.group(1).replace("螃", "")
                hit = next((i for i in items if key and key in i), None)
                if hit:
                    return hit
            elif which is not None and items and (not want_hotel or any("酒店" in i for i in items)):
                return items[which]
        return None

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        item = self.ordinal(ctx)
        if item:
            stay = next(
                (
                    m.group(1)
                    for t in reversed(ctx.user_messages[:-1])
                    if (m := re.search(r"定了\s*([\u4e00-\u9fa5A-Za-z]{2,12}酒店)", t))
                ),
                None,
            )
            extra = f"你们住的是{stay}，" if stay and "住" in ctx.text else ""
            unknown = (
                "含不含早餐列表里没写，下单时再确认一下。"
                if "早餐" in ctx.text and "早餐" not in item
                else ""
            )
            return f"好的，你说的是：{item}。{extra}{unknown}".rstrip("，")
        if re.search(r"他|她", ctx.text) and (p := self.person(ctx)):
            who, said = p
            city = next((c for c in STAY_AREA if c in said), None)
            stay = f"他在{city}的话，住{STAY_AREA[city]}一带交通最方便。" if city and "住" in ctx.text else ""
            return f"你说的是{who}吧（{said[:30]}）。{stay}"
        found = self.thing(ctx)
        if found is None:
            return "你说的「它」具体指什么？是要订机票、酒店，还是别的东西？告诉我具体是哪个，我马上帮你办。"
        noun, models, said = found
        if len(models) >= 2 and not any(m in ctx.text for m in models):
            return f"你说的是哪一款：{' 还是 '.join(models[:3])}？告诉我具体哪款，我再回答保修等细节。"
        what = f"{noun}（{said[:40]}）"
        topic = re.sub(r"^(它|这个|那个|他|她)(的)?|[？?吗呢]", "", ctx.text).strip("，, ")
        parts = [f"你说的是{what}。"]
        items = [(k, v) for k, v in amounts(said) if not re.search(r"总|合计|一共", k)]
        if items and re.search(r"分析|花得最多|哪块|哪项|最多", ctx.text):
            top = max(items, key=lambda kv: kv[1])
            parts.append(
                f"花费合计 {sum(v for _, v in items):,.0f} 元，其中{top[0]}最多（{top[1]:,.0f} 元）。"
            )
        if "延误" in ctx.text:
            parts.append(
                "如果航班延误，提前打电话告诉酒店会晚到，一般都能保留房间；也可以留意航空公司的延误补偿。"
            )
        if topic and len(parts) == 1:
            parts.append(f"关于「{topic}」，我这边没有这款的具体数据，可以查官方参数或商品详情页确认。")
        return "".join(parts)


class ListOps(Handler):
    """Re-sort, filter or total the list in our previous reply ("按评分从高到低排", "只要 500 元以内的")."""

    name = "listops"

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        source = next((t for t in reversed(ctx.assistant_texts) if len(list_items(t)) >= 2), "")
        items = list_items(source)
        if not items:
            return "我这边没有看到可以排序的列表，能再发一下吗？"

        def value(item: str, key: str) -> float:
            if key == "价格":  # the item's price, however written (¥1,299 / 1299 元 / 680元/晚)
                prices = quantity.money(item)
                return prices[0].value if prices else 0.0
            m = re.search(r"评分\s*([\d.]+)", item)
            return float(m.group(1)) if m else 0.0

        limit = re.search(r"([\d,]+)\s*元?\s*以内", ctx.text)
        if limit:
            cap = float(limit.group(1).replace(",", ""))
            items = [i for i in items if value(i, "价格") <= cap]
        key = "评分" if "评分" in ctx.text else "价格"
        if re.search(r"从高到低|从大到小|降序", ctx.text):
            items.sort(key=lambda i: -value(i, key))
        elif re.search(r"从低到高|从小到大|升序|按.{0,4}排", ctx.text):
            items.sort(key=lambda i: value(i, key))  # a bare "重新排一下" keeps the user's order
        lines = [f"{n}. {i}" for n, i in enumerate(items, 1)]
        if re.search(r"总数|总共|合计|总价|一共", ctx.text):
            lines.append(f"合计 {sum(value(i, '价格') for i in items):,.0f} 元。")
        return "重新整理如下：\n" + "\n".join(lines)


class RateFix(Handler):
    """ "其实汇率是 1:19": redo the earlier conversion with the corrected rate."""

    name = "ratefix"

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        rate = float(re.search(r"1\s*[:：]\s*([\d.]+)", ctx.text).group(1))  # the intent matched this
        yen = None
        for s in reversed(sentences(ctx.assistant_texts)):
            found = [q for q in quantity.money(s) if q.currency == "JPY"]
            if found:
                yen = found[0].value
                break
        if yen is None:
            return f"好的，汇率按 1:{rate:g} 更正。你想换算多少日元？"
        return (
            f"好的，按更正后的汇率 1:{rate:g} 重新计算：{yen / 10000:g} 万日元约合 {yen / rate:,.0f} 元人民币"
            "（之前按旧汇率算的结果不再适用）。"
        )


class Digest(Handler):
    """ "把这几件事的结论汇总一下：A、B、C": the latest thing we said about each."""

    name = "digest"

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        asked = re.split(r"[：:]", ctx.text, maxsplit=1)[-1]
        topics = [t.strip(" 。？?") for t in re.split(r"[、，,]", asked) if t.strip(" 。？?")]
        # conclusions are statements: our replies first, then what the user decided (not their questions)
        said = sentences(ctx.assistant_texts) + [
            s for s in sentences(ctx.user_messages[:-1]) if not re.search(r"[？?]", s)
        ]
        lines = []
        for topic in topics:
            words = (
                (["酒店", "住"] if "住" in topic else [])
                + (["机场", "rapi"] if "机场" in topic else [])
                + [topic[i : i + 2] for i in range(max(len(topic) - 1, 1))]
            )
            hit = next(
                (
                    s
                    for s in reversed(said)
                    if any(w and w in s for w in words) and not s.endswith(("？", "?"))
                ),
                None,
            )
            lines.append(f"- {topic}：{hit if hit else '之前没有定下来'}")
        return "结论汇总：\n" + "\n".join(lines)


def conflict_notes(text: str, user_messages: list[str], assistant_texts: list[str]) -> list[str]:
    """Contradictions between this message and what was said before, stated before answering."""
    notes = []
    cap = re.search(r"(?:控制在|不超过|预算)\s*([\d.]+)\s*万\s*(?:以内|之内)?", text)
    if cap:
        for reply in reversed(assistant_texts):
            wan = [q for q in quantity.quantities(reply) if q.scale == 10000]
            if wan and (wan[0].high or wan[0].value) / 10000 > float(cap.group(1)):
                estimate = wan[0].text
                notes.append(
                    f"注意：之前估算的方案大约要 {estimate}，和 {cap.group(1)} 万以内的预算矛盾，"
                    "要么缩短天数、换成沙屋等更便宜的住宿，要么适当提高预算。"
                )
                break
    limit = next(
        (
            m
            for t in user_messages[:-1]
            if (m := re.search(r"每天最多\s*(?:安排|去|玩)?\s*(\d+|[一两二三四])\s*个", t))
        ),
        None,
    )
    if limit:
        from usersim.adapters.reference.lexicon import cn_number, find_sights

        n, named = int(cn_number(limit.group(1)) or 2), find_sights(text)
        if len(named) > n:
            notes.append(
                f"您之前说过每天最多 {n} 个景点（体力考虑），这次的 {len(named)} 个放在一天会太累，"
                f"和这个约束冲突，我按每天最多 {n} 个分开安排。"
            )
    return notes
