"""Housing, knowledge and memory handlers: housing, zhihu, trains, visa/search, recall, pointers."""

from __future__ import annotations

import re

from usersim.adapters.reference.lexicon import LANDMARK_CITY, NUM, cn_number
from usersim.adapters.reference.planner import Call, Ctx, Done, Handler, error_note
from usersim.adapters.reference.render import items_of, num, pick, record_line, search_lines
from usersim.lang import quantity


class Housing(Handler):
    name = "housing"

    def args(self, ctx: Ctx) -> dict:
        text = "\n".join(ctx.user_messages)
        args: dict = {"city": ctx.slots.destination or "北京"}
        district = re.findall(
            r"((?:朝阳|海淀|东城|西城|丰台|石景山|通州|昌平|大兴|顺义|浦东|徐汇|静安|黄浦|长宁|普陀|"
            r"虹口|杨浦|闵行|南山|福田|罗湖|天河|越秀|锦江|武侯|青羊|思明)区)",
            text,
        )
        if district:
            args["district"] = district[0]
        rooms = re.findall(r"([两二三四\d])\s*(?:居|室)", text)
        if rooms:
            args["bedrooms"] = int(cn_number(rooms[-1]) or 2)
        wan = [q for q in quantity.quantities(text) if q.scale == 10000 and q.per is None]
        if wan:
            args["max_total_price_wan"] = (wan[-1].high or wan[-1].value) / 10000
        return args

    def communities(self, ctx: Ctx) -> list[str]:
        names = re.findall(
            r"([\u4e00-\u9fa5]{2,6}(?:小区|家园|花园|[一二三四五六七八九十]区|公寓|苑))", ctx.text
        )
        return list(dict.fromkeys(n for n in names if not n.endswith(("朝阳区", "海淀区")) and len(n) > 3))

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        names = self.communities(ctx)
        if names and ctx.has("beike_search_community_detail"):
            city = self.args(ctx)["city"]
            stages = [[("beike_search_community_detail", {"community_name": n, "city": city}) for n in names]]
            empty = [
                d.call.arguments["community_name"]
                for d in done
                if d.call.name == "beike_search_community_detail" and self.no_data(d)
            ]
            if empty and ctx.has("web_search"):  # fill what the listing service lacks from the web
                stages.append([("web_search", {"query": f"{city} {n} 二手房 均价 配套 交通"}) for n in empty])
            return stages
        if ctx.has("beike_search_resale_housing"):
            return [[("beike_search_resale_housing", self.args(ctx))]]
        return [[("web_search", {"query": f"{self.args(ctx)['city']} 二手房"})]]

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        details = [d for d in done if d.call.name == "beike_search_community_detail"]
        if details:
            lines = []
            for d in details:
                lines.append(self.community_line(d))
                name = d.call.arguments.get("community_name", "")
                extra = [
                    ln
                    for w in done
                    if w.call.name == "web_search" and name in w.call.arguments.get("query", "")
                    for ln in search_lines(w.data, 2)
                ]
                if self.no_data(d) and extra:
                    lines.append(f"  {name}（网页搜索补充，部分信息）：" + "；".join(extra))
            return "小区对比（房价 / 周边配套 / 交通）：\n" + "\n".join(lines)
        ok = [d for d in done if not d.failed]
        if not ok:
            return f"二手房：{error_note(done, '房源查询')}"
        items = items_of(ok[0].data)
        lines = [f"{i}. {record_line(x)}" for i, x in enumerate(items[:5], 1)]
        if any(not pick(x, "community_name", "name") for x in items):
            lines.append("注意：部分房源缺少小区名称，数据不完整，我不会据此继续推断小区周边信息。")
        return "二手房房源：\n" + "\n".join(lines or search_lines(ok[0].data))

    @staticmethod
    def no_data(d: Done) -> bool:
        data = d.data if isinstance(d.data, dict) else {}
        return d.failed or not any(
            pick(data, k) for k in ("avg_price_per_sqm", "nearby_amenities", "subway_distance")
        )

    @staticmethod
    def community_line(d: Done) -> str:
        name = d.call.arguments.get("community_name")
        data = d.data if isinstance(d.data, dict) else {}
        if d.failed or not data:
            return f"- {name}：查询失败，信息缺失。"
        fields = {
            "房价": pick(data, "avg_price_per_sqm", "unit_price"),
            "配套": pick(data, "nearby_amenities", "amenities"),
            "交通": pick(data, "subway_distance", "transport"),
        }
        known = [
            f"{k} {v if not isinstance(v, list) else '、'.join(map(str, v))}" for k, v in fields.items() if v
        ]
        missing = [k for k, v in fields.items() if not v]
        gap = f"；缺失：{'、'.join(missing)}（数据暂未收录）" if missing else ""
        return f"- {name}：{'；'.join(known) or '暂无数据'}{gap}"


