"""The shopping handler: product search with the user's constraints, comparisons, gifts, reviews."""

from __future__ import annotations

import re

from usersim.adapters.reference.lexicon import NUM, cn_number
from usersim.adapters.reference.planner import Call, Ctx, Done, Handler, error_note
from usersim.adapters.reference.render import (
    items_of,
    name_of,
    num,
    pick,
    record_line,
    search_lines,
    violates,
)

CHANNELS = "购买渠道：京东自营或品牌天猫官方旗舰店（正品保障、售后方便）。"


class Products(Handler):
    name = "products"

    def compared(self, ctx: Ctx) -> list[str]:
        """["AirPods Pro 2", "索尼降噪豆"] for "AirPods Pro 2 和索尼降噪豆哪个更值得买"."""
        text = re.sub(r"^(帮我|请|麻烦)?\s*(看看|对比一下|对比|比较一下|比较|查查)?", "", ctx.text.strip())
        m = re.search(
            r"([A-Za-z0-9\u4e00-\u9fa5 ]{2,20}?)\s*(?:和|与|跟|还是|vs\.?|VS)\s*"
            r"([A-Za-z0-9\u4e00-\u9fa5 ]{2,20}?)\s*(?:哪个|哪款|谁|比较|对比|相比)",
            text,
        )
        return [m.group(1).strip(), m.group(2).strip()] if m else []

    def missing(self, ctx: Ctx) -> list[str]:
        s = ctx.slots
        if self.compared(ctx):
            return []
        if not s.product:
            return ["product"]
        if s.product_category == "笔记本电脑":
            need = [k for k, v in (("purpose", s.purpose), ("budget", s.budget)) if not v]
            return need + (["brand"] if need and not (s.brands or s.exclude_brands) else [])
        return []

    def count(self, ctx: Ctx) -> int:
        m = re.search(rf"({NUM})\s*[款个台部]", ctx.text)
        n = cn_number(m.group(1)) if m else None
        return int(n) if n and 0 < n <= 10 else 3

    def constraints(self, ctx: Ctx) -> dict:
        s = ctx.slots
        if "forget-constraints" in ctx.flaws:
            return {"max_price": None, "max_weight": None, "exclude_brands": [], "avoid": []}
        budget = s.budget if s.budget_scope != "per_night" else None
        return {
            "max_price": budget,
            "max_weight": s.max_weight,
            "exclude_brands": list(s.exclude_brands),
            "avoid": [w for w in s.diet_excludes if w == "乳糖"],
        }

    def query(self, ctx: Ctx) -> str:
        if ctx.slots.product == "礼物":  # a gift: search what the person likes
            likes = {
                "摄影": "摄影配件",
                "拍照": "摄影配件",
                "旅行": "旅行箱包",
                "露营": "露营装备",
                "运动": "运动",
            }
            return next((q for k, q in likes.items() if k in ctx.text), "礼物")
        color = re.search(r"([白黑银蓝粉红绿灰金紫])色", ctx.text)
        return f"{ctx.slots.product} {color.group(0)}" if color else str(ctx.slots.product)

    def stages(self, ctx: Ctx, done: list[Done]) -> list[list[Call]]:
        s, c = ctx.slots, self.constraints(ctx)
        items = self.compared(ctx)
        if items and ctx.has("taobao_search_products"):
            return [[("taobao_search_products", {"query": q}) for q in items]]
        if not ctx.has("taobao_search_products"):
            hints = " ".join(re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", " ".join(ctx.images)))
            what = "购买渠道" if re.search(r"哪里.{0,3}买|在哪买|哪儿买", ctx.text) else "推荐"
            return [
                [("web_search", {"query": f"{hints} {self.query(ctx)} {what} {s.purpose or ''}".strip()})]
            ]
        args: dict = {"query": self.query(ctx)}
        if s.product_category and s.product != "礼物":
            args["category"] = s.product_category
        if c["max_price"]:
            args["max_price"] = c["max_price"]
        if c["exclude_brands"]:
            args["exclude_brands"] = c["exclude_brands"]
        if c["max_weight"]:
            args["max_weight_kg"] = c["max_weight"]
        if len(s.brands) == 1:
            args["brand"] = s.brands[0]
        stages = [[("taobao_search_products", args)]]
        first = next((d for d in done if d.call.name == "taobao_search_products"), None)
        if (
            first is not None
            and not first.failed
            and not items_of(first.data)
            and ("category" in args or "brand" in args)
        ):
            # nothing found: search again more broadly, keeping the user's hard limits
            broader = {k: v for k, v in args.items() if k not in ("category", "brand")}
            stages.append([("taobao_search_products", broader)])
        picks = self.picks(ctx, done)
        wants_reviews = re.search(r"评价|口碑|值得|礼物|靠谱", ctx.text) or s.product == "礼物"
        if picks and wants_reviews and ctx.has("taobao_get_product_reviews") and pick(picks[0], "id"):
            stages.append([("taobao_get_product_reviews", {"product_id": pick(picks[0], "id")})])
        return stages

    def picks(self, ctx: Ctx, done: list[Done]) -> list[dict]:
        """Search results that meet the user's constraints, preferred brands first."""
        found = [d for d in done if d.call.name == "taobao_search_products" and not d.failed]
        found = [d for d in found if items_of(d.data)]
        if not found:
            return []
        good = [p for p in items_of(found[-1].data) if not violates(p, **self.constraints(ctx))]
        if ctx.slots.brands:
            good.sort(key=lambda p: not any(b.lower() in str(p).lower() for b in ctx.slots.brands))
        return good[: self.count(ctx)]

    def compare_answer(self, ctx: Ctx, done: list[Done]) -> str:
        rows = []
        for d in done:
            items = items_of(d.data) if d.call.name == "taobao_search_products" and not d.failed else []
            if items:
                rows.append(items[0])
        if len(rows) < 2:
            return f"对比：{error_note(done, '商品搜索') or '没能同时查到两款商品的信息。'}"
        best = max(rows, key=lambda p: (num(pick(p, "rating")) or 0, -(num(pick(p, "price")) or 0)))
        spec_names = {
            "anc": "降噪",
            "battery": "续航",
            "type": "类型",
            "weight": "重量",
            "screen": "屏幕",
            "cpu": "处理器",
            "ram": "内存",
            "camera": "影像",
        }
        lines = []
        for p in rows:
            specs = p.get("specs") if isinstance(p.get("specs"), dict) else {}
            detail = "；".join(f"{spec_names.get(k, k)}：{v}" for k, v in specs.items())
            lines.append(f"- {record_line(p)}" + (f"（{detail}）" if detail else ""))
        diff = abs((num(pick(rows[0], "price")) or 0) - (num(pick(rows[1], "price")) or 0))
        return (
            "对比（价格 / 评分 / 特点）：\n"
            + "\n".join(lines)
            + f"\n两款差价约 ¥{diff:,.0f}。结论：更推荐 {name_of(best)}（评分更高、综合更值），"
            + "按需选择。\n"
            + CHANNELS
        )

    def answer(self, ctx: Ctx, done: list[Done]) -> str:
        if self.compared(ctx):
            return self.compare_answer(ctx, done)
        s, c = ctx.slots, self.constraints(ctx)
        found = [d for d in done if d.call.name == "taobao_search_products" and not d.failed]
        found = [d for d in found if items_of(d.data)] or found
        if not found:
            alt = [ln for d in done if not d.failed for ln in search_lines(d.data)]
            if alt:
                return f"{s.product}推荐（搜索结果）：\n" + "\n".join(f"- {x}" for x in alt) + "\n" + CHANNELS
            return f"{s.product}：{error_note(done, '商品搜索')}可以稍后再试，或告诉我更具体的型号。"
        items = items_of(found[0].data)
        good = [p for p in items if not violates(p, **c)]
        if s.brands:  # stated preferences first, without dropping the rest
            good.sort(key=lambda p: not any(b.lower() in str(p).lower() for b in s.brands))
        if not good:
            return (
                f"按您的条件（{self.describe(ctx)}）没有找到合适的{s.product}，"
                "可以适当放宽预算或条件，我再帮您找。"
            )
        picks = good[: self.count(ctx)]
        lines = [f"{i}. {record_line(p)}" for i, p in enumerate(picks, 1)]
        short = (
            f"（共找到 {len(picks)} 款符合条件的）"
            if len(picks) < self.count(ctx) and "款" in ctx.text
            else ""
        )
        note = ""
        if "乳糖" in c["avoid"]:
            note = "\n考虑到乳糖不耐受，以上都是分离乳清或植物蛋白等低乳糖/无乳糖的选择，普通浓缩乳清蛋白粉不推荐。"
        review = next((d for d in done if d.call.name == "taobao_get_product_reviews" and not d.failed), None)
        if review and isinstance(review.data, dict):
            note += f"\n{name_of(picks[0])} 的买家评价：{pick(review.data, 'summary') or ''}（好评率 {pick(review.data, 'good_rate') or '-'}）"
        return (
            f"{s.product}推荐（{self.describe(ctx)}）{short}：\n"
            + "\n".join(lines)
            + note
            + f"\n推荐型号：{name_of(picks[0])}。\n"
            + CHANNELS
        )

    def describe(self, ctx: Ctx) -> str:
        s, c = ctx.slots, self.constraints(ctx)
        parts = []
        if s.purpose:
            parts.append(f"用途：{s.purpose}")
        if c["max_price"]:
            parts.append(f"{c['max_price']:g} 元以内")
        if c["max_weight"]:
            parts.append(f"{c['max_weight']:g}kg 以内")
        if c["exclude_brands"]:
            parts.append(f"不含{'、'.join(c['exclude_brands'])}")
        return "，".join(parts) or "综合口碑"
