"""taobao_search_products / taobao_get_product_reviews over the product catalog."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from usersim.core.registry import did_you_mean
from usersim.sandbox import catalog
from usersim.sandbox.clock import stable_unit
from usersim.sandbox.tools import Args, ToolContext, ToolError, register
from usersim.sandbox.tools.search import relevance

# Brand spellings users write -> catalog brand (so exclude_brands=["Xiaomi"] also drops Redmi).
_BRAND_ALIASES = {
    "小米": ["xiaomi", "redmi", "红米", "mi"],
    "Apple": ["苹果", "apple", "iphone", "macbook"],
    "三星": ["samsung", "galaxy"],
    "索尼": ["sony"],
    "华为": ["huawei"],
    "联想": ["lenovo"],
    "ThinkPad": ["thinkpad"],
    "OPPO": ["oppo", "欧珀"],
    "荣耀": ["honor"],
    "戴尔": ["dell"],
    "惠普": ["hp"],
    "华硕": ["asus"],
    "一加": ["oneplus"],
    "富士": ["fujifilm", "fuji"],
    "大疆": ["dji"],
}
_SORTS = {
    "price_asc": "price_asc",
    "price": "price_asc",
    "价格升序": "price_asc",
    "price_desc": "price_desc",
    "价格降序": "price_desc",
    "sales": "sales",
    "销量": "sales",
    "rating": "rating",
    "评分": "rating",
    "relevance": "relevance",
    "综合": "relevance",
}
_REVIEW_LINES = {
    "笔记本电脑": [
        "做工扎实，屏幕素质好",
        "续航比宣传略短，日常办公一天够用",
        "写代码很流畅，键盘手感不错",
        "风扇高负载时有噪音",
    ],
    "手机": ["拍照清晰，色彩自然", "电池耐用，一天一充", "系统流畅，字体可以调很大", "有点重，单手握持累"],
    "耳机": [
        "降噪效果明显，地铁上很安静",
        "佩戴舒适，久戴不疼",
        "音质均衡，通透模式自然",
        "第三方店铺谨防假货，建议官方渠道",
    ],
    "蛋白粉": ["溶解性好，不结块", "口味不错，不齁甜", "喝了肠胃没有不适", "价格有点贵，活动时囤货"],
}
_DEFAULT_LINES = [
    "质量很好，和描述一致",
    "物流很快，包装完好",
    "性价比高，推荐购买",
    "用了一段时间，有些小瑕疵",
]


class ProductSearchArgs(Args):
    query: str = Field(description="What to search, e.g. 轻薄笔记本 / 降噪耳机 / 蛋白粉.")
    category: str | None = Field(
        default=None, description="Category, e.g. 笔记本电脑 / 手机 / 耳机 / 蛋白粉."
    )
    min_price: float | None = Field(default=None, ge=0, description="Minimum price, CNY.")
    max_price: float | None = Field(default=None, gt=0, description="Maximum price, CNY.")
    brand: str | None = Field(default=None, description="Only this brand.")
    exclude_brands: list[str] | None = Field(
        default=None, description="Brands to leave out, e.g. ['小米', 'OPPO']."
    )
    max_weight_kg: float | None = Field(default=None, gt=0, description="Maximum weight, kg.")
    sort: str | None = Field(default=None, description="relevance | price_asc | price_desc | sales | rating.")


class ReviewArgs(Args):
    product_id: str = Field(description="Product id from taobao_search_products (a product name also works).")


def _is_brand(product: dict[str, Any], text: str) -> bool:
    want = text.strip().casefold()
    brand = product["brand"]
    names = {brand.casefold(), *(a.casefold() for a in _BRAND_ALIASES.get(brand, []))}
    return want in names or any(want == a for a in names) or want in product["name"].casefold().split()


def _public(p: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in p.items() if k != "aliases"}
    out["url"] = f"https://item.taobao.com/item.htm?id={p['id']}"
    return out


@register(
    "taobao_search_products",
    "Search Taobao products. Filters: category, price range (CNY), brand, exclude_brands, max_weight_kg; sort by "
    "relevance, price_asc, price_desc, sales or rating. Returns id, name, brand, price, weight, specs, shop, rating, "
    "sales (protein powders also carry lactose: 含乳糖 / 低乳糖 / 无乳糖).",
    ProductSearchArgs,
)
def taobao_search_products(args: ProductSearchArgs, ctx: ToolContext) -> dict[str, Any]:
    sort = _SORTS.get((args.sort or "relevance").strip().lower())
    if sort is None:
        raise ToolError(
            f"argument 'sort' must be relevance, price_asc, price_desc, sales or rating; got '{args.sort}'"
        )
    items = catalog.products()
    if args.category:
        items = [p for p in items if args.category in p["category"] or p["category"] in args.category]
    if args.brand:
        items = [p for p in items if _is_brand(p, args.brand)]
    for b in args.exclude_brands or []:
        items = [p for p in items if not _is_brand(p, b)]
    if args.min_price is not None:
        items = [p for p in items if p["price"] >= args.min_price]
    if args.max_price is not None:
        items = [p for p in items if p["price"] <= args.max_price]
    if args.max_weight_kg is not None:
        items = [p for p in items if p.get("weight_kg") is not None and p["weight_kg"] <= args.max_weight_kg]

    def text(p: dict[str, Any]) -> str:
        return " ".join(
            [
                p["name"],
                *p["aliases"],
                p["brand"],
                p["category"],
                *p["tags"],
                p.get("lactose", ""),
                p.get("protein_type", ""),
                *map(str, p["specs"].values()),
            ]
        )

    scored = [(relevance(args.query, text(p)), p) for p in items]
    best = max((s for s, _ in scored), default=0.0)
    filtered = any(
        v is not None for v in (args.category, args.brand, args.max_price, args.min_price, args.max_weight_kg)
    )
    # With explicit filters, a query that matches nothing specific ("推荐", "好用的") does not empty the list.
    hits = [(s, p) for s, p in scored if (s > 0 or (filtered and best == 0)) and s >= best * 0.5]
    key = {
        "relevance": lambda t: (-t[0], -t[1]["sales"]),
        "price_asc": lambda t: t[1]["price"],
        "price_desc": lambda t: -t[1]["price"],
        "sales": lambda t: -t[1]["sales"],
        "rating": lambda t: -t[1]["rating"],
    }[sort]
    results = [_public(p) for _, p in sorted(hits, key=key)[:20]]
    out: dict[str, Any] = {"query": args.query, "total": len(results), "products": results}
    if not results:
        out["message"] = "没有找到符合条件的商品，试试放宽筛选条件"
    return out


@register(
    "taobao_get_product_reviews",
    "Buyer reviews of one Taobao product: average rating, review count, good-review rate, summary and recent reviews.",
    ReviewArgs,
)
def taobao_get_product_reviews(args: ReviewArgs, ctx: ToolContext) -> dict[str, Any]:
    product = next((p for p in catalog.products() if p["id"] == args.product_id), None)
    product = product or catalog.find_by_name("products", args.product_id)
    if product is None:
        ids = {p["id"] for p in catalog.products()}
        raise ToolError(
            f"Unknown product_id '{args.product_id}'.{did_you_mean(args.product_id, ids)} "
            "Use an id returned by taobao_search_products."
        )
    lines = _REVIEW_LINES.get(product["category"], _DEFAULT_LINES)
    reviews = []
    for i, line in enumerate(lines):
        stars = 5 if stable_unit(product["id"], "stars", i) < product["rating"] - 3.9 else 4 if i < 3 else 3
        reviews.append(
            {
                "user": f"tb_{int(stable_unit(product['id'], 'user', i) * 90000) + 10000}",
                "rating": stars,
                "text": line,
            }
        )
    count = int(product["sales"] * 0.3)
    return {
        "product_id": product["id"],
        "name": product["name"],
        "average_rating": product["rating"],
        "review_count": count,
        "good_rate": f"{min(99, int(product['rating'] * 20))}%",
        "summary": f"买家主要好评：{lines[0]}；{lines[1]}。主要差评：{lines[-1]}。",
        "reviews": reviews,
    }