class Zhihu(Handler):
    name = "zhihu"

    def query(self, ctx: Ctx) -> str:
        topic = ""
        for text in ctx.user_messages:
            m = re.search(
                r"知乎上?(?:找|搜|看)(?:一些|一下)?([\u4e00-\u9fa5A-Za-z0-9]+?)(?:的经验|的分享|经验|分享|内容|$)",
                text,
            )
            if m:
                topic = m.group(1)
        extra = [w for w in ("新手", "入门", "训练计划", "半马") if any(w in t for t in ctx.user_messages)]
        return " ".join(dict.fromkeys([topic or ctx.text[:20], *extra]))

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        stages: list[list[Call]] = [[("zhihu_search", {"query": self.query(ctx)})]]
        first = next((d for d in done if d.call.name == "zhihu_search" and not d.failed), None)
        if first:
            items = items_of(first.data)
            top = max(
                items,
                key=lambda x: num(pick(x, "votes", "voteup_count", "likes", "upvotes")) or 0,
                default=None,
            )
            if top and pick(top, "article_id", "id"):
                stages.append([("zhihu_get_article_detail", {"article_id": pick(top, "article_id", "id")})])
        return stages

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        detail = next((d for d in done if d.call.name == "zhihu_get_article_detail" and not d.failed), None)
        search = next((d for d in done if d.call.name == "zhihu_search" and not d.failed), None)
        if not search:
            return f"知乎：{error_note(done, '知乎搜索')}"
        text = f"知乎上「{self.query(ctx)}」的高赞回答：\n" + "\n".join(
            f"- {x}" for x in search_lines(search.data)
        )
        if detail:
            body = (
                pick(detail.data, "content", "summary", "text")
                if isinstance(detail.data, dict)
                else detail.data
            )
            text += f"\n最高赞回答详情：{str(body)[:300]}"
        return text


class Trains(Handler):
    name = "trains"

    def missing(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        return [k for k, v in (("origin", s.origin), ("destination", s.destination)) if not v]

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        s = ctx.slots
        day = (s.start or ctx.today).isoformat()
        if ctx.has("search_trains"):
            return [
                [
                    (
                        "search_trains",
                        {
                            "origin": s.origin,
                            "destination": s.destination,
                            "date": day,
                            "passengers": s.party or 1,
                        },
                    )
                ]
            ]
        return [[("web_search", {"query": f"{day} {s.origin} 到 {s.destination} 高铁票"})]]

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        ok = [d for d in done if not d.failed]
        if not ok:
            return f"车票：{error_note(done, '车票查询')}"
        items = items_of(ok[0].data)
        lines = [f"{i}. {record_line(x)}" for i, x in enumerate(items[:5], 1)] or search_lines(ok[0].data)
        return f"{ctx.slots.origin} → {ctx.slots.destination} 车次：\n" + "\n".join(lines)


class Search(Handler):
    """General questions (visa, exhibitions, comparisons): one web_search, then the top results."""

    name = "search"

    def __init__(self, topic: str = "") -> None:
        self.topic = topic

    def query(self, ctx: Ctx) -> str:
        if self.topic == "visa":
            place = ctx.slots.destination or ctx.slots.country or ""
            return f"{place} 签证 政策".strip()
        if ctx.images and re.search(r"这|图|照片|截图", ctx.text):
            return f"{ctx.images[0][:40]} {ctx.text}".strip()  # "这是哪里" is about the picture
        return re.sub(r"^(帮我|请|麻烦)?(搜一下|查一下|看看|查查|搜搜)?", "", ctx.text).strip() or ctx.text

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        return [[("web_search", {"query": self.query(ctx)})]] if ctx.has("web_search") else []

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        label = "签证" if self.topic == "visa" else "搜索结果"
        wanted = re.search(rf"({NUM})\s*[个家座处]", ctx.text)
        n = int(cn_number(wanted.group(1)) or 0) if wanted else 0
        lines = [ln for d in done if not d.failed for ln in search_lines(d.data, max(3, n))]
        if n and lines and len(lines) < n:
            lines.append(f"（只找到 {len(lines)} 个，少于您要的 {n} 个，可以告诉我偏好我再补充。）")
        seen = ""
        if ctx.images and re.search(r"这|图|照片|截图", ctx.text):
            sight = next((p for p in LANDMARK_CITY if p in ctx.images[0]), None)
            seen = (
                f"图片里是{LANDMARK_CITY[sight]}的{sight}。" if sight else f"图片内容：{ctx.images[0][:60]}。"
            ) + "\n"
        if lines:
            return seen + f"{label}（{self.query(ctx)[:30]}）：\n" + "\n".join(f"- {x}" for x in lines)
        return f"{label}：{error_note(done, '搜索') or '暂时没有找到相关信息。'}"


class Recall(Handler):
    """Questions about what the user said or what was recommended before, answered from what is
    visible (conversation and memory) — never invented: what scrolled out of view is admitted."""

    name = "recall"
    FACTS = {
        "name": (r"名字|叫什么", r"我叫\s*([\u4e00-\u9fa5A-Za-z]{2,4}?)(?:[，,。！!\s]|$)", "你叫{}"),
        "place": (
            r"在哪.{0,3}(?:工作|上班)|哪里工作|在哪个城市",
            r"在\s*([\u4e00-\u9fa5]{2,4}?)\s*(?:工作|上班)",
            "在{}工作",
        ),
        "job": (
            r"做什么|职业|干什么|什么工作",
            r"(?:做|是一名|是个|是一个|当)\s*([\u4e00-\u9fa5A-Za-z]{2,8}?(?:工程师|经理|老师|医生|设计师|程序员|学生|产品|运营|测试))",
            "是{}",
        ),
    }

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        titles = [t for line in ctx.memory for t in re.findall(r"《[^》]+》", line)]
        if titles and re.search(r"推荐|书|叫什么来着", ctx.text):
            return f"上次推荐的是{titles[-1]}。"
        sources = ctx.memory + ctx.user_messages[:-1]
        said, forgot = [], []
        for key, (asked, pattern, template) in self.FACTS.items():
            if not re.search(asked, ctx.text):
                continue
            value = next(
                (
                    m.group(1)
                    for text in reversed(sources)
                    if (m := re.search(pattern, text)) and not re.search(r"哪|什么", m.group(1))
                ),
                None,
            )
            (said if value else forgot).append(template.format(value) if value else key)
        if said or forgot:
            reply = ("记得：" + "，".join(said) + "。") if said else ""
            if forgot:
                reply += "抱歉，其余的我这边已经看不到了，能再告诉我一下吗？"
            return reply
        return self.recall_topic(ctx, sources)

    def recall_topic(self, ctx: Ctx, sources: list[str]) -> str:
        topic = re.sub(
            r"你还记得|还记得|记不记得|(刚才|之前|前面)(说|算|提)的|来着|是多少|是什么|吗|呢|？|\?|好了|回到\S{1,3}[，,]",
            "",
            ctx.text,
        ).strip("，, 。")
        words = [
            w
            for w in re.findall(r"[\u4e00-\u9fa5A-Za-z]{2}", topic)
            if w not in ("最后", "多少", "什么", "我们")
        ]
        if "总数" in topic or "总共" in topic:
            words = ["合计", "总预算", "总共", "总计"] + words
        said = [
            s.strip(" |")
            for t in ctx.assistant_texts + sources
            for s in re.split(r"(?<=[。！？；\n])", t)
            if s.strip()
        ]
        advice = [s for s in reversed(said) if any(w in s for w in words)]
        if re.search(r"建议|推荐", ctx.text):
            advice = [s for s in advice if re.search(r"推荐|建议|旗舰店|买", s)] or advice
        if advice:
            return "记得，之前说的是：" + " ".join(dict.fromkeys(a[:90] for a in advice[:2]))
        term = next((w for w in re.findall(r"[\u4e00-\u9fa5]{1,3}区|[\u4e00-\u9fa5]{2,4}", topic)), topic)
        similar = sorted({m for t in sources for m in re.findall(r"[\u4e00-\u9fa5]{2}区", t)} - {term})
        also = f"，只提供了{'、'.join(similar)}的信息" if similar else ""
        return f"你之前没有提到{term}{also}，能补充一下吗？"
